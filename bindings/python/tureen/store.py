"""The :class:`Store` class: an open Tureen store file."""

from __future__ import annotations

import collections.abc
import contextlib
import ctypes
import json
import threading
import types
from types import TracebackType
from typing import (
    Any,
    Callable,
    Dict,
    Iterable,
    Iterator,
    List,
    Literal,
    Mapping,
    Optional,
    Type,
    Union,
    overload,
)

from ._convert import PathArg, c_json, c_path, c_string, display_path, json_text, plain_list
from ._library import StoreHandle, _take_string, check, errmsg, lib
from .errors import MisuseError, error_for
from .index_spec import IndexSpec, IndexSpecArg, specs_from_json, specs_json

__all__ = ["Store", "Entry", "QuerySpec"]

RawKey = Union[str, bytes]

#: An entry: a JSON object as a dict.
Entry = Dict[str, Any]
#: A query spec: a JSON object (see :mod:`tureen.query` for builders).
QuerySpec = Mapping[str, Any]

_INT_MIN = -(2**31)
_INT_MAX = 2**31 - 1


def _call_for_string(function: Callable[..., int], *args: Any) -> str:
    """Calls ``function(*args, &out)`` for a ``char **`` result and returns it.

    The status is checked before ``tureen_free`` runs: the error message is
    only valid until the thread's next tureen_* call.
    """
    out = ctypes.c_void_p()
    rc = function(*args, ctypes.byref(out))
    if rc != 0:
        error = error_for(rc, errmsg())
        if out.value:  # NULL on error by contract; freed should it not be
            lib.tureen_free(out.value)
        raise error
    text = _take_string(out)
    return "" if text is None else text


def _json_result(text: str) -> Any:
    return json.loads(text)


def _spec_text(spec: QuerySpec) -> bytes:
    """A query spec as JSON text. Raises TypeError unless it is a mapping."""
    if not isinstance(spec, collections.abc.Mapping):
        raise TypeError("a query spec must be a dict, not %s" % type(spec).__name__)
    return json_text(dict(spec), "the query spec")


def _ids_text(ids: Iterable[int]) -> bytes:
    return json_text(plain_list(ids, "ids", "entry ids (ints)"), "ids")


class _RemoveDescriptor:
    """``Store.remove``: on the class, deletes a closed store file
    (``tureen_store_remove``); on an open store, removes entries of a soup
    (``tureen_remove``)."""

    @overload
    def __get__(self, obj: None, objtype: Optional[type] = None) -> Callable[[PathArg], None]: ...

    @overload
    def __get__(
        self, obj: "Store", objtype: Optional[type] = None
    ) -> Callable[[str, Iterable[int]], None]: ...

    def __get__(self, obj: Optional["Store"], objtype: Optional[type] = None) -> Any:
        if obj is None:
            return _remove_store
        return types.MethodType(Store._remove_entries, obj)


def _key_options(
    key: Optional[str],
    raw_key: Optional[RawKey],
    unencrypted: bool,
    kdf_iter: Optional[int],
) -> Dict[str, Any]:
    """The keying members of an options object; only those given.

    Whether exactly one way of keying was given is the library's to check, so
    its message (and TUREEN_E_INVALID) is what the caller sees.
    """
    options: Dict[str, Any] = {}
    if key is not None:
        options["key"] = key
    if raw_key is not None:
        options["raw_key"] = raw_key.hex() if isinstance(raw_key, (bytes, bytearray)) else raw_key
    if unencrypted:
        options["unencrypted"] = True
    if kdf_iter is not None:
        options["kdf_iter"] = kdf_iter
    return options


