"""Tureen for asyncio: :class:`AsyncStore`, a :class:`tureen.Store` whose
calls are awaited.

Each call runs on a worker thread (the loop's default executor, or the one
given), so a sync against a slow server, a blob transfer, a cached fetch or
a large query never holds the event loop::

    async with tureen.aio.open("notes.db", key="correct horse") as store:
        state = await store.sync_down(target, "notes")
        async for change in store.events("notes"):
            ...

Cancelling the task that awaits a call stops the call as a Ctrl-C would, and
the task ends once the call has: a sync down or up (or resync) stops at its
next page or batch and ends ``"STOPPED"`` (a resync continues it); a query
or count is interrupted, with every query running on the store at that
moment (as :meth:`tureen.Store.interrupt`). Other calls (a cached fetch, a
blob transfer) have no stop of their own: the task waits for them to end.

A progress callable passed to a sync runs on the worker thread; use
``loop.call_soon_threadsafe`` from it to reach the loop.
"""

from __future__ import annotations

import asyncio
import functools
import weakref
from concurrent.futures import Executor
from typing import Any, Callable, Generator, Optional, TypeVar

from ._async_events import AsyncEvents
from ._cancel_scope import CancelScope
from ._convert import PathArg
from ._store_part import QuerySpec
from .store import Store

__all__ = ["AsyncStore", "AsyncEvents", "open"]

_T = TypeVar("_T")

#: Store methods that return at once, or return an object used on the
#: loop's thread: :class:`AsyncStore` gives them as they are, not awaitable.
_AS_THEY_ARE = frozenset({"interrupt", "sync_cancel", "listen", "live_query", "sync_listen",
                          "iter_query", "changes", "transaction", "sync_loop_start"})


async def _in_thread(executor: Optional[Executor], function: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """``function(*args, **kwargs)`` on a worker thread; a cancel of the
    awaiting task stops it (see the module) and returns once it has."""
    loop = asyncio.get_running_loop()
    scope = CancelScope()
    future = loop.run_in_executor(executor, functools.partial(scope.run, function, *args, **kwargs))
    try:
        # Shielded: a cancel must reach the call, not just drop its future.
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        scope.cancel()
        await asyncio.wait({future})
        if not future.cancelled():
            future.exception()  # the call's own CancelledError: expected, and read
        raise


class AsyncStore:
    """An open :class:`tureen.Store` for asyncio code: every method of the
    Store, awaited (``await store.sync_down(...)``, ``await
    store.query(...)``, ``await store.blob_get(...)``), except those that return
    at once or return an object to use on the loop (:meth:`~tureen.Store.interrupt`,
    :meth:`~tureen.Store.sync_cancel`, :meth:`~tureen.Store.listen`, ...),
    which are the Store's own. :meth:`events`, :meth:`sync_events` and
    :meth:`live_query_events` are async iterators.

    Get one with :func:`open` (or wrap an open Store: ``AsyncStore(store)``);
    release it with ``await store.close()`` or ``async with``.
    """

    def __init__(self, store: Store, executor: Optional[Executor] = None) -> None:
        self._store = store
        self._executor = executor
        self._iterators: "weakref.WeakSet[AsyncEvents]" = weakref.WeakSet()

    @property
    def store(self) -> Store:
        """The :class:`tureen.Store` itself, for calls made on the loop's
        thread."""
        return self._store

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._store, name)
        if name.startswith("_") or name in _AS_THEY_ARE or not callable(attribute):
            return attribute

        @functools.wraps(attribute)
        async def awaited(*args: Any, **kwargs: Any) -> Any:
            return await _in_thread(self._executor, attribute, *args, **kwargs)

        return awaited

    # -- listeners as async iterators ---------------------------------------

    def _iterate(self, listen: Callable[..., Any], timeout: Optional[float]) -> AsyncEvents:
        events = AsyncEvents(listen, timeout)
        self._iterators.add(events)
        return events

    def events(self, soup: Optional[str], timeout: Optional[float] = None) -> AsyncEvents:
        """``async for change in store.events("notes")``: the change events
        of ``soup`` (None: every soup), as :meth:`tureen.Store.listen` hears
        them. Ends after ``timeout`` seconds without one (None: never), on
        its :meth:`~AsyncEvents.close`, or when this store closes."""
        return self._iterate(lambda fn: self._store.listen(soup, fn), timeout)

    def sync_events(self, codes: Optional[Any] = None, timeout: Optional[float] = None) -> AsyncEvents:
        """The sync events (:meth:`tureen.Store.sync_listen`), as :meth:`events`."""
        return self._iterate(lambda fn: self._store.sync_listen(fn, codes), timeout)

    def live_query_events(self, spec: QuerySpec, timeout: Optional[float] = None) -> AsyncEvents:
        """The pages of a live query (:meth:`tureen.Store.live_query`): the
        first at once, then one after each commit that changes it."""
        return self._iterate(lambda fn: self._store.live_query(spec, fn), timeout)

    # -- closing --------------------------------------------------------------

    async def close(self) -> None:
        """Closes the store (:meth:`tureen.Store.close`, awaited); its
        event iterators end after the events they hold."""
        for events in list(self._iterators):
            events.close()
        await _in_thread(self._executor, self._store.close)

    @property
    def closed(self) -> bool:
        return self._store.closed

    async def __aenter__(self) -> "AsyncStore":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def __repr__(self) -> str:
        return "<tureen.aio.AsyncStore %r %s>" % (self._store.path, "closed" if self.closed else "open")


class _Opening:
    """What :func:`open` returns: awaited, the store; or ``async with``."""

    def __init__(self, path: PathArg, key: Optional[str], executor: Optional[Executor], options: Any) -> None:
        self._open = functools.partial(Store.open, path, key, **options)
        self._executor = executor
        self._store: Optional[AsyncStore] = None

    async def _opened(self) -> AsyncStore:
        store = await _in_thread(self._executor, self._open)
        return AsyncStore(store, self._executor)

    def __await__(self) -> Generator[Any, None, AsyncStore]:
        return self._opened().__await__()

    async def __aenter__(self) -> AsyncStore:
        self._store = await self._opened()
        return self._store

    async def __aexit__(self, *exc: object) -> None:
        if self._store is not None:
            await self._store.close()


def open(path: PathArg, key: Optional[str] = None, *, executor: Optional[Executor] = None,  # noqa: A001
         **options: Any) -> _Opening:
    """Opens a store as :meth:`tureen.Store.open` does (the same arguments),
    on a worker thread (a passphrase's key derivation takes a while):
    ``store = await tureen.aio.open(...)`` or ``async with
    tureen.aio.open(...) as store``. ``executor``: where the store's calls
    run (default: the loop's default executor)."""
    return _Opening(path, key, executor, options)
