"""What the parts of :class:`tureen.Store` share: the names of their values,
and the base class through which each part reaches the store's handle.

:class:`tureen.Store` is assembled from one mixin per area of the header
(soups, entries, queries, sync, ...), so that each area's Python lives in a
file of its own, as its C lives in a section of its own.
"""

from __future__ import annotations

from typing import Any, Callable, ContextManager, Dict, Mapping

__all__ = ["Entry", "QuerySpec", "StorePart"]

#: An entry: a JSON object as a dict.
Entry = Dict[str, Any]
#: A query spec: a JSON object (see :mod:`tureen.query` for builders).
QuerySpec = Mapping[str, Any]


class StorePart:
    """A part of :class:`tureen.Store`. ``_use()`` (defined by the Store)
    yields the open handle and keeps the store from closing meanwhile; it
    raises :class:`~tureen.MisuseError` once the store is closed.
    ``_use(serving=True)`` for a call of a function that may talk to a
    server: close lets the library cancel it instead of waiting for it."""

    _use: Callable[..., ContextManager[Any]]
