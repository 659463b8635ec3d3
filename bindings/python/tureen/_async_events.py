"""Listeners as asyncio async iterators: the library's listener thread hands
each event to the event loop, where ``async for`` takes it."""

from __future__ import annotations

import asyncio
from typing import Any, Callable, Optional

from .listeners import EventCallable, Listener

__all__ = ["AsyncEvents"]

_END = object()  # queued once the listener is removed: iteration ends after what came before it


class AsyncEvents:
    """``async for event in ...``: a listener's events, in order, on the
    event loop that created it. Ends when no event came for ``timeout``
    seconds (None: never) or after :meth:`close`; an async context manager
    that closes it."""

    def __init__(self, listen: Callable[[EventCallable], Listener], timeout: Optional[float]) -> None:
        self._loop = asyncio.get_running_loop()
        self._queue: "asyncio.Queue[Any]" = asyncio.Queue()
        self._timeout = timeout
        self._ended = False
        self._listener = listen(self._deliver)

    def _deliver(self, event: Any) -> None:
        """On the library's thread: never touches the queue itself (asyncio's
        objects belong to the loop's thread)."""
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, event)
        except RuntimeError:  # the loop is closed: no one is left to read it
            pass

    def __aiter__(self) -> "AsyncEvents":
        return self

    async def __anext__(self) -> Any:
        if self._ended:
            raise StopAsyncIteration
        try:
            event = await asyncio.wait_for(self._queue.get(), self._timeout)
        except asyncio.TimeoutError:
            raise StopAsyncIteration from None
        if event is _END:
            self._ended = True
            raise StopAsyncIteration
        return event

    def close(self) -> None:
        """Stops listening; the events that came before are still read."""
        if self._listener.active:
            self._listener.remove()
            # Behind the events the listener thread has already handed over.
            self._loop.call_soon(self._queue.put_nowait, _END)

    async def __aenter__(self) -> "AsyncEvents":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()
