"""Stopping a call that runs on a worker thread for an asyncio task, when
the task is cancelled.

The calls that can be stopped already say how, for Ctrl-C: each passes its
stop (cancel the sync, interrupt the query) to :class:`~tureen._interrupt.on_ctrl_c`.
That context manager hands the stop to the scope of its thread too, so a
cancelled task stops its call the way a Ctrl-C would, whatever the call.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, List, Optional, TypeVar

from .errors import CancelledError

__all__ = ["CancelScope", "current_scope"]

_T = TypeVar("_T")
_local = threading.local()


class CancelScope:
    """One awaited call: what stops it, and whether it was cancelled."""

    def __init__(self) -> None:
        # Held while a stop runs, so that a call never leaves its scope
        # between being picked to stop and being stopped.
        self._lock = threading.Lock()
        self._stops: List[Callable[[], None]] = []
        self.cancelled = False

    def run(self, function: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
        """``function(*args, **kwargs)`` on this thread, inside the scope."""
        if self.cancelled:
            raise CancelledError("cancelled before it began")
        _local.scope = self
        try:
            return function(*args, **kwargs)
        finally:
            _local.scope = None

    def cancel(self) -> None:
        """Stops the calls under way in the scope, and any it starts later."""
        with self._lock:
            self.cancelled = True
            for stop in self._stops:
                _quietly(stop)

    def enter(self, stop: Callable[[], None]) -> None:
        with self._lock:
            self._stops.append(stop)
            if self.cancelled:
                _quietly(stop)

    def exit(self, stop: Callable[[], None]) -> None:
        with self._lock:
            self._stops.remove(stop)


def _quietly(stop: Callable[[], None]) -> None:
    try:
        stop()
    except Exception:  # noqa: BLE001 - the call ends anyway, by itself
        pass


def current_scope() -> Optional[CancelScope]:
    """The scope of the awaited call this thread runs, if any."""
    scope: Optional[CancelScope] = getattr(_local, "scope", None)
    return scope
