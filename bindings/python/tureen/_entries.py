"""Writing, reading and removing entries: the part of :class:`tureen.Store`
for ``tureen.h``'s "Entries"."""

from __future__ import annotations

import json
from typing import Any, Iterable, List, Literal, Mapping, Optional, Union, overload

from ._convert import c_string, entries_value, ids_text, json_text, spec_text
from ._library import call_for_string, check, lib
from ._store_part import Entry, QuerySpec, StorePart
from .sync import without_sync_fields

__all__ = ["Entries"]


class Entries(StorePart):
    """Mixed into :class:`tureen.Store`: the entries of its soups."""

    @overload
    def upsert(
        self,
        soup: str,
        entries: Mapping[str, Any],
        external_id_path: Optional[str] = None,
        *,
        return_result: Literal[True] = True,
    ) -> Entry: ...

    @overload
    def upsert(
        self,
        soup: str,
        entries: Iterable[Mapping[str, Any]],
        external_id_path: Optional[str] = None,
        *,
        return_result: Literal[True] = True,
    ) -> List[Entry]: ...

    @overload
    def upsert(
        self,
        soup: str,
        entries: Union[Mapping[str, Any], Iterable[Mapping[str, Any]]],
        external_id_path: Optional[str] = None,
        *,
        return_result: Literal[False],
    ) -> None: ...

    @overload
    def upsert(
        self,
        soup: str,
        entries: Union[Mapping[str, Any], Iterable[Mapping[str, Any]]],
        external_id_path: Optional[str] = None,
        *,
        return_result: bool,
    ) -> Union[Entry, List[Entry], None]: ...

    def upsert(
        self,
        soup: str,
        entries: Union[Mapping[str, Any], Iterable[Mapping[str, Any]]],
        external_id_path: Optional[str] = None,
        *,
        return_result: bool = True,
    ) -> Union[Entry, List[Entry], None]:
        """Inserts or updates one entry (a dict) or several (a list of dicts,
        written in one transaction: all or none).

        Each entry gains ``"_soupEntryId"`` and ``"_soupLastModifiedDate"``
        (epoch milliseconds). An entry with a non-null ``"_soupEntryId"``
        updates that entry; else, with ``external_id_path`` (a string, integer
        or floating index path of the soup), the one entry whose index there
        equals the entry's is updated, and a new one is inserted when none
        does; else the entry is inserted.

        Args:
            soup: the soup's name.
            entries: a dict, or a list (any iterable) of dicts. Serialised
                with :func:`json.dumps`: NaN and infinities raise ValueError
                before anything is written.
            external_id_path: the index path identifying entries, or None.
            return_result: False to skip building and parsing the stored
                entries (faster for large batches); the call then returns None.

        Returns:
            The entries as stored: a dict for a dict, a list for a list; None
            when ``return_result`` is False.

        Raises:
            InvalidError: an entry that is not an object, a missing or null
                value at ``external_id_path``, a path that is not a string,
                integer or floating index. For a list the message names the
                entry (``"entry 3: ..."``) and nothing was written.
            ConstraintError: several entries match an external id; nothing
                was written.
            NotFoundError: no soup ``soup``.
            TypeError: ``entries`` is neither a dict nor a list of them, or
                holds values json cannot serialise.
            ValueError: NaN or infinity in an entry.
        """
        c_soup = c_string(soup, "the soup name")
        c_entries = json_text(entries_value(entries), "the entries")
        c_external = (
            None if external_id_path is None else c_string(external_id_path, "external_id_path")
        )
        with self._use() as handle:
            if not return_result:
                check(lib.tureen_upsert(handle, c_soup, c_entries, c_external, None))
                return None
            text = call_for_string(lib.tureen_upsert, handle, c_soup, c_entries, c_external)
        result: Union[Entry, List[Entry]] = json.loads(text)
        return result

    def retrieve(self, soup: str, ids: Iterable[int], *, sync_fields: bool = True) -> List[Entry]:
        """The entries with ``ids`` (a list of ints), in the order asked for;
        ids with no entry are skipped. Reads a consistent snapshot.
        ``sync_fields=False`` leaves out the sync bookkeeping fields
        (:data:`tureen.sync.SYNC_FIELDS`).

        The answer is held to the store's ``query_memory_mb`` past its
        first entry, which is always returned however large: an id listed
        many times cannot make it build more. Ask for fewer ids at a time.

        Raises:
            InvalidError: an id that is not an integer.
            NotFoundError: no soup ``soup``.
            QueryError: the entries after the first outgrew
                ``query_memory_mb`` (the message names it); nothing changed.
            TypeError: ``ids`` is not a list.
        """
        c_soup = c_string(soup, "the soup name")
        c_ids = ids_text(ids)
        with self._use() as handle:
            text = call_for_string(lib.tureen_retrieve, handle, c_soup, c_ids)
        entries: List[Entry] = json.loads(text)
        return entries if sync_fields else [without_sync_fields(entry) for entry in entries]

    def get(self, soup: str, entry_id: int, *, sync_fields: bool = True) -> Optional[Entry]:
        """The entry with this ``_soupEntryId``, or None when there is none
        (``sync_fields`` as :meth:`retrieve`)."""
        found = self.retrieve(soup, [entry_id], sync_fields=sync_fields)
        return found[0] if found else None

    def remove(self, soup: str, ids: Iterable[int]) -> None:
        """Removes the entries of ``soup`` with ``ids`` (a list of ints), in
        one transaction; ids with no entry are ignored. (A closed store's file
        is deleted with :func:`tureen.remove_store`.)

        Raises:
            InvalidError: an id that is not an integer.
            NotFoundError: no soup ``soup``.
            TypeError: ``ids`` is not a list.
        """
        c_soup = c_string(soup, "the soup name")
        c_ids = ids_text(ids)
        with self._use() as handle:
            check(lib.tureen_remove(handle, c_soup, c_ids))

    def remove_by_query(self, spec: QuerySpec) -> None:
        """Removes every entry the query matches (all pages, not one), in one
        transaction.

        Raises:
            QueryError: a malformed spec, a path with no index, a smart
                query or one with ``"selectPaths"`` (not taken here).
            NotFoundError: no such soup.
        """
        c_spec = spec_text(spec)
        with self._use() as handle:
            check(lib.tureen_remove_by_query(handle, c_spec))

