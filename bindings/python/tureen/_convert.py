"""Turning Python values into the C arguments of libtureen."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Union

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
