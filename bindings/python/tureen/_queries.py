"""Running queries: the part of :class:`tureen.Store` for ``tureen.h``'s
"Queries"."""

from __future__ import annotations

import ctypes
import json
from typing import Any, Iterator, List, Optional, Sequence

from ._convert import INT_MAX, INT_MIN, spec_text
from ._interrupt import on_ctrl_c
from ._library import call_for_string, check, lib
from ._store_part import QuerySpec, StorePart
from .row import Row, column_names
from .sync import _drop_sync_fields

__all__ = ["Queries"]


class Queries(StorePart):
    """Mixed into :class:`tureen.Store`: query specs and Smart SQL."""

    def query(self, spec: QuerySpec, page_index: int = 0, *, sync_fields: bool = True) -> List[Any]:
        """The entries on page ``page_index`` (from 0) of the query ``spec``
        (a dict; see :mod:`tureen.query` for builders).

        A smart query (:func:`tureen.query.smart`), or an entry query with
        ``"selectPaths"``, returns rows instead: a :class:`~tureen.Row` per
        result row, the list of the selected values (``{soup:_soup}`` and
        other JSON values as dicts and lists), which can also be read by
        column name (``row["title"]``).

        ``sync_fields=False`` leaves the sync bookkeeping fields
        (:data:`tureen.sync.SYNC_FIELDS`) out of the entries returned.

        Pages are not snapshots: a change between two calls shows on the next
        page read. Ordered results are ordered by the path, then by id, so
        pages never overlap. Ctrl-C interrupts a long query (it raises
        KeyboardInterrupt).

        Raises:
            QueryError: a malformed spec, a path with no index, a negative
                page.
            NotFoundError: no such soup.
            TypeError: ``spec`` is not a dict or ``page_index`` not an int.
        """
        c_spec = spec_text(spec)
        if not isinstance(page_index, int):
            raise TypeError("page_index must be an int, not %s" % type(page_index).__name__)
        if not INT_MIN <= page_index <= INT_MAX:
            raise OverflowError("page_index %d does not fit a C int" % page_index)
        return self._page(c_spec, page_index, column_names(spec), sync_fields)

    def count(self, spec: QuerySpec) -> int:
        """How many entries the query ``spec`` matches (on all pages); for a
        smart query, how many rows it returns.

        Raises:
            QueryError, NotFoundError: as :meth:`query`.
        """
        c_spec = spec_text(spec)
        out = ctypes.c_int64()
        with self._use() as handle, on_ctrl_c(lambda: lib.tureen_store_interrupt(handle)):
            check(lib.tureen_count(handle, c_spec, ctypes.byref(out)))
        return int(out.value)

    def iter_query(self, spec: QuerySpec, *, sync_fields: bool = True) -> Iterator[Any]:
        """Every entry the query matches, page after page, lazily (for a
        smart query, or one with ``"selectPaths"``: every :class:`~tureen.Row`).

        Reads page 0, 1, ... (``spec["pageSize"]`` entries or rows each, 10
        by default) until a page comes back with fewer. Each page is read when
        the previous one is used up, so, as with :meth:`query`, changes made
        meanwhile show on the pages still to be read. Closing the store while
        iterating makes the next page read raise MisuseError.
        ``sync_fields`` as :meth:`query`.

        Raises:
            QueryError, NotFoundError, TypeError: as :meth:`query`, when the
                first page is read.
        """
        c_spec = spec_text(spec)  # a TypeError now, not at the first next()
        return self._pages(c_spec, spec.get("pageSize"), column_names(spec), sync_fields)

    #: Same as :meth:`iter_query`: a lazy iterator over every page's entries
    #: (``list(store.query_all(spec))`` for a list).
    query_all = iter_query

    def _page(self, c_spec: bytes, page_index: int, names: Optional[Sequence[str]], sync_fields: bool) -> List[Any]:
        with self._use() as handle, on_ctrl_c(lambda: lib.tureen_store_interrupt(handle)):
            text = call_for_string(lib.tureen_query, handle, c_spec, page_index)
        page: List[Any] = json.loads(text)
        if not sync_fields:
            page = [_drop_sync_fields(item) for item in page]
        if page and isinstance(page[0], list):
            page = [Row(row, names) for row in page]
        return page

    def _pages(self, c_spec: bytes, page_size: Any, names: Optional[Sequence[str]], sync_fields: bool) -> Iterator[Any]:
        if page_size is None:
            page_size = 10  # the library's default
        sized = isinstance(page_size, (int, float)) and not isinstance(page_size, bool)
        page_index = 0
        while True:
            page = self._page(c_spec, page_index, names, sync_fields)
            yield from page
            # An empty page ends it too, whatever pageSize the library took.
            if not page or (sized and len(page) < page_size):
                return
            page_index += 1
            if page_index > INT_MAX:
                return
