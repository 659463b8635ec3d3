"""Local changes waiting for sync up, and conflicts: the part of
:class:`tureen.Store` for ``tureen.h``'s local writes and conflict calls."""

from __future__ import annotations

import collections.abc
import json
from typing import Any, Callable, Iterable, List, Mapping, Optional, Union, overload

from ._convert import (
    INT64_MAX,
    INT64_MIN,
    RecordId,
    c_string,
    entries_value,
    ids_text,
    json_text,
    record_ids_text,
)
from ._library import call_for_string, check, lib
from ._queries import Queries
from ._soups import Soups
from ._store_part import Entry
from .errors import NotFoundError
from .sync import Conflict, Resolution, without_sync_fields
from . import query

__all__ = ["LocalChanges"]


class LocalChanges(Queries, Soups):
    """Mixed into :class:`tureen.Store`: writing local changes, listing what
    waits for sync up, and resolving conflicts (built on queries and soups)."""

    @overload
    def local_upsert(
        self, soup: str, entries: Mapping[str, Any], id_field: Optional[str] = None
    ) -> Entry: ...

    @overload
    def local_upsert(
        self, soup: str, entries: Iterable[Mapping[str, Any]], id_field: Optional[str] = None
    ) -> List[Entry]: ...

    def local_upsert(
        self,
        soup: str,
        entries: Union[Mapping[str, Any], Iterable[Mapping[str, Any]]],
        id_field: Optional[str] = None,
    ) -> Union[Entry, List[Entry]]:
        """Saves entries (a dict, or a list of dicts in one transaction) as
        local changes for the next :meth:`sync_up`, setting the change flags
        in the same transaction.

        An entry without ``"_soupEntryId"`` and without a match on
        ``id_field`` (``"id"`` by default) is new: it gets a client id (a
        random UUID) when it has none, and ``"__locally_created__"``. Otherwise
        the stored entry is updated and gets ``"__locally_updated__"`` (one
        created locally and not yet synced stays created).

        Returns:
            The entries as stored: a dict for a dict, a list for a list.

        Raises:
            As :meth:`upsert`.
        """
        return self._local_write(lib.tureen_local_upsert, soup, entries, id_field)

    @overload
    def local_merge(
        self, soup: str, entries: Mapping[str, Any], id_field: Optional[str] = None
    ) -> Entry: ...

    @overload
    def local_merge(
        self, soup: str, entries: Iterable[Mapping[str, Any]], id_field: Optional[str] = None
    ) -> List[Entry]: ...

    def local_merge(
        self,
        soup: str,
        entries: Union[Mapping[str, Any], Iterable[Mapping[str, Any]]],
        id_field: Optional[str] = None,
    ) -> Union[Entry, List[Entry]]:
        """:meth:`local_upsert` that merges, as SmartSync's
        ``StoreCache.save``: an entry found stored (by ``"_soupEntryId"``,
        else by ``id_field``, ``"id"`` by default) keeps the members not
        given; each member given replaces the stored one (``None`` sets it to
        null). :meth:`local_upsert` instead replaces the whole entry. The
        merge is shallow: a member holding a dict is replaced whole.

        The entry is marked changed as :meth:`local_upsert` marks it, with
        the same events; an entry not found is created as it creates one.

        Returns:
            The entries as stored, merged: a dict for a dict, a list for a list.

        Raises:
            As :meth:`local_upsert`.
        """
        return self._local_write(lib.tureen_local_merge, soup, entries, id_field)

    def _local_write(
        self,
        function: Callable[..., int],
        soup: str,
        entries: Union[Mapping[str, Any], Iterable[Mapping[str, Any]]],
        id_field: Optional[str],
    ) -> Union[Entry, List[Entry]]:
        """Calls ``tureen_local_upsert`` or ``tureen_local_merge``, which
        take the same arguments."""
        c_soup = c_string(soup, "the soup name")
        c_entries = json_text(entries_value(entries), "the entries")
        c_id_field = None if id_field is None else c_string(id_field, "id_field")
        with self._use() as handle:
            text = call_for_string(function, handle, c_soup, c_entries, c_id_field)
        result: Union[Entry, List[Entry]] = json.loads(text)
        return result

    def local_read(
        self, soup: str, ids: Iterable[RecordId], id_field: Optional[str] = None, *, sync_fields: bool = True
    ) -> List[Entry]:
        """The entries of the records with these ids of their own (the values
        of ``id_field``, ``"id"`` by default: $fh.sync's ``doRead(uid)``), as
        :meth:`retrieve` gives them: in the order asked for, ids with no
        entry skipped, a record deleted locally and not yet synced included
        (``"__locally_deleted__"`` true). ``id_field`` must be a string,
        integer or floating index of the soup; an int id finds ``"7"`` in a
        string index. ``sync_fields`` as :meth:`retrieve`.

        Raises:
            InvalidError: an id that is neither a str nor a number, or
                ``id_field`` is not such an index.
            NotFoundError: no soup ``soup``.
            ConstraintError: several entries hold one id.
            QueryError: past ``query_memory_mb``, as :meth:`retrieve`.
            TypeError: ``ids`` is not a list.
        """
        c_soup = c_string(soup, "the soup name")
        c_id_field = None if id_field is None else c_string(id_field, "id_field")
        c_ids = record_ids_text(ids)
        with self._use() as handle:
            text = call_for_string(lib.tureen_local_read, handle, c_soup, c_id_field, c_ids)
        found: List[Entry] = json.loads(text)
        return found if sync_fields else [without_sync_fields(entry) for entry in found]

    def local_delete_records(self, soup: str, ids: Iterable[RecordId], id_field: Optional[str] = None) -> None:
        """:meth:`local_delete` of the records with these ids of their own
        (as :meth:`local_read` finds them: $fh.sync's ``doDelete(uid)``):
        the same marks and events; an id given twice counts once.

        Raises:
            NotFoundError: an id no entry holds (nothing is changed), or no
                soup ``soup``.
            InvalidError: as :meth:`local_read`; ``"syncs_soup"``.
            ConstraintError: several entries hold one id.
            TypeError: ``ids`` is not a list.
        """
        c_soup = c_string(soup, "the soup name")
        c_id_field = None if id_field is None else c_string(id_field, "id_field")
        c_ids = record_ids_text(ids)
        with self._use() as handle:
            check(lib.tureen_local_delete_records(handle, c_soup, c_id_field, c_ids))

    def local_delete(self, soup: str, ids: Iterable[int]) -> None:
        """Marks the entries with ``ids`` (a list of ``_soupEntryId``) deleted
        locally: the next :meth:`sync_up` deletes them on the server, then from
        the soup. An entry created locally and never synced is removed at once.
        Its events name each record by the ``id_field`` the soup's last
        :meth:`local_upsert` was given (``"id"`` before any).

        Raises:
            NotFoundError: an id that is not in the soup (nothing is changed),
                or no soup ``soup``.
            TypeError: ``ids`` is not a list.
        """
        c_soup = c_string(soup, "the soup name")
        c_ids = ids_text(ids)
        with self._use() as handle:
            check(lib.tureen_local_delete(handle, c_soup, c_ids))

    def conflicts(self, soup: str) -> List[Conflict]:
        """The soup's conflicts, kept by sync up in LEAVE_IF_CHANGED or a
        MERGE_FAIL_* mode and by sync down in LEAVE_IF_CHANGED meeting a
        deletion.

        Each is a dict: ``"entryId"``, ``"id"`` (the record's), ``"syncId"``,
        ``"base"`` (the copy of the last sync), ``"theirs"`` (the server's;
        None when the server deleted it), ``"yours"`` (None when deleted
        locally), and ``"remoteChanges"``, ``"localChanges"``,
        ``"conflictingChanges"`` (lists of field names). ``"theirs"`` is
        the server's latest copy seen: a later one that a sync up's failed
        precondition or a LEAVE_IF_CHANGED sync down receives while the
        conflict is open replaces it (with that sync's ``"syncId"``).

        Raises:
            NotFoundError: no soup ``soup``.
        """
        c_soup = c_string(soup, "the soup name")
        with self._use() as handle:
            text = call_for_string(lib.tureen_conflicts, handle, c_soup)
        found: List[Conflict] = json.loads(text)
        return found

    def resolve_conflict(
        self,
        soup: str,
        entry_id: int,
        resolution: Resolution,
        merged: Optional[Mapping[str, Any]] = None,
    ) -> None:
        """Resolves the conflict of entry ``entry_id`` (its ``"entryId"``):

        - ``"yours"`` (:data:`tureen.sync.YOURS`): keep the local record; the
          next sync up overwrites the server's;
        - ``"theirs"``: replace it by the server's (or remove it when the
          server deleted it); nothing is left to send;
        - ``"merged"``: save ``merged`` (a dict) as the local record; the next
          sync up sends it. ``merged`` is given with ``"merged"`` only.

        Raises:
            InvalidError: a bad resolution, or a bad (or missing, or
                unexpected) ``merged``.
            NotFoundError: no conflict for that entry.
            TypeError: ``entry_id`` is not an int, ``merged`` not a dict.
        """
        c_soup = c_string(soup, "the soup name")
        if not isinstance(entry_id, int) or isinstance(entry_id, bool):
            raise TypeError("entry_id must be an int, not %s" % type(entry_id).__name__)
        if not INT64_MIN <= entry_id <= INT64_MAX:
            raise OverflowError("entry_id %d does not fit a 64-bit integer" % entry_id)
        c_resolution = c_string(resolution, "the resolution")
        c_merged: Optional[bytes] = None
        if merged is not None:
            if not isinstance(merged, collections.abc.Mapping):
                raise TypeError("merged must be a dict, not %s" % type(merged).__name__)
            c_merged = json_text(dict(merged), "the merged record")
        with self._use() as handle:
            check(lib.tureen_conflict_resolve(handle, c_soup, entry_id, c_resolution, c_merged))

    def pending(self, soup: str, *, sync_fields: bool = True) -> List[Entry]:
        """The soup's local changes not yet synced (entries whose
        ``"__local__"`` is true: created, updated or deleted here), in entry
        id order. ``sync_fields=False`` leaves out the flags that say which
        (:data:`tureen.sync.SYNC_FIELDS`).

        Raises:
            NotFoundError: no soup ``soup``.
        """
        if not self.soup_exists(soup):
            raise NotFoundError("no soup named %r" % soup)
        refs = (soup,) * 4
        spec = query.smart("select {%s:_soup} from {%s} where {%s:__local__} = 1 order by {%s:_soupEntryId}" % refs,
                           page_size=1000)
        return [row[0] for row in self.iter_query(spec, sync_fields=sync_fields)]

