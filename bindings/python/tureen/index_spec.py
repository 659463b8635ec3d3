"""Index specs: which paths of a soup's entries are indexed, and as what.

A soup's index specs are a list of ``{"path": ..., "type": ...}`` objects
(``include/tureen.h``, "Soups"). The binding accepts each spec as such a dict,
as a ``(path, type)`` pair, or as an :class:`IndexSpec`, and returns
:class:`IndexSpec` values::

    store.register_soup("contacts", [
        IndexSpec("Name", IndexSpec.STRING),
        ("Owner.Age", "integer"),
        {"path": "Bio", "type": "full_text"},
    ])
"""

from __future__ import annotations

import collections.abc
from typing import Any, Dict, Iterable, List, Mapping, NamedTuple, Tuple, Union

from ._convert import json_text, plain_list

__all__ = ["IndexSpec", "IndexSpecArg", "INDEX_TYPES"]

#: The index types of the header, in its order.
INDEX_TYPES: Tuple[str, ...] = ("string", "integer", "floating", "full_text")


class _IndexSpecFields(NamedTuple):
    path: str
    type: str


class IndexSpec(_IndexSpecFields):
    """One index of a soup: a dot-separated ``path`` (case-sensitive) and a
    ``type`` (``"string"``, ``"integer"``, ``"floating"`` or ``"full_text"``,
    also spelt ``IndexSpec.STRING`` ... ``IndexSpec.FULL_TEXT``).

    It is a tuple, so it compares equal to ``(path, type)``. Nothing is
    checked here: the library says what is wrong with a spec when it is used.
    """

    __slots__ = ()

    STRING = "string"
    INTEGER = "integer"
    FLOATING = "floating"
    FULL_TEXT = "full_text"

    def to_dict(self) -> Dict[str, str]:
        """The JSON form, ``{"path": ..., "type": ...}``."""
        return {"path": self.path, "type": self.type}

    @classmethod
    def from_dict(cls, value: Mapping[str, Any]) -> "IndexSpec":
        """An IndexSpec from the JSON form the library returns."""
        return cls(value["path"], value["type"])


#: What the binding accepts as one index spec.
IndexSpecArg = Union[IndexSpec, Tuple[str, str], Mapping[str, Any]]


def spec_dict(spec: Any, position: int) -> Any:
    """One spec argument in its JSON form. A mapping is passed on as it is
    (unknown members included, for the library to refuse).

    Raises:
        TypeError: neither a mapping nor a (path, type) pair.
    """
    if isinstance(spec, IndexSpec):
        return spec.to_dict()
    if isinstance(spec, collections.abc.Mapping):
        return dict(spec)
    if isinstance(spec, (tuple, list)) and len(spec) == 2:
        return {"path": spec[0], "type": spec[1]}
    raise TypeError(
        "index spec %d must be a dict {'path': ..., 'type': ...}, an IndexSpec or a "
        "(path, type) pair, not %r" % (position, spec)
    )


def specs_json(index_specs: Iterable[IndexSpecArg]) -> bytes:
    """A list of specs as the JSON array text the library takes.

    Raises:
        TypeError: not a list, or an element that is not a spec.
    """
    items = plain_list(index_specs, "index_specs", "index specs")
    return json_text([spec_dict(spec, i) for i, spec in enumerate(items)], "index_specs")


def specs_from_json(values: List[Mapping[str, Any]]) -> List[IndexSpec]:
    """The library's JSON array of specs as IndexSpec values."""
    return [IndexSpec.from_dict(value) for value in values]
