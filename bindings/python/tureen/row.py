"""Rows of Smart SQL and ``selectPaths`` queries, readable by column name as
``sqlite3.Row`` rows are::

    for row in store.iter_query(query.smart(
            "select {notes:title} as title, count(*) from {notes} group by title")):
        print(row["title"], row["count(*)"], row[1], dict(row.items()))

A :class:`Row` is still the list the library returned (``row == [...]``,
``json.dumps(row)``, ``repr``, unpacking and indexing work as before).

The library returns values only, so the names come from the query itself:
the ``selectPaths`` of an entry query, or the select list of a Smart SQL
query, named as SQLite names result columns: ``expr AS name`` is ``name``; a
lone ``{soup:path}`` is ``path`` (``{soup:_soup}`` is ``_soup``); anything
else is the expression's text (``count(*)``). Names are matched without
regard to ASCII case; when two columns share a name the first wins. A
``select *`` row has no names: reading it by name raises KeyError.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator, List, Mapping, Optional, Sequence, SupportsIndex, Tuple, Union, overload

__all__ = ["Row", "column_names"]


class Row(List[Any]):
    """One result row: a list of the selected values that can also be read
    by column name (``row["title"]``)."""

    __slots__ = ("_names",)

    def __init__(self, values: Iterable[Any] = (), names: Optional[Sequence[str]] = None) -> None:
        super().__init__(values)
        self._names: Tuple[str, ...] = tuple(names) if names is not None and len(names) == len(self) else ()

    def keys(self) -> List[str]:
        """The column names, in order (empty when the query does not name
        its columns, as ``select *``)."""
        return list(self._names)

    def items(self) -> List[Tuple[str, Any]]:
        """``(name, value)`` pairs, in column order."""
        return list(zip(self._names, self))

    def _index(self, name: str) -> int:
        if not self._names:
            raise KeyError("%r: this query's columns have no names (select them by name, or use AS)" % name)
        folded = name.lower()
        for i, column in enumerate(self._names):
            if column.lower() == folded:
                return i
        raise KeyError("%r: no such column; the columns are %s" % (name, ", ".join(map(repr, self._names))))

    @overload
    def __getitem__(self, key: SupportsIndex, /) -> Any: ...

    @overload
    def __getitem__(self, key: slice, /) -> List[Any]: ...

    @overload
    def __getitem__(self, key: str, /) -> Any: ...

    def __getitem__(self, key: Union[str, SupportsIndex, slice], /) -> Any:
        if isinstance(key, str):
            return super().__getitem__(self._index(key))
        return super().__getitem__(key)

    def get(self, name: str, default: Any = None) -> Any:
        """The value of column ``name``, or ``default`` when there is none."""
        try:
            return self[name]
        except KeyError:
            return default

    def __reduce__(self) -> Tuple[Any, ...]:
        return (Row, (list(self), self._names))


def column_names(spec: Mapping[str, Any]) -> Optional[List[str]]:
    """The names of the columns ``spec`` returns as rows, or None when it
    returns entries (or its columns cannot be named, as ``select *``)."""
    paths = spec.get("selectPaths")
    if isinstance(paths, list) and all(isinstance(p, str) for p in paths):
        return list(paths)
    sql = spec.get("smartSql")
    if spec.get("queryType") == "smart" and isinstance(sql, str):
        return _select_list_names(sql)
    return None


# A token of the select list: a quoted string or name, a {soup:path}
# reference, a bracket, a comma, a word, or any other character.
_TOKEN = re.compile(
    r"""'(?:[^']|'')*'|"(?:[^"]|"")*"|`(?:[^`]|``)*`|\[[^\]]*\]|\{[^}]*\}|[(),]|[A-Za-z_][A-Za-z_0-9$]*|\s+|."""
)
_END_OF_LIST = {"from", "where", "group", "having", "order", "limit", "union", "intersect", "except", "window"}


def _tokens(sql: str) -> Iterator[str]:
    for match in _TOKEN.finditer(sql):
        yield match.group(0)


def _select_list_names(sql: str) -> Optional[List[str]]:
    """The names of the columns of the first top-level SELECT of ``sql``."""
    items: List[List[str]] = []
    depth = 0
    collecting = False
    current: List[str] = []
    for token in _tokens(sql):
        word = token.lower()
        if token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
        if depth == 0 and not collecting:
            if word == "select":
                collecting = True
            continue
        if not collecting:
            continue
        if depth == 0 and word in _END_OF_LIST:
            break
        if depth == 0 and token == ",":
            items.append(current)
            current = []
            continue
        current.append(token)
    if not collecting:
        return None
    items.append(current)
    names = [_column_name(item) for item in items]
    return None if any(name is None for name in names) else [name for name in names if name is not None]


# Words that end an expression rather than name it.
_NOT_ALIASES = {"end", "null", "true", "false", "current_date", "current_time", "current_timestamp"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_0-9$]*\Z")


def _is_name(word: str) -> bool:
    if word[:1] in ('"', "`", "["):
        return True
    return bool(_IDENTIFIER.match(word)) and word.lower() not in _NOT_ALIASES


def _ends_operand(word: str) -> bool:
    """Whether ``word`` can end an expression, so that a name after it is
    an alias (not after an operator, or ``COLLATE``)."""
    if word == ")" or word.startswith("{") or word[:1] in ("'", '"', "`", "[") or word[:1].isdigit():
        return True
    return bool(_IDENTIFIER.match(word)) and word.lower() not in ("collate", "not", "and", "or", "is", "like", "in")


def _unquote(token: str) -> str:
    if token[:1] in ("'", '"', "`") and token[-1:] == token[:1] and len(token) >= 2:
        return token[1:-1].replace(token[0] * 2, token[0])
    if token[:1] == "[" and token[-1:] == "]":
        return token[1:-1]
    return token


def _column_name(tokens: List[str]) -> Optional[str]:
    words = [t for t in tokens if not t.isspace()]
    if words and words[0].lower() in ("distinct", "all"):
        tokens = tokens[tokens.index(words[0]) + 1:]
        words = words[1:]
    if not words or words == ["*"] or words[-1] == "*":
        return None  # select *, {soup}.*: no names to give
    if len(words) >= 3 and words[-2].lower() == "as":
        return _unquote(words[-1])
    if len(words) >= 2 and _is_name(words[-1]) and _ends_operand(words[-2]):
        return _unquote(words[-1])  # an alias without AS: "(select ...) m"
    if len(words) == 1 and words[0][:1] in ('"', "`", "["):
        return _unquote(words[0])  # a quoted column name
    if len(words) == 1 and words[0].startswith("{") and ":" in words[0]:
        return words[0][1:-1].split(":", 1)[1].strip()
    return " ".join("".join(tokens).split())
