"""Ctrl-C during a long library call.

Python runs its SIGINT handler only between bytecodes, so while the main
thread is inside a library call (a sync, a long query) a Ctrl-C waits for
the call to end. :func:`on_ctrl_c` makes it act at once: Python's C-level
handler writes the signal's number to the wakeup fd, a watcher thread reads
it and calls ``stop`` (cancel the sync, interrupt the query); the call then
returns promptly and Python raises the KeyboardInterrupt as usual.

Only on the main thread, with Python's default SIGINT handler, and when no
one else (asyncio, say) owns the wakeup fd: otherwise nothing changes.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
from typing import Callable, Iterator

__all__ = ["on_ctrl_c"]


@contextlib.contextmanager
def on_ctrl_c(stop: Callable[[], None]) -> Iterator[None]:
    """Runs ``stop()`` on a Ctrl-C that arrives inside the ``with`` block."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    r, w = os.pipe()
    os.set_blocking(w, False)
    try:
        previous = signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    except ValueError:
        previous = -2  # not allowed here
    if previous != -1:
        if previous >= 0:
            signal.set_wakeup_fd(previous)  # someone else's: leave it alone
        os.close(r)
        os.close(w)
        yield
        return
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            ready, _, _ = select.select([r], [], [], 0.05)
            if ready and signal.SIGINT in os.read(r, 64):
                try:
                    stop()
                except BaseException:  # noqa: B902 - the call ends anyway, or the user presses again
                    pass

    watcher = threading.Thread(target=watch, name="tureen-ctrl-c", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join(1)
        signal.set_wakeup_fd(-1)
        os.close(r)
        os.close(w)
