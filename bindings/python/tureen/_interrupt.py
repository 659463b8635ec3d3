"""Ctrl-C during a long library call.

Python runs its SIGINT handler only between bytecodes, so while the main
thread is inside a library call (a sync, a long query) a Ctrl-C waits for
the call to end. :func:`on_ctrl_c` makes it act at once: Python's C-level
handler writes the signal's number to the wakeup fd, a watcher thread reads
it and calls ``stop`` (cancel the sync, interrupt the query); the call then
returns promptly and Python raises the KeyboardInterrupt as usual.

One watcher thread per process serves every call, waiting on its pipe
between them. A thread per call cost each query its start and a join that
waited for the thread's next poll: about 50 ms on a call of 50 us.

A Ctrl-C belongs to the call it arrived in. The outermost call, ending,
stops Python writing to the pipe and then, holding the watcher's lock,
empties it: a byte the watcher has not yet read (it may wait for the GIL
until the next call has begun) is dropped, never taken for the next call's.

While a call runs, Python's SIGINT handler is :func:`_on_sigint`, which
raises nothing: the library calls Python back on this thread (progress
reports, callback targets, log lines), and a KeyboardInterrupt raised there
would unwind into C. Where it landed before the trampoline's ``try``, ctypes
printed "Exception ignored" and dropped it, and the call raised the cancel's
CancelledError. The handler notes the Ctrl-C on the call instead, which
raises KeyboardInterrupt as it ends. Inside the caller's own code that the
library calls back (:class:`in_python_code`) it raises, as usual, and the
sync call raises it once the library returns.

Only on the main thread, with Python's default SIGINT handler, and when no
one else (asyncio, say) owns the wakeup fd: otherwise nothing changes.
On any thread, a call run for an asyncio task (:mod:`tureen.aio`) hands its
stop to the task's cancel.
"""

from __future__ import annotations

import importlib
import os
import select
import signal
import threading
import weakref
from typing import Any, Callable, List, Optional

from ._cancel_scope import CancelScope, current_scope

__all__ = ["in_python_code", "on_ctrl_c"]


class _Watcher:
    """The process's watcher: its pipe, and the stop of the call under way
    (innermost last: a call made from inside another, by a callback)."""

    def __init__(self) -> None:
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.read_fd, False)  # emptied by the ending call too
        os.set_blocking(self.write_fd, False)  # the signal handler must never block
        # Held while bytes are read and acted on, by the watcher or by the
        # call that empties the pipe as it ends.
        self.reading = threading.Lock()
        # Appended and popped by the main thread; read by the watcher under
        # `reading`.
        self.stops: List[Optional[Callable[[], None]]] = []
        # The outermost call under way, if any: a call that finds the fd
        # still set while no owner lives is not nested but outermost.
        self.owner: Optional["weakref.ReferenceType[on_ctrl_c]"] = None
        # Main thread only: the calls under way and, as None, the caller's
        # code they call back (innermost last). The top decides what
        # _on_sigint does.
        self.frames: List[Optional[on_ctrl_c]] = []
        try:
            threading.Thread(target=self._watch, name="tureen-ctrl-c", daemon=True).start()
        except RuntimeError:  # the interpreter is shutting down (a close from __del__)
            self.close()
            raise

    def _watch(self) -> None:
        while True:
            select.select([self.read_fd], [], [])
            with self.reading:
                signals = self.take()
                stop = self.stops[-1] if self.stops else None
                if signal.SIGINT not in signals or stop is None:
                    continue
                try:
                    stop()
                except BaseException:  # noqa: B902 - the call ends anyway, or the user presses again
                    pass

    def take(self) -> bytes:
        """What the pipe holds now (b"" when empty)."""
        try:
            return os.read(self.read_fd, 512)
        except BlockingIOError:
            return b""

    def close(self) -> None:
        os.close(self.read_fd)
        os.close(self.write_fd)


# The handler as the interpreter holds it. signal.getsignal turns it into
# an enum member when it can, by trying and catching an exception, which
# cost more than the rest of a call's Ctrl-C handling together.
# signal.signal does the same dance: 13 us for the two a call makes, against
# 0.8 us for _signal's.
try:
    _handler: Callable[[int], object] = importlib.import_module("_signal").getsignal
    _set_handler: Callable[[int, Callable[[int, Any], None]], object] = importlib.import_module("_signal").signal
except (ImportError, AttributeError):  # an interpreter without CPython's module
    _handler = signal.getsignal
    _set_handler = signal.signal

_watcher: Optional[_Watcher] = None
_watcher_lock = threading.Lock()


def _process_watcher() -> _Watcher:
    """This process's watcher, started on first use."""
    global _watcher
    watcher = _watcher
    if watcher is not None:
        return watcher
    with _watcher_lock:
        if _watcher is None:
            _watcher = _Watcher()
        return _watcher


def _on_sigint(signum: int, frame: Any) -> None:
    """Python's SIGINT handler while a call runs on the main thread."""
    watcher = _watcher
    top = watcher.frames[-1] if watcher is not None and watcher.frames else None
    if top is None:
        raise KeyboardInterrupt  # the caller's code: as default_int_handler
    top.interrupted = True


