"""Creating, altering and dropping soups: the part of :class:`tureen.Store`
for ``tureen.h``'s "Soups"."""

from __future__ import annotations

import ctypes
import json
from typing import FrozenSet, Iterable, List

from ._cache import CACHE_SOUP
from ._convert import c_string, json_text, plain_list
from ._library import call_for_string, check, lib
from ._store_part import StorePart
from .sync import SYNCS_SOUP
from .index_spec import IndexSpec, IndexSpecArg, specs_from_json, specs_json

__all__ = ["Soups", "ENGINE_SOUPS"]

#: The soups the library's engines create and write: the sync states, the
#: cached answers.
ENGINE_SOUPS: FrozenSet[str] = frozenset({SYNCS_SOUP, CACHE_SOUP})


class Soups(StorePart):
    """Mixed into :class:`tureen.Store`: its soups and their index specs."""

    def register_soup(self, name: str, index_specs: Iterable[IndexSpecArg]) -> None:
        """Creates the soup ``name`` with ``index_specs``: a list of
        :class:`IndexSpec`, ``(path, type)`` pairs or ``{"path", "type"}``
        dicts. Types: ``"string"``, ``"integer"``, ``"floating"``,
        ``"full_text"``.

        Registering an existing soup with the same specs, in any order, does
        nothing.

        Raises:
            InvalidError: the soup exists with other specs (use
                :meth:`alter_soup`); a malformed name (a letter or ``_``, then
                letters, digits, ``_``, ``-`` or ``.``; at most 100); no specs,
                an unknown type, a bad path or a repeated spec.
            TypeError: ``index_specs`` is not a list of specs.
        """
        c_name = c_string(name, "the soup name")
        c_specs = specs_json(index_specs)
        with self._use() as handle:
            check(lib.tureen_soup_register(handle, c_name, c_specs))

    def soup_exists(self, name: str) -> bool:
        """Whether the soup ``name`` exists."""
        c_name = c_string(name, "the soup name")
        out = ctypes.c_int()
        with self._use() as handle:
            check(lib.tureen_soup_exists(handle, c_name, ctypes.byref(out)))
        return bool(out.value)

    def soup_names(self, *, include_engine: bool = False) -> List[str]:
        """The names of the app's soups, sorted.

        The soups the library's engines keep for themselves
        (:data:`tureen.ENGINE_SOUPS`: the sync states' ``"syncs_soup"``, the
        cache's ``"cache_soup"``) are left out unless ``include_engine`` is
        true; they can be read like any soup, never written.
        """
        with self._use() as handle:
            text = call_for_string(lib.tureen_soup_names, handle)
        names: List[str] = json.loads(text)
        if include_engine:
            return names
        return [name for name in names if name not in ENGINE_SOUPS]

    def index_specs(self, name: str) -> List[IndexSpec]:
        """The soup's index specs, in registration order.

        Raises:
            NotFoundError: no soup ``name``.
        """
        c_name = c_string(name, "the soup name")
        with self._use() as handle:
            text = call_for_string(lib.tureen_soup_index_specs, handle, c_name)
        return specs_from_json(json.loads(text))

    def alter_soup(
        self, name: str, index_specs: Iterable[IndexSpecArg], reindex: bool = True
    ) -> None:
        """Replaces the soup's index specs (the same forms as
        :meth:`register_soup`).

        Indexes whose path and type are kept keep their values. New ones are
        computed from every entry when ``reindex`` is true; otherwise they are
        empty (no entry is found by them) until :meth:`reindex_soup`. Entries,
        their ids and dates are kept.

        Crash-safe: if the process dies during the alter, the next open
        finishes it. If it fails with an error, the soup is unchanged. Reads on
        other threads continue meanwhile; writes wait.

        Raises:
            InvalidError: bad specs.
            NotFoundError: no soup ``name``.
        """
        c_name = c_string(name, "the soup name")
        c_specs = specs_json(index_specs)
        with self._use() as handle:
            check(lib.tureen_soup_alter(handle, c_name, c_specs, 1 if reindex else 0))

    def reindex_soup(self, name: str, paths: Iterable[str]) -> None:
        """Recomputes the indexes at ``paths`` (a list of indexed paths) from
        every entry, in one transaction.

        Raises:
            InvalidError: a path that is not indexed.
            NotFoundError: no soup ``name``.
        """
        c_name = c_string(name, "the soup name")
        c_paths = json_text(plain_list(paths, "paths", "indexed paths (str)"), "paths")
        with self._use() as handle:
            check(lib.tureen_soup_reindex(handle, c_name, c_paths))

    def clear_soup(self, name: str) -> None:
        """Removes every entry of the soup and keeps the soup (ids are not
        reused). Raises NotFoundError for an unknown soup."""
        c_name = c_string(name, "the soup name")
        with self._use() as handle:
            check(lib.tureen_soup_clear(handle, c_name))

    def drop_soup(self, name: str) -> None:
        """Deletes the soup, its entries and its index specs. Raises
        NotFoundError for an unknown soup."""
        c_name = c_string(name, "the soup name")
        with self._use() as handle:
            check(lib.tureen_soup_drop(handle, c_name))

