"""Soup listeners, live queries and change iterators (the header's "Events").

The library calls back on a thread of its own, one per store; ctypes takes
the GIL for each call. Python callables are kept here, under an integer key
that travels through the library as ``ctx``; the library's ``free_ctx`` drops
the key exactly once. A callable that raises is logged through
:mod:`logging` (logger ``"tureen"``) and never reaches the library. At
interpreter shutdown every listener still registered is removed first, so no
callback runs into a finalizing interpreter.
"""

from __future__ import annotations

import atexit
import itertools
import json
import logging
import queue
import sys
import threading
from types import TracebackType
from typing import Any, Callable, Dict, Iterator, Optional, Type

from ._library import EventFn, FreeCtxFn, ListenerHandle, check, lib

__all__ = ["Listener", "Changes", "Change", "EventCallable", "FREE_CTX"]

#: A change event: ``{"soup", "created", "updated", "deleted", "origin",
#: "cleared"}`` (plus ``"altered"`` / ``"dropped"`` when true).
Change = Dict[str, Any]
#: What a listener calls: the decoded event (a change dict, or a live
#: query's page as a list).
EventCallable = Callable[[Any], None]

log = logging.getLogger("tureen")

_lock = threading.Lock()
_callables: Dict[int, EventCallable] = {}
_live: Dict[int, "Listener"] = {}
_keys = itertools.count(1)


def _event_trampoline(ctx: Optional[int], text: Optional[bytes]) -> None:
    try:
        if sys.is_finalizing():
            return
        with _lock:
            fn = _callables.get(ctx or 0)
        if fn is None or text is None:
            return
        fn(json.loads(text.decode("utf-8")))
    except BaseException:  # noqa: B902 - nothing may unwind into C
        try:
            log.exception("a tureen listener callback raised")
        except BaseException:  # noqa: B902 - logging itself may fail at shutdown
            pass


def _free_ctx_trampoline(ctx: Optional[int]) -> None:
    try:
        with _lock:
            _callables.pop(ctx or 0, None)
    except BaseException:  # noqa: B902 - nothing may unwind into C
        pass


_EVENT = EventFn(_event_trampoline)
#: The free_ctx every listener registration passes.
FREE_CTX = FreeCtxFn(_free_ctx_trampoline)


class Listener:
    """A registered soup listener or live query.

    Use it as a context manager, or call :meth:`remove`. Removing waits for a
    callback in flight (except from inside that callback); afterwards the
    callable is never called again. Closing the store removes it too.
    """

    def __init__(self, register: Callable[[Any, int, Any], int], fn: EventCallable) -> None:
        """Internal: use :meth:`tureen.Store.listen` or :meth:`tureen.Store.live_query`.

        ``register(event_fn, key, handle)`` performs the C registration
        (passing :data:`FREE_CTX`) and returns its status; ``handle``
        receives the listener handle.
        """
        if not callable(fn):
            raise TypeError("the callback must be callable, not %s" % type(fn).__name__)
        self._handle: Optional[Any] = ListenerHandle()
        key = next(_keys)
        with _lock:
            _callables[key] = fn
        try:
            check(register(_EVENT, key, self._handle))
        except BaseException:
            with _lock:
                _callables.pop(key, None)  # not registered: free_ctx will not come
            self._handle = None
            raise
        self._key = key
        with _lock:
            _live[key] = self

    @property
    def active(self) -> bool:
        """Whether :meth:`remove` has not been called yet."""
        return self._handle is not None

    def remove(self) -> None:
        """Removes the listener; removing twice does nothing."""
        with _lock:
            handle, self._handle = self._handle, None
            _live.pop(self._key, None)
        if handle is not None:
            rc = lib.tureen_listener_remove(handle)
            # A listener whose store was closed is already gone: nothing to do.
            if rc not in (0, 1):
                check(rc)

    def __enter__(self) -> "Listener":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.remove()

    def __repr__(self) -> str:
        return "<tureen.Listener %s>" % ("active" if self.active else "removed")


class Changes:
    """An iterator over a soup's change events, fed by a listener through a
    queue: ``for change in store.events("contacts", timeout=5): ...``.

    Iteration ends when no event arrives within ``timeout`` seconds (None:
    wait for ever) or once :meth:`close` was called. A context manager.
    """

    def __init__(self, listen: Callable[[EventCallable], Listener], timeout: Optional[float]) -> None:
        self._queue: "queue.Queue[Change]" = queue.Queue()
        self._timeout = timeout
        self._listener = listen(self._queue.put)

    def __iter__(self) -> Iterator[Change]:
        return self

    def __next__(self) -> Change:
        if not self._listener.active and self._queue.empty():
            raise StopIteration
        try:
            return self._queue.get(timeout=self._timeout)
        except queue.Empty:
            raise StopIteration from None

    def close(self) -> None:
        """Stops listening; events already queued can still be read."""
        self._listener.remove()

    def __enter__(self) -> "Changes":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()


@atexit.register
def _remove_all() -> None:
    """No library thread may call into Python once it is finalizing."""
    with _lock:
        listeners = list(_live.values())
    for listener in listeners:
        try:
            listener.remove()
        except BaseException:  # noqa: B902 - shutting down: best effort
            pass

