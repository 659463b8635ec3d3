"""Change listeners, live queries and transactions across calls: the part
of :class:`tureen.Store` for ``tureen.h``'s "Events" and "Transactions
across calls"."""

from __future__ import annotations

import contextlib
import ctypes
from typing import Iterator, Optional, TypeVar

from ._convert import c_string, spec_text
from ._library import check, lib
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

    def changes(self, soup: Optional[str], timeout: Optional[float] = None) -> Changes:
        """An iterator over ``soup``'s change events as they come:
        ``for change in store.changes("contacts", timeout=5)`` ends after
        ``timeout`` seconds without one (None: never). A context manager."""
        return Changes(lambda fn: self.listen(soup, fn), timeout)

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

