"""Builders of query specs (``include/tureen.h``, "Queries").

A query spec is a plain dict in SmartStore's shape; these functions only save
typing and spelling mistakes. Their results can be changed or extended like
any dict before being passed to :meth:`tureen.Store.query`,
:meth:`~tureen.Store.count`, :meth:`~tureen.Store.iter_query` or
:meth:`~tureen.Store.remove_by_query`::

    from tureen import query

    spec = query.range("contacts", "Age", begin=18, order="descending", page_size=50)
    for entry in store.iter_query(spec):
        ...

``order_path`` is left out of the spec unless given, so the library's default
applies (the index path of exact, range and like queries). ``None`` sends
``"orderPath": null``: unordered. Nothing is validated here; the library
reports a bad spec as :class:`~tureen.QueryError`.

Full-text and Smart SQL queries have their own builders::

    store.query(query.match("notes", None, "tea OR coffee NOT decaf"))
    rows = store.query(query.smart(
        "select {notes:title}, {notes:stars} from {notes} where {notes:stars} >= ?",
        args=[4], page_size=100))

A smart query returns rows (lists of column values), not entries.

The module's ``all`` and ``range`` shadow the builtins inside it: import the
module (``from tureen import query``) rather than its names.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence

__all__ = [
    "QuerySpec",
    "DEFAULT",
    "ASCENDING",
    "DESCENDING",
    "all",
    "exact",
    "range",
    "like",
    "match",
    "smart",
]

#: A query spec: a JSON object as a dict.
QuerySpec = Dict[str, Any]

ASCENDING = "ascending"
DESCENDING = "descending"


class _Default:
    """The type of :data:`DEFAULT`."""

    _instance: Optional["_Default"] = None

    def __new__(cls) -> "_Default":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "tureen.query.DEFAULT"

    def __reduce__(self) -> str:
        return "DEFAULT"


#: ``order_path=DEFAULT`` (the default) leaves "orderPath" out of the spec, so
#: the library orders by the index path; ``order_path=None`` sends null
#: (unordered).
DEFAULT: Any = _Default()


def _spec(
    query_type: str,
    soup: str,
    order_path: Any,
    order: str,
    page_size: int,
    **members: Any,
) -> QuerySpec:
    spec: QuerySpec = {"queryType": query_type, "soupName": soup}
    spec.update(members)
    if order_path is not DEFAULT:
        spec["orderPath"] = order_path
    spec["order"] = order
    spec["pageSize"] = page_size
    return spec


def all(  # noqa: A001 - the name of the query type
    soup: str,
    order_path: Any = DEFAULT,
    order: str = ASCENDING,
    page_size: int = 10,
) -> QuerySpec:
    """Every entry of ``soup``, optionally ordered by an indexed path (or
    ``"_soupEntryId"``, ``"_soupLastModifiedDate"``, ``"_soupCreatedDate"``)."""
    return _spec("all", soup, order_path, order, page_size)


def exact(
    soup: str,
    path: str,
    key: Any,
    order_path: Any = DEFAULT,
    order: str = ASCENDING,
    page_size: int = 10,
) -> QuerySpec:
    """The entries whose index at ``path`` equals ``key`` (converted to the
    index's type by the index rules: ``exact(s, "Age", "42")`` on an integer
    index matches 42)."""
    return _spec("exact", soup, order_path, order, page_size, indexPath=path, matchKey=key)


def range(  # noqa: A001 - the name of the query type
    soup: str,
    path: str,
    begin: Any = None,
    end: Any = None,
    order_path: Any = DEFAULT,
    order: str = ASCENDING,
    page_size: int = 10,
) -> QuerySpec:
    """The entries whose index at ``path`` is between ``begin`` and ``end``,
    both included; ``None`` leaves that end open (the member is omitted)."""
    members: Dict[str, Any] = {"indexPath": path}
    if begin is not None:
        members["beginKey"] = begin
    if end is not None:
        members["endKey"] = end
    return _spec("range", soup, order_path, order, page_size, **members)


def like(
    soup: str,
    path: str,
    pattern: str,
    order_path: Any = DEFAULT,
    order: str = ASCENDING,
    page_size: int = 10,
) -> QuerySpec:
    """The entries whose index at ``path`` matches the SQL LIKE ``pattern``
    (``%``: any run of characters, ``_``: one character)."""
    return _spec("like", soup, order_path, order, page_size, indexPath=path, likeKey=pattern)


def match(
    soup: str,
    path: Optional[str],
    key: str,
    order_path: Any = DEFAULT,
    order: str = ASCENDING,
    page_size: int = 10,
) -> QuerySpec:
    """The entries whose full_text indexes match the full-text query ``key``.

    ``path`` is a full_text index path of ``soup``, or ``None`` to search all
    of the soup's full_text paths (``"indexPath": null`` is sent).

    ``key`` uses SmartStore's syntax: words side by side must all occur
    (AND); ``"a OR b"``; ``"a NOT b"`` (a without b; NOT needs a term before
    it); ``"pre*"`` (words starting with pre); ``'"a phrase"'``; and
    ``"{soup:path}:word"`` to search one full_text path when ``path`` is
    ``None``. Words are letters, digits and ``_``; other characters separate
    them. A malformed key raises :class:`~tureen.QueryError` (with the
    character position) when the query runs.

    With ``order_path`` left out the library's default applies (the index
    path; with ``path`` None, unordered); give ``"_soupEntryId"``, another
    indexed path, or ``None`` (unordered) to choose.
    """
    return _spec("match", soup, order_path, order, page_size, indexPath=path, matchKey=key)


def smart(
    sql: str,
    args: Optional[Sequence[Any]] = None,
    page_size: int = 10,
) -> QuerySpec:
    """A Smart SQL query: one read-only SELECT over soups, returning rows.

    In ``sql``, ``{soup}`` is the soup's table and ``{soup:path}`` a path's
    value (an indexed path reads its index, any other path the entry; objects,
    arrays and several values come back as JSON). ``{soup:_soup}`` is the
    whole entry (a dict in the row), and ``{soup:_soupEntryId}``,
    ``{soup:_soupLastModifiedDate}``, ``{soup:_soupCreatedDate}`` its id and
    dates. A table alias goes before the reference:
    ``mgr.{employees:lastName}``. Joins, aggregates, GROUP BY and subqueries
    work.

    ``args`` (strings, numbers, booleans, ``None``) are bound to the ``?``
    parameters in order, one each; they are values, never SQL (booleans
    bind as 1 and 0). ``None`` leaves the ``"args"`` member out. A string is
    not a sequence of args: it raises TypeError.

    The results of :meth:`tureen.Store.query` and
    :meth:`~tureen.Store.iter_query` are rows: lists of the selected columns'
    values. :meth:`~tureen.Store.count` counts rows;
    :meth:`~tureen.Store.remove_by_query` does not take smart queries.
    Anything but a single read-only SELECT (INSERT, UPDATE, DELETE, DROP,
    ATTACH, PRAGMA, a second statement, a write in a CTE), an unknown soup or
    a malformed reference raises :class:`~tureen.QueryError`.
    """
    spec: QuerySpec = {"queryType": "smart", "smartSql": sql}
    if args is not None:
        if isinstance(args, (str, bytes, bytearray)):
            raise TypeError("args must be a list of values, not %s" % type(args).__name__)
        spec["args"] = list(args)
    spec["pageSize"] = page_size
    return spec
