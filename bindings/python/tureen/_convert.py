"""Turning Python values into the C arguments of libtureen."""

from __future__ import annotations

import collections.abc
import json
import os
from typing import Any, Iterable, List, Mapping, Union

from .errors import InvalidError

#: What the binding accepts as a file-system path.
PathArg = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


def c_string(value: str, what: str) -> bytes:
    """``value`` as UTF-8 bytes for a ``const char *`` argument.

    Raises:
        TypeError: ``value`` is not a str.
        InvalidError: it holds a NUL character, which C would cut it at.
    """
    if not isinstance(value, str):
        raise TypeError("%s must be a str, not %s" % (what, type(value).__name__))
    if "\x00" in value:
        raise InvalidError("%s contains a NUL character" % what)
    return value.encode("utf-8", "surrogateescape")


def c_path(path: PathArg) -> bytes:
    """A str, bytes or os.PathLike path as bytes for the library.

    A str is encoded UTF-8 (undecodable file-name bytes that Python carries as
    surrogate escapes are passed back as they were; the library then reports
    them as not UTF-8).

    Raises:
        TypeError: not a path.
        InvalidError: the path holds a NUL byte.
    """
    raw = os.fspath(path)
    if isinstance(raw, str):
        encoded = raw.encode("utf-8", "surrogateescape")
    else:
        encoded = bytes(raw)
    if b"\x00" in encoded:
        raise InvalidError("the path %r contains a NUL byte" % (raw,))
    return encoded


def display_path(path: PathArg) -> str:
    """The path as a str, for messages and ``Store.path``."""
    raw = os.fspath(path)
    return raw if isinstance(raw, str) else os.fsdecode(raw)


def c_json(value: Mapping[str, Any]) -> bytes:
    """``value`` as JSON text for a ``const char *`` argument.

    Made with :func:`json.dumps` (ASCII output, ``\\u`` escapes for the rest),
    so a quote or backslash in a value can never change the JSON's structure.
    NaN and infinities, which JSON has no way to write, raise ValueError.
    """
    return json.dumps(value, allow_nan=False).encode("ascii")


def json_text(value: Any, what: str) -> bytes:
    """``value`` as UTF-8 JSON text for a ``const char *`` argument (entries,
    query specs, id lists).

    Made with :func:`json.dumps` (``ensure_ascii=False``, compact separators),
    so a quote or backslash in a string is escaped and can never change the
    JSON's structure; characters outside ASCII are written as UTF-8 rather
    than ``\\u`` escapes, which is shorter and lets the library store the text
    as given.

    Raises:
        ValueError: NaN or an infinity (JSON has no way to write them), a
            circular reference, or a str holding a lone surrogate (not UTF-8);
            raised before the library is called.
        TypeError: a value json cannot serialise (the message says which).
    """
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8")
    except ValueError as exc:  # also UnicodeEncodeError
        raise ValueError("%s cannot be written as JSON: %s" % (what, exc)) from exc


def plain_list(value: Any, what: str, item: str) -> List[Any]:
    """An iterable argument (ids, paths, specs) as a list.

    A str, bytes or mapping is refused, although Python could iterate it: it
    is almost always a single value passed where a list was meant.

    Raises:
        TypeError: ``value`` is a str, bytes, mapping or not iterable.
    """
    if isinstance(
        value, (str, bytes, bytearray, collections.abc.Mapping)
    ) or not isinstance(value, collections.abc.Iterable):
        raise TypeError(
            "%s must be a list of %s, not %s" % (what, item, type(value).__name__)
        )
    return list(value)


#: The bounds of C's int and int64_t, which ctypes would silently wrap.
INT_MIN = -(2**31)
INT_MAX = 2**31 - 1
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def spec_text(spec: Mapping[str, Any]) -> bytes:
    """A query spec as JSON text. Raises TypeError unless it is a mapping."""
    if not isinstance(spec, collections.abc.Mapping):
        raise TypeError("a query spec must be a dict, not %s" % type(spec).__name__)
    return json_text(dict(spec), "the query spec")


def ids_text(ids: Iterable[int]) -> bytes:
    """Entry ids (a list of ints) as JSON text."""
    return json_text(plain_list(ids, "ids", "entry ids (ints)"), "ids")


#: A record's own id, as its sync's id field holds it.
RecordId = Union[str, int, float]


def record_ids_text(ids: Iterable[RecordId]) -> bytes:
    """Record ids (a list of strs or numbers) as JSON text."""
    return json_text(plain_list(ids, "ids", "record ids (strs or numbers)"), "ids")


def entries_value(entries: Union[Mapping[str, Any], Iterable[Mapping[str, Any]]]) -> Any:
    """One entry or a list of them as values json can write (a dict, or a
    list of dicts)."""
    if isinstance(entries, collections.abc.Mapping):
        return dict(entries)
    items = plain_list(entries, "entries", "entries (dicts)")
    return [
        dict(entry)
        if isinstance(entry, collections.abc.Mapping) and not isinstance(entry, dict)
        else entry
        for entry in items
    ]
