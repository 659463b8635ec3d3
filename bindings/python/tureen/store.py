"""The :class:`Store` class: an open Tureen store file.

Each area of the header has its part of the class in a module of its own
(``_soups``, ``_entries``, ``_queries``, ``_syncing``, ``_local_changes``,
``_hosts``, ``_events``, ``managed``); this one opens, closes and maintains
the store, and removes a closed one.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
from types import TracebackType
from typing import Any, Dict, Iterator, Optional, Set, Type, Union

from ._convert import PathArg, c_json, c_path, display_path
from ._blobs import Blobs
from ._cache import Cache
from ._entries import Entries
from ._events import Events
from ._hosts import HostCallable, HostTargets
from ._interrupt import on_ctrl_c
from ._library import StoreHandle, check, lib
from ._local_changes import LocalChanges
from ._store_part import Entry, QuerySpec
from ._sync_call import ProgressCallable, cancel_calls_on
from ._syncing import Syncs
from .errors import CancelledError, MisuseError
from .managed import ManagedSyncs
from .sync import SyncRef

__all__ = ["Store", "Entry", "QuerySpec", "SyncRef", "ProgressCallable", "HostCallable", "remove_store"]

RawKey = Union[str, bytes]


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



class Store(LocalChanges, Entries, Syncs, HostTargets, Events, ManagedSyncs, Cache, Blobs):
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
        # _use takes the lock itself: Condition's __enter__ is Python code,
        # and a Ctrl-C landing in it after the acquire left the lock held
        # for good, so every later call on the store hung.
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._active = 0  # calls in progress with self._handle
        # Of those, the calls that may talk to a server (syncs, cached
        # fetches, blob fetches, clean_ghosts): the library's close stops
        # them and waits for them (syncs are also cancelled here, see
        # cancel_calls_on).
        self._serving = 0
        self._closing = False  # a close() is calling the library
        self._target_keys: Set[int] = set()  # ctx of callback targets registered here

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
        query_timeout_ms: Optional[int] = None,
        query_memory_mb: Optional[int] = None,
        create: bool = True,
        changes_keep_ms: Optional[int] = None,
        changes_keep_count: Optional[int] = None,
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
            query_timeout_ms: how long one query or count may run before it
                raises :class:`~tureen.QueryError` (library default 60000;
                0: no limit).
            query_memory_mb: how much memory one query or count may take
                from SQLite, and how large the page it returns (of entries,
                or of rows: Smart SQL, ``"selectPaths"``) may grow, before it
                raises :class:`~tureen.QueryError` (library default 512; 0: no
                limit). A :meth:`retrieve` answer is held to it too, past its
                first entry.
            create: False to raise :class:`~tureen.NotFoundError` rather than
                create a missing store.
            changes_keep_ms: how long the change feed (:meth:`changes`) keeps
                a change (library default 30 days; 0: no limit).
            changes_keep_count: how many changes it keeps at most (library
                default 100000; 0: no limit). Older ones go now and then as
                this handle writes.

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
        if query_timeout_ms is not None:
            options["query_timeout_ms"] = query_timeout_ms
        if query_memory_mb is not None:
            options["query_memory_mb"] = query_memory_mb
        if not create:
            options["create"] = False
        if changes_keep_ms is not None:
            options["changes_keep_ms"] = changes_keep_ms
        if changes_keep_count is not None:
            options["changes_keep_count"] = changes_keep_count
        c_path_arg = c_path(path)
        handle = StoreHandle()
        with on_ctrl_c():  # the library logs "opened" on this thread
            check(lib.tureen_store_open(c_path_arg, c_json(options), ctypes.byref(handle)))
        return cls(handle, display_path(path))

    def close(self) -> None:
        """Closes the store (checkpointing its write-ahead log).

        Queries running on other threads are interrupted, and calls that
        talk to a server (syncs, cached fetches, blob fetches and reads of a
        blob not yet fetched) are cancelled at their next request, or within
        about a second of the one in flight (they raise
        :class:`~tureen.CancelledError`; a sync ends ``"STOPPED"``); other
        calls in progress finish first. Listeners are removed. Closing a closed Store does nothing (a
        concurrent close returns once the store is closed); any other method
        of it then raises MisuseError. Do not close a store from inside a
        callback of one of its own calls.
        """
        with self._cond:
            handle = self._handle
            if handle is None:
                while self._closing:
                    self._cond.wait()
                return
            self._handle = None  # calls from now on fail; in-flight ones finish
            self._closing = True
            if self._active:
                lib.tureen_store_interrupt(handle)  # a long query must not hold close
                cancel_calls_on(handle)  # nor a sync waiting on a server
            # Calls that talk to a server are not waited for here: one
            # waiting on a slow server would hold close as long as the
            # server held it. The library's close cancels them and returns
            # only once they have returned; the handle is a number, never
            # freed memory, so one that reaches the library after it gets
            # MISUSE (raised as CancelledError, see _use), never a crash.
            while self._active > self._serving:
                self._cond.wait()
        # Without the lock: the library's listener thread, which close joins,
        # may be inside a callback that calls this Store (and fails at once).
        try:
            with on_ctrl_c():  # the library logs "closed" on this thread
                check(lib.tureen_store_close(handle))
        finally:
            with self._cond:
                # The server calls have left the library; they finish
                # their Python (their host callables are done with) here.
                while self._active:
                    self._cond.wait()
            self._forget_host_targets()
            with self._cond:
                self._closing = False
                self._cond.notify_all()

    def interrupt(self) -> None:
        """Stops every query and count running on this store now, on any
        thread: each raises :class:`~tureen.CancelledError`. Later queries
        are not affected. Safe from any thread; does nothing once closed."""
        with self._cond:
            handle = self._handle
        if handle is not None:
            rc = lib.tureen_store_interrupt(handle)
            if rc not in (0, 1):  # 1: closed meanwhile
                check(rc)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called."""
        return self._handle is None

    @property
    def path(self) -> str:
        """The path the store was opened with."""
        return self._path

    @contextlib.contextmanager
    def _use(self, serving: bool = False) -> Iterator[Any]:
        """The handle, kept open for the duration of a call. ``serving``:
        a call of a function that may talk to a server (those the library's
        close cancels), which close does not wait for before the library's
        close; one that reaches the library only after that close raises
        CancelledError rather than MisuseError (it began before close)."""
        with self._lock:
            handle = self._handle
            if handle is None:
                raise MisuseError("the store %r is closed" % self._path)
            self._active += 1
            if serving:
                self._serving += 1
        try:
            if serving:
                # It logs its requests on this thread, maybe through Python.
                with on_ctrl_c():
                    yield handle
            else:
                yield handle
        except MisuseError as exc:
            if serving and self._handle is None:
                raise CancelledError("the store %r was closed during the call" % self._path) from exc
            raise
        finally:
            with self._lock:
                self._active -= 1
                if serving:
                    self._serving -= 1
                self._cond.notify_all()  # close waits for all, or for all but the serving ones

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


def remove_store(path: PathArg) -> None:
    """Deletes a closed store: the file and its -wal, -shm and -journal
    companions. No key is needed.

    Raises:
        MisuseError: the store is open in this process.
        NotFoundError: no file at ``path`` (stray companions are still
            removed).
        DiskError: the file system refused.
    """
    check(lib.tureen_store_remove(c_path(path)))
