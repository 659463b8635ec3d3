"""One sync call in progress: how its progress reports reach Python, and
how what Python raises meanwhile comes back out once the C call returns.

ctypes keeps a callback's machine code alive only as long as its Python
object, so the progress callback is created once, here, and lives as long as
the module; its ``ctx`` is a key into a table of the calls in progress, never
a pointer to a Python object.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from ._interrupt import in_python_code
from ._library import ProgressFn, lib
from .sync import SyncState

__all__ = ["ProgressCallable", "SyncCall", "cancel_calls_on", "current_call", "sync_call", "PROGRESS"]

#: A progress callable: gets the sync state after each page or batch and at
#: the end.
ProgressCallable = Callable[[SyncState], Any]


class SyncCall:
    """One sync call in progress on a thread: the user's progress callable
    and what Python raised during the call, so that it is raised after the
    call returns instead of crossing into C."""

    def __init__(self, handle: Any, progress: Optional[ProgressCallable], ref: Optional[bytes] = None) -> None:
        self.handle = handle
        self.progress = progress
        #: The id or name the call was given, if any: a cancel can name the
        #: sync before its first report (a call waiting for another sync of
        #: its soup reports nothing until it runs).
        self.ref = ref
        #: The first exception a progress callable raised, or a
        #: KeyboardInterrupt (or other BaseException) in a target callable:
        #: raised once the call returns.
        self.error: Optional[BaseException] = None
        #: The first unexpected exception of a target callable (a bug in it):
        #: chained to the error the sync ends with.
        self.host_error: Optional[BaseException] = None
        self._cancel_sent = False
        #: The sync's id, from its first report (a cancel needs it).
        self.sync_id: Optional[int] = None
        self._cancel_wanted = False

    def cancel(self) -> None:
        """Ctrl-C (from the watcher thread), or the close of its store:
        cancel the sync now if its id or name is known, else at its first
        report."""
        self._cancel_wanted = True
        if self._cancel_sent:
            return
        if self.sync_id is not None:
            self._cancel_sent = True
            lib.tureen_sync_cancel(self.handle, str(self.sync_id).encode("ascii"))
        elif self.ref is not None:
            # Not final: sent before the library knows the sync (it is still
            # being set up) it does nothing, so the first report sends the
            # cancel again, by id.
            lib.tureen_sync_cancel(self.handle, self.ref)

    def on_progress(self, state_json: Optional[bytes]) -> None:
        state: Optional[SyncState] = None
        if self.sync_id is None and state_json is not None:
            try:
                self.sync_id = json.loads(state_json.decode("utf-8")).get("_soupEntryId")
            except (ValueError, AttributeError):
                pass
            if self._cancel_wanted:
                self.cancel()
        if self.error is None and self.progress is not None and state_json is not None:
            try:
                state = json.loads(state_json.decode("utf-8"))
                with in_python_code():
                    self.progress(state)
            except BaseException as exc:  # noqa: B902 - nothing may unwind into C
                self.error = exc
        if self.error is not None and not self._cancel_sent:
            # The caller's code failed: stop the sync at its next page or
            # batch (it saves what it has; a resync continues it) rather than
            # let it run to the end unobserved.
            self._cancel_sent = True
            if state is None and state_json is not None:
                try:
                    state = json.loads(state_json.decode("utf-8"))
                except ValueError:
                    state = None
            sync_id = state.get("_soupEntryId") if isinstance(state, dict) else None
            if isinstance(sync_id, int):
                lib.tureen_sync_cancel(self.handle, str(sync_id).encode("ascii"))


_keys = itertools.count(1)  # ctx values; 0 would be NULL
_calls: Dict[int, SyncCall] = {}
_thread_calls = threading.local()  # .stack: the SyncCall of each nested call


def cancel_calls_on(handle: Any) -> None:
    """Cancels every sync call in progress on ``handle`` (its store is
    closing: they stop at their next request instead of keeping close
    waiting for the server)."""
    for call in list(_calls.values()):
        if call.handle is handle:
            call.cancel()


def current_call() -> Optional[SyncCall]:
    """The innermost sync call running on this thread, if any (a callback
    target's callable runs inside one)."""
    stack: List[SyncCall] = getattr(_thread_calls, "stack", [])
    return stack[-1] if stack else None


@contextlib.contextmanager
def sync_call(handle: Any, progress: Optional[ProgressCallable],
              ref: Optional[bytes] = None) -> Iterator[Tuple[SyncCall, int]]:
    """Registers a call on ``handle`` (of the sync ``ref`` names, if given)
    for the duration of the block; yields it and the ``ctx`` to pass with
    :data:`PROGRESS`."""
    stack: List[SyncCall] = _thread_calls.__dict__.setdefault("stack", [])
    call = SyncCall(handle, progress, ref)
    key = next(_keys)
    _calls[key] = call
    stack.append(call)
    try:
        yield call, key
    finally:
        stack.pop()
        del _calls[key]


def _progress_trampoline(ctx: Optional[int], state_json: Optional[bytes]) -> None:
    try:
        call = _calls.get(ctx or 0)
        if call is not None:
            call.on_progress(state_json)
    except BaseException:  # noqa: B902 - nothing may unwind into C
        pass


#: The progress function every sync call passes to the library.
PROGRESS = ProgressFn(_progress_trampoline)
