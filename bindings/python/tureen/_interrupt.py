"""Ctrl-C during a long library call.

Python runs its SIGINT handler only between bytecodes, so while the main
thread is inside a library call (a sync, a long query) a Ctrl-C waits for
the call to end. :func:`on_ctrl_c` makes it act at once: Python's C-level
handler writes the signal's number to the wakeup fd, a watcher thread reads
it and calls ``stop`` (cancel the sync, interrupt the query); the call then
returns promptly and Python raises the KeyboardInterrupt as usual.

One watcher thread per process serves every call, blocked on its pipe
between them. A thread per call cost each query its start and a join that
waited for the thread's next poll: about 50 ms on a call of 50 us.

Only on the main thread, with Python's default SIGINT handler, and when no
one else (asyncio, say) owns the wakeup fd: otherwise nothing changes.
"""

from __future__ import annotations

import importlib
import os
import signal
import threading
from typing import Callable, List, Optional

__all__ = ["on_ctrl_c"]


class _Watcher:
    """The process's watcher: its pipe, and the stop of the call under way
    (innermost last: a call made from inside another, by a callback)."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.read_fd, self.write_fd = os.pipe()
        os.set_blocking(self.write_fd, False)  # the signal handler must never block
        # Appended and popped by the main thread only; the watcher reads the
        # last, and a list's append, pop and indexing are atomic.
        self.stops: List[Callable[[], None]] = []
        threading.Thread(target=self._watch, name="tureen-ctrl-c", daemon=True).start()

    def _watch(self) -> None:
        while True:
            signals = os.read(self.read_fd, 64)
            if signal.SIGINT not in signals:
                continue
            try:
                stop = self.stops[-1]
            except IndexError:
                continue  # the call ended before its Ctrl-C was read
            try:
                stop()
            except BaseException:  # noqa: B902 - the call ends anyway, or the user presses again
                pass


# The handler as the interpreter holds it. signal.getsignal turns it into
# an enum member when it can, by trying and catching an exception, which
# cost more than the rest of a call's Ctrl-C handling together.
try:
    _handler: Callable[[int], object] = importlib.import_module("_signal").getsignal
except (ImportError, AttributeError):  # an interpreter without CPython's module
    _handler = signal.getsignal

_watcher: Optional[_Watcher] = None
_watcher_lock = threading.Lock()


def _process_watcher() -> _Watcher:
    """This process's watcher, started on first use. A child made by fork
    has the parent's pipe but not its thread: it starts its own."""
    global _watcher
    watcher = _watcher
    if watcher is not None and watcher.pid == os.getpid():
        return watcher
    with _watcher_lock:
        if _watcher is None or _watcher.pid != os.getpid():
            _watcher = _Watcher()
        return _watcher


class on_ctrl_c:  # noqa: N801 - used as a function: ``with on_ctrl_c(stop):``
    """Runs ``stop()`` on a Ctrl-C that arrives inside the ``with`` block.

    A class rather than a generator: it wraps every short query, and a
    generator's context manager cost a few microseconds more per call."""

    __slots__ = ("_stop", "_watcher", "_outermost")

    def __init__(self, stop: Callable[[], None]) -> None:
        self._stop = stop
        self._watcher: Optional[_Watcher] = None
        self._outermost = False

    def __enter__(self) -> None:
        if (threading.current_thread() is not threading.main_thread()
                or _handler(signal.SIGINT) is not signal.default_int_handler):
            return
        watcher = _process_watcher()
        try:
            previous = signal.set_wakeup_fd(watcher.write_fd, warn_on_full_buffer=False)
        except ValueError:
            return  # not allowed here
        if previous != -1 and previous != watcher.write_fd:
            signal.set_wakeup_fd(previous)  # someone else's: leave it alone
            return
        self._outermost = previous == -1
        watcher.stops.append(self._stop)
        self._watcher = watcher

    def __exit__(self, *exc: object) -> None:
        watcher = self._watcher
        if watcher is None:
            return
        watcher.stops.pop()
        if self._outermost:
            signal.set_wakeup_fd(-1)
