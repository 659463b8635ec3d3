"""Change listeners, live queries and transactions across calls: the part
of :class:`tureen.Store` for ``tureen.h``'s "Events" and "Transactions
across calls"."""

from __future__ import annotations

import contextlib
import ctypes
from typing import Iterator, Optional, TypeVar, Union

from ._convert import c_string, spec_text
from ._library import call_for_string, check, lib
from .feed import ChangeFeed
from ._store_part import QuerySpec, StorePart
from .listeners import FREE_CTX, Changes, EventCallable, Listener

__all__ = ["Events"]

_Self = TypeVar("_Self", bound="Events")


class Events(StorePart):
    """Mixed into :class:`tureen.Store`: who hears of its commits, and
    grouping writes into one commit."""

    def listen(self, soup: Optional[str], callback: EventCallable) -> Listener:
        """Calls ``callback(change)`` after each commit that changes ``soup``
        (None: any soup; one call per soup a commit changed), on the
        library's thread. ``change`` is a dict: ``{"soup", "created",
        "updated", "deleted", "origin", "cleared"}`` (see the header).
        Returns a :class:`~tureen.listeners.Listener`: a context manager
        whose :meth:`~tureen.listeners.Listener.remove` stops it."""
        c_soup = None if soup is None else c_string(soup, "soup")
        with self._use() as handle:
            return Listener(lambda fn, key, out: lib.tureen_soup_listen(
                handle, c_soup, fn, key, FREE_CTX, ctypes.byref(out)), callback)

    def live_query(self, spec: QuerySpec, callback: EventCallable) -> Listener:
        """Calls ``callback(page)`` with the first page of ``spec`` (what
        :meth:`query` returns for page 0) at once, then again after every
        commit that changes it, on the library's thread. Bursts of commits
        cost one re-run. Returns a :class:`~tureen.listeners.Listener`."""
        c_spec = spec_text(spec)
        with self._use() as handle:
            return Listener(lambda fn, key, out: lib.tureen_live_query(
                handle, c_spec, fn, key, FREE_CTX, ctypes.byref(out)), callback)

    def events(self, soup: Optional[str], timeout: Optional[float] = None) -> Changes:
        """An iterator over ``soup``'s change events as they come:
        ``for change in store.events("contacts", timeout=5)`` ends after
        ``timeout`` seconds without one (None: never). A context manager.
        (:meth:`changes` reads the change feed, which is kept on disk.)"""
        return Changes(lambda fn: self.listen(soup, fn), timeout)

    def changes(
        self,
        since: Union[int, str] = 0,
        soup: Optional[str] = None,
        limit: Optional[int] = None,
        *,
        page_size: int = 1000,
    ) -> ChangeFeed:
        """The change feed (``tureen_changes``): an iterator over every entry
        that commits created, updated or deleted after position ``since``,
        oldest first, each a dict ``{"seq", "soup", "entryId", "recordId",
        "kind": "create"|"update"|"delete", "origin": "app"|"sync"}``.
        "recordId" is the entry's top-level ``"id"`` (a str or an int) or
        None; a clear or drop is a delete per entry. The feed is on disk:
        it holds what other handles and processes wrote, and what was
        written while nobody listened::

            feed = store.changes(since=saved)
            for change in feed:
                apply(change)
            saved = feed.last_seq

        Args:
            since: a ``"seq"`` or :attr:`~tureen.feed.ChangeFeed.last_seq`
                of this store (0: from the start), or ``"now"``: no change,
                only the newest position, in ``last_seq``.
            soup: only this soup's changes (None: every soup).
            limit: at most this many changes (None: all there are).
            page_size: changes read per call to the library (1..100000).

        Returns:
            A :class:`~tureen.feed.ChangeFeed`; its first page is read now.

        Raises:
            NotFoundError: changes after ``since`` are no longer kept (the
                open options ``changes_keep_ms`` and ``changes_keep_count``):
                read the soups again, then go on from ``changes(since="now")``.
            InvalidError: ``since`` past the newest position, or a bad
                ``soup`` or ``page_size``.
            TypeError: ``since`` neither an int nor ``"now"`` (the listener
                iterator that was called ``changes(soup, timeout)`` is
                :meth:`events`).
        """
        if isinstance(since, bool) or not (isinstance(since, int) or since == "now"):
            raise TypeError(
                "since must be an int position or \"now\", not %r (for an iterator over "
                "listener events, use store.events(soup, timeout))" % (since,)
            )
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise TypeError("limit must be a non-negative int or None, not %r" % (limit,))
        if soup is not None:
            c_string(soup, "soup")

        def fetch(options: bytes) -> str:
            with self._use() as handle:
                return call_for_string(lib.tureen_changes, handle, options)

        return ChangeFeed(fetch, since, soup, limit, page_size)

    @contextlib.contextmanager
    def transaction(self: _Self) -> Iterator[_Self]:
        """``with store.transaction():`` — this thread's writes inside commit
        together when the block ends, or roll back if it raises; listeners
        hear of them once, at the commit. Other threads' writes wait."""
        with self._use() as handle:
            check(lib.tureen_transaction_begin(handle))
        try:
            yield self
        except BaseException:
            with self._use() as handle:
                check(lib.tureen_transaction_rollback(handle))
            raise
        with self._use() as handle:
            check(lib.tureen_transaction_commit(handle))