class Store:
    """An open store: one SQLCipher-encrypted (or explicitly unencrypted) file.

    Get one with :meth:`Store.open`; release it with :meth:`close` or a
    ``with`` block::

        with tureen.Store.open("notes.db", key="correct horse") as store:
            print(store.size())

    Any thread may use a Store. :meth:`close` waits for calls in progress on
    other threads and makes later calls raise :class:`~tureen.MisuseError`.
    A Store that is garbage-collected while still open is closed then.
    """

    def __init__(self, handle: Any, path: str) -> None:
        """Internal: use :meth:`Store.open`."""
        if not isinstance(handle, StoreHandle) or not handle:
            raise TypeError("use Store.open() to get a Store")
        self._handle: Optional[Any] = handle
        self._path = path
        self._cond = threading.Condition(threading.Lock())
        self._active = 0  # calls in progress with self._handle

    # -- opening and closing -------------------------------------------------

    @classmethod
    def open(
        cls,
        path: PathArg,
        key: Optional[str] = None,
        *,
        raw_key: Optional[RawKey] = None,
        unencrypted: bool = False,
        kdf_iter: Optional[int] = None,
        busy_timeout_ms: Optional[int] = None,
        create: bool = True,
    ) -> "Store":
        """Opens the store file at ``path``, creating it unless ``create`` is False.

        Give exactly one way of keying:

        Args:
            path: the store file (str or os.PathLike). Its directory must exist.
            key: a passphrase, stretched with PBKDF2 (``kdf_iter`` rounds,
                256000 by default; a store made with a custom count must always
                be opened with that count).
            raw_key: a 256-bit key used as is: 64 hex digits, or 32 bytes.
            unencrypted: True for a store without encryption (never implied).
            kdf_iter: PBKDF2 rounds for ``key``.
            busy_timeout_ms: how long to wait for another process's lock
                before :class:`~tureen.BusyError` (library default 5000).
            create: False to raise :class:`~tureen.NotFoundError` rather than
                create a missing store.

        Raises:
            BadKeyError: wrong key, or not a Tureen store (the message says
                which when it can: unencrypted SQLite file, wrong size, ...).
            InvalidError: no key, several keys, a bad option value.
            DiskError: directory missing or not writable (the message names
                the path).
            NotFoundError: no file and ``create`` is False.
            InternalError: SQLCipher cannot be loaded, or cannot encrypt in
                this process.
        """
        options = _key_options(key, raw_key, unencrypted, kdf_iter)
        if busy_timeout_ms is not None:
            options["busy_timeout_ms"] = busy_timeout_ms
        if not create:
            options["create"] = False
        c_path_arg = c_path(path)
        handle = StoreHandle()
        check(lib.tureen_store_open(c_path_arg, c_json(options), ctypes.byref(handle)))
        return cls(handle, display_path(path))

    def close(self) -> None:
        """Closes the store (checkpointing its write-ahead log).

        Waits for calls in progress on other threads. Closing a closed Store
        does nothing; any other method of it then raises MisuseError. Do not
        close a store from inside a callback of one of its own calls.
        """
        with self._cond:
            handle = self._handle
            if handle is None:
                return
            self._handle = None  # calls from now on fail; in-flight ones finish
            while self._active:
                self._cond.wait()
            # Still holding the lock, so that a concurrent close() returns only
            # once the store really is closed.
            check(lib.tureen_store_close(handle))

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._handle is None

    @property
    def path(self) -> str:
        """The path the store was opened with."""
        return self._path

    @contextlib.contextmanager
    def _use(self) -> Iterator[Any]:
        """The handle, kept open for the duration of a call."""
        with self._cond:
            handle = self._handle
            if handle is None:
                raise MisuseError("the store %r is closed" % self._path)
            self._active += 1
        try:
            yield handle
        finally:
            with self._cond:
                self._active -= 1
                if not self._active:
                    self._cond.notify_all()

    def __enter__(self) -> "Store":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if getattr(self, "_handle", None) is not None and not self._active:
                self.close()
        except Exception:  # pragma: no cover - interpreter shutdown, nothing to report to
            pass

    def __repr__(self) -> str:
        return "<tureen.Store %r %s>" % (self._path, "closed" if self.closed else "open")

    # -- store operations ----------------------------------------------------

    def rekey(
        self,
        key: Optional[str] = None,
        *,
        raw_key: Optional[RawKey] = None,
        unencrypted: bool = False,
        kdf_iter: Optional[int] = None,
    ) -> None:
        """Re-encrypts the store under a new key (same keying arguments as
        :meth:`open`); ``unencrypted=True`` decrypts it.

        Crash-safe: if the process dies meanwhile, the store opens with exactly
        one of the old and new keys. The store stays open and usable.

        Raises:
            MisuseError: the store is open more than once in this process.
            InvalidError: bad keying arguments.
            DiskError, BusyError: the store keeps its old key.
        """
        options = c_json(_key_options(key, raw_key, unencrypted, kdf_iter))
        with self._use() as handle:
            check(lib.tureen_store_rekey(handle, options))

    def size(self) -> int:
        """The bytes the store takes on disk: the file plus its write-ahead log."""
        out = ctypes.c_int64()
        with self._use() as handle:
            check(lib.tureen_store_size(handle, ctypes.byref(out)))
        return int(out.value)

    # -- maintenance ---------------------------------------------------------

    def compact(self) -> None:
        """Gives the space of deleted entries back to the file system (VACUUM,
        then a truncating checkpoint of the write-ahead log).

        Needs free disk about the size of the store while it runs; writes on
        other threads wait meanwhile, reads do not.

        Raises:
            DiskError, BusyError: the store is unchanged.
        """
        with self._use() as handle:
            check(lib.tureen_store_compact(handle))

    def check(self) -> None:
        """Verifies the whole store (SQLite's integrity check, every page
        authenticated by SQLCipher as it is read); returns when it is sound.

        Raises:
            CorruptError: the store is damaged; the message lists the first
                problems.
        """
        with self._use() as handle:
            check(lib.tureen_store_check(handle))

    # -- soups ---------------------------------------------------------------

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

    def soup_names(self) -> List[str]:
        """The names of the store's soups, sorted."""
        with self._use() as handle:
            text = _call_for_string(lib.tureen_soup_names, handle)
        names: List[str] = _json_result(text)
        return names

    def index_specs(self, name: str) -> List[IndexSpec]:
        """The soup's index specs, in registration order.

        Raises:
            NotFoundError: no soup ``name``.
        """
        c_name = c_string(name, "the soup name")
        with self._use() as handle:
            text = _call_for_string(lib.tureen_soup_index_specs, handle, c_name)
        return specs_from_json(_json_result(text))

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

    # -- entries -------------------------------------------------------------

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
        value: Any
        if isinstance(entries, collections.abc.Mapping):
            value = dict(entries)
        else:
            items = plain_list(entries, "entries", "entries (dicts)")
            value = [
                dict(entry)
                if isinstance(entry, collections.abc.Mapping) and not isinstance(entry, dict)
                else entry
                for entry in items
            ]
        c_entries = json_text(value, "the entries")
        c_external = (
            None if external_id_path is None else c_string(external_id_path, "external_id_path")
        )
        with self._use() as handle:
            if not return_result:
                check(lib.tureen_upsert(handle, c_soup, c_entries, c_external, None))
                return None
            text = _call_for_string(lib.tureen_upsert, handle, c_soup, c_entries, c_external)
        result: Union[Entry, List[Entry]] = _json_result(text)
        return result

    def retrieve(self, soup: str, ids: Iterable[int]) -> List[Entry]:
        """The entries with ``ids`` (a list of ints), in the order asked for;
        ids with no entry are skipped. Reads a consistent snapshot.

        Raises:
            InvalidError: an id that is not an integer.
            NotFoundError: no soup ``soup``.
            TypeError: ``ids`` is not a list.
        """
        c_soup = c_string(soup, "the soup name")
        c_ids = _ids_text(ids)
        with self._use() as handle:
            text = _call_for_string(lib.tureen_retrieve, handle, c_soup, c_ids)
        entries: List[Entry] = _json_result(text)
        return entries

    #: On the class, ``Store.remove(path)`` deletes a closed store file; on an
    #: open store, ``store.remove(soup, ids)`` removes entries.
    remove = _RemoveDescriptor()

    def _remove_entries(self, soup: str, ids: Iterable[int]) -> None:
        """Removes the entries of ``soup`` with ``ids`` (a list of ints), in
        one transaction; ids with no entry are ignored.

        (``Store.remove(path)``, called on the class, deletes a store file.)

        Raises:
            InvalidError: an id that is not an integer.
            NotFoundError: no soup ``soup``.
            TypeError: ``ids`` is not a list.
        """
        c_soup = c_string(soup, "the soup name")
        c_ids = _ids_text(ids)
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
        c_spec = _spec_text(spec)
        with self._use() as handle:
            check(lib.tureen_remove_by_query(handle, c_spec))

    # -- queries -------------------------------------------------------------

    def query(self, spec: QuerySpec, page_index: int = 0) -> List[Entry]:
        """The entries on page ``page_index`` (from 0) of the query ``spec``
        (a dict; see :mod:`tureen.query` for builders).

        A smart query (:func:`tureen.query.smart`), or an entry query with
        ``"selectPaths"``, returns rows instead: a list per result row of the
        selected values (``{soup:_soup}`` and other JSON values as dicts and
        lists).

        Pages are not snapshots: a change between two calls shows on the next
        page read. Ordered results are ordered by the path, then by id, so
        pages never overlap.

        Raises:
            QueryError: a malformed spec, a path with no index, a negative
                page.
            NotFoundError: no such soup.
            TypeError: ``spec`` is not a dict or ``page_index`` not an int.
        """
        c_spec = _spec_text(spec)
        if not isinstance(page_index, int):
            raise TypeError("page_index must be an int, not %s" % type(page_index).__name__)
        if not _INT_MIN <= page_index <= _INT_MAX:
            raise OverflowError("page_index %d does not fit a C int" % page_index)
        with self._use() as handle:
            text = _call_for_string(lib.tureen_query, handle, c_spec, page_index)
        entries: List[Entry] = _json_result(text)
        return entries

    def count(self, spec: QuerySpec) -> int:
        """How many entries the query ``spec`` matches (on all pages); for a
        smart query, how many rows it returns.

        Raises:
            QueryError, NotFoundError: as :meth:`query`.
        """
        c_spec = _spec_text(spec)
        out = ctypes.c_int64()
        with self._use() as handle:
            check(lib.tureen_count(handle, c_spec, ctypes.byref(out)))
        return int(out.value)

    def iter_query(self, spec: QuerySpec) -> Iterator[Entry]:
        """Every entry the query matches, page after page, lazily (for a
        smart query, or one with ``"selectPaths"``: every row).

        Reads page 0, 1, ... (``spec["pageSize"]`` entries or rows each, 10
        by default) until a page comes back with fewer. Each page is read when
        the previous one is used up, so, as with :meth:`query`, changes made
        meanwhile show on the pages still to be read. Closing the store while
        iterating makes the next page read raise MisuseError.

        Raises:
            QueryError, NotFoundError, TypeError: as :meth:`query`, when the
                first page is read.
        """
        c_spec = _spec_text(spec)  # a TypeError now, not at the first next()
        return self._pages(c_spec, spec.get("pageSize"))

    #: Same as :meth:`iter_query`: a lazy iterator over every page's entries
    #: (``list(store.query_all(spec))`` for a list).
    query_all = iter_query

    def _pages(self, c_spec: bytes, page_size: Any) -> Iterator[Entry]:
        if page_size is None:
            page_size = 10  # the library's default
        sized = isinstance(page_size, (int, float)) and not isinstance(page_size, bool)
        page_index = 0
        while True:
            with self._use() as handle:
                text = _call_for_string(lib.tureen_query, handle, c_spec, page_index)
            page: List[Entry] = _json_result(text)
            yield from page
            # An empty page ends it too, whatever pageSize the library took.
            if not page or (sized and len(page) < page_size):
                return
            page_index += 1
            if page_index > _INT_MAX:
                return


def _remove_store(path: PathArg) -> None:
    """Deletes a closed store: the file and its -wal, -shm and -journal
    companions. No key is needed. (``store.remove(soup, ids)``, called on an
    open store, removes entries.)

    Raises:
        MisuseError: the store is open in this process.
        NotFoundError: no file at ``path`` (stray companions are still
            removed).
        DiskError: the file system refused.
    """
    check(lib.tureen_store_remove(c_path(path)))


_remove_store.__qualname__ = "Store.remove"
_remove_store.__name__ = "remove"

# So that ``store.remove`` shows as what it is called.
Store._remove_entries.__name__ = "remove"
Store._remove_entries.__qualname__ = "Store.remove"