def _forget_after_fork() -> None:
    """In a child made by fork: the parent's watcher thread is gone, and its
    pipe is shared with the parent, whose watcher would act on the child's
    Ctrl-C. The child lets go of it and starts its own on its next call."""
    global _watcher
    watcher, _watcher = _watcher, None
    if watcher is None:
        return
    if _handler(signal.SIGINT) is _on_sigint:
        # Forked by another thread during a call, which will not end here.
        try:
            _set_handler(signal.SIGINT, signal.default_int_handler)
        except ValueError:
            pass
    try:
        previous = signal.set_wakeup_fd(-1)
    except ValueError:
        return  # the fd may still point at the pipe: it stays open
    if previous not in (-1, watcher.write_fd):
        signal.set_wakeup_fd(previous)  # someone else's: leave it alone
    watcher.close()


os.register_at_fork(after_in_child=_forget_after_fork)


class on_ctrl_c:  # noqa: N801 - used as a function: ``with on_ctrl_c(stop):``
    """Runs ``stop()`` on a Ctrl-C that arrives inside the ``with`` block,
    and raises KeyboardInterrupt as the block ends. Without ``stop``, the
    call runs to its end first, as it would without this; only the
    KeyboardInterrupt is kept from the library's callbacks (a log line).

    A class rather than a generator: it wraps every short query, and a
    generator's context manager cost a few microseconds more per call."""

    __slots__ = ("_stop", "_watcher", "_outermost", "_depth", "interrupted", "_scope", "__weakref__")

    def __init__(self, stop: Optional[Callable[[], None]] = None) -> None:
        self._stop = stop
        self._watcher: Optional[_Watcher] = None
        self._outermost = False
        self._depth = 0
        #: Set by _on_sigint: a Ctrl-C arrived while no Python code of the
        #: caller's ran.
        self.interrupted = False
        self._scope: Optional[CancelScope] = None

    def __enter__(self) -> None:
        if self._stop is not None:
            # An asyncio task's call on a worker thread: its cancel stops
            # the call as a Ctrl-C would.
            scope = current_scope()
            if scope is not None:
                scope.enter(self._stop)
                self._scope = scope
        if threading.current_thread() is not threading.main_thread():
            return
        handler = _handler(signal.SIGINT)
        if handler is not signal.default_int_handler and handler is not _on_sigint:
            return
        try:
            watcher = _process_watcher()
            previous = signal.set_wakeup_fd(watcher.write_fd, warn_on_full_buffer=False)
        except (ValueError, RuntimeError):
            return  # not allowed here, or too late
        owner = watcher.owner() if watcher.owner is not None else None
        if previous == watcher.write_fd and owner is not None:
            watcher.stops.append(self._stop)  # a call from inside the owner's
        elif previous == -1 or previous == watcher.write_fd:
            # The outermost call. Something left by an earlier call that a
            # Ctrl-C ended inside this bookkeeping (the fd still ours, with
            # no owner alive, or stops not taken back) is dropped.
            if previous != -1 or watcher.stops:
                with watcher.reading:
                    while watcher.take():
                        pass
                    watcher.stops.clear()
            watcher.stops.append(self._stop)
            watcher.owner = weakref.ref(self)
            watcher.frames.clear()
            self._outermost = True
        else:
            signal.set_wakeup_fd(previous)  # someone else's: leave it alone
            return
        self._depth = len(watcher.frames)
        watcher.frames.append(self)
        if handler is not _on_sigint:
            _set_handler(signal.SIGINT, _on_sigint)
        self._watcher = watcher

    def __exit__(self, exc_type: Optional[type], *exc: object) -> None:
        if self._scope is not None and self._stop is not None:
            self._scope.exit(self._stop)
        watcher = self._watcher
        if watcher is None:
            return
        if self._outermost:
            signal.set_wakeup_fd(-1)
            watcher.owner = None
        with watcher.reading:
            if self._outermost:
                while watcher.take():
                    pass
                watcher.stops.clear()
            elif watcher.stops:
                watcher.stops.pop()
        if self._outermost:
            # Last: until here a Ctrl-C is noted, not raised in the middle.
            _set_handler(signal.SIGINT, signal.default_int_handler)
        del watcher.frames[self._depth:]
        if self.interrupted and not (exc_type is not None and issubclass(exc_type, KeyboardInterrupt)):
            raise KeyboardInterrupt


class in_python_code:  # noqa: N801 - used as a function, as on_ctrl_c
    """Marks the caller's code that a call under way calls back (a progress
    function, a callback target's function): a Ctrl-C raises
    KeyboardInterrupt in it, as it would outside the call."""

    __slots__ = ("_frames", "_depth")

    def __init__(self) -> None:
        self._frames: Optional[List[Optional[on_ctrl_c]]] = None
        self._depth = 0

    def __enter__(self) -> None:
        watcher = _watcher
        if watcher is None or not watcher.frames or threading.current_thread() is not threading.main_thread():
            return
        self._frames = watcher.frames
        self._depth = len(self._frames)
        self._frames.append(None)

    def __exit__(self, *exc: object) -> None:
        if self._frames is not None:
            del self._frames[self._depth:]
