"""The change feed (``tureen_changes``): every entry each commit created,
updated or deleted, kept on disk and numbered, read as an iterator by
:meth:`tureen.Store.changes`."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

__all__ = ["FeedChange", "ChangeFeed"]

#: One change: ``{"seq", "soup", "entryId", "recordId", "kind", "origin"}``.
FeedChange = Dict[str, Any]

#: Reads one page: the options' JSON text in, the answer's JSON text out.
_Fetch = Callable[[bytes], str]


class ChangeFeed:
    """An iterator over the changes after a position, oldest first, each a
    dict ``{"seq": int, "soup": str, "entryId": int, "recordId": str, int or
    None, "kind": "create"|"update"|"delete", "origin": "app"|"sync"}``.

    It reads the feed a page at a time as it goes, so changes committed while
    it runs are met too, until a page comes back short (or ``limit`` changes
    were given). :attr:`last_seq` is where to go on from next time.
    """

    def __init__(
        self,
        fetch: _Fetch,
        since: Union[int, str],
        soup: Optional[str],
        limit: Optional[int],
        page_size: int,
    ) -> None:
        """Internal: use :meth:`tureen.Store.changes`. Reads the first page
        now, so that a position no longer kept raises at once."""
        self._fetch = fetch
        self._soup = soup
        self._left = limit
        self._page_size = page_size
        self._page: List[FeedChange] = []
        self._at = 0
        self._more = True
        self._position = -1
        self._read(since)

    def _read(self, since: Union[int, str]) -> None:
        size = self._page_size if self._left is None else max(1, min(self._page_size, self._left))
        options: Dict[str, Any] = {"since": since, "limit": size}
        if self._soup is not None:
            options["soup"] = self._soup
        answer = json.loads(self._fetch(json.dumps(options).encode("utf-8")))
        self._page = answer["changes"]
        self._at = 0
        self._more = len(self._page) == size
        # A short page read to the end: the feed's newest position, past
        # other soups' changes too. Until then, the last change given.
        self._page_end: int = answer["lastSeq"]
        self._position = self._page_end if not self._page else int(since)

    @property
    def last_seq(self) -> int:
        """The position after the last change this iterator gave (the
        feed's newest once it is used up): pass it as ``since`` to go on."""
        return self._position

    def __iter__(self) -> Iterator[FeedChange]:
        return self

    def __next__(self) -> FeedChange:
        while self._at == len(self._page):
            if self._left == 0:
                raise StopIteration
            if not self._more:
                self._position = self._page_end
                raise StopIteration
            self._read(self._page_end)
            if not self._page:
                raise StopIteration
        change = self._page[self._at]
        self._at += 1
        self._position = change["seq"]
        if self._left is not None:
            self._left -= 1
        if self._at == len(self._page) and not self._more:
            self._position = self._page_end
        return change

    def __repr__(self) -> str:
        return "<tureen.ChangeFeed at %d>" % self._position
