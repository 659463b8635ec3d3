"""The :class:`Store` class: an open Tureen store file."""

from __future__ import annotations

import collections.abc
import contextlib
import ctypes
import itertools
import json
import threading
import types
import urllib.error
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
    Set,
    Tuple,
    Type,
    Union,
    overload,
)

from ._convert import PathArg, c_json, c_path, c_string, display_path, json_text, plain_list
from ._library import (
    AUTH_CALLBACKS_VERSION,
    CALLBACKS_VERSION,
    FreeCtxFn,
    HostFn,
    ProgressFn,
    ReleaseFn,
    StoreHandle,
    _take_string,
    tureen_auth_callbacks,
    call_for_string as _call_for_string,
    check,
    errmsg,
    lib,
    tureen_callbacks,
)
from .errors import ConflictError, Error, MisuseError, NotFoundError, error_for
from . import query
from .index_spec import IndexSpec, IndexSpecArg, specs_from_json, specs_json
from ._interrupt import on_ctrl_c
from .listeners import FREE_CTX as _LISTENER_FREE
from .listeners import Changes, EventCallable, Listener
from .sync import ServerConflict, SyncRef, SyncState, Target
from .sync import sync_ref as _sync_ref
from .managed import ManagedSyncs

__all__ = ["Store", "Entry", "QuerySpec", "SyncRef", "ProgressCallable", "HostCallable"]

RawKey = Union[str, bytes]

#: An entry: a JSON object as a dict.
Entry = Dict[str, Any]
#: A query spec: a JSON object (see :mod:`tureen.query` for builders).
QuerySpec = Mapping[str, Any]

#: A sync: its id (the state's ``_soupEntryId``), its name, or its state.
#: A progress callable: gets the sync state after each page or batch and at
#: the end.
ProgressCallable = Callable[[SyncState], Any]
#: A callback target's function: gets the request, returns the response.
HostCallable = Callable[[Dict[str, Any]], Optional[Mapping[str, Any]]]

_INT_MIN = -(2**31)
_INT_MAX = 2**31 - 1
_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1

# Status codes the binding produces itself (in callback targets' answers).
_OK = 0
_E_NOT_FOUND = 3
_E_NETWORK = 10
_E_HTTP = 11
_E_CONFLICT = 12
_E_CANCELLED = 13
_E_INTERNAL = 99


def _json_result(text: str) -> Any:
    return json.loads(text)


def _spec_text(spec: QuerySpec) -> bytes:
    """A query spec as JSON text. Raises TypeError unless it is a mapping."""
    if not isinstance(spec, collections.abc.Mapping):
        raise TypeError("a query spec must be a dict, not %s" % type(spec).__name__)
    return json_text(dict(spec), "the query spec")


def _ids_text(ids: Iterable[int]) -> bytes:
    return json_text(plain_list(ids, "ids", "entry ids (ints)"), "ids")


def _entries_value(entries: Union[Mapping[str, Any], Iterable[Mapping[str, Any]]]) -> Any:
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


# ---------------------------------------------------------------------------
# Sync plumbing: the C callbacks.
#
# ctypes keeps a callback's machine code alive only as long as its Python
# object, and the library may call free_ctx (and so drop a target) from inside
# one of its calls. The callbacks are therefore created once, here, and live
# as long as the module; ``ctx`` is a key into the tables below, never a
# pointer to a Python object.

_keys = itertools.count(1)  # ctx values; 0 would be NULL
_table_lock = threading.Lock()


class _SyncCall:
    """One sync call in progress on a thread: the user's progress callable
    and what Python raised during the call, so that it is raised after the
    call returns instead of crossing into C."""

    def __init__(self, handle: Any, progress: Optional[ProgressCallable]) -> None:
        self.handle = handle
        self.progress = progress
        #: The first exception a progress callable raised, or a
        #: KeyboardInterrupt (or other BaseException) in a target callable:
        #: raised once the call returns.
        self.error: Optional[BaseException] = None
        #: The first unexpected exception of a target callable (a bug in it):
        #: chained to the error the sync ends with.
        self.host_error: Optional[BaseException] = None
        self._cancel_sent = False
        #: The sync's id, from its first report (a cancel needs it).
        self.sync_id: Optional[int] = None
        self._interrupted = False

    def interrupt(self) -> None:
        """Ctrl-C (from the watcher thread): cancel the sync now if its id
        is known, else at its first report."""
        self._interrupted = True
        if self.sync_id is not None and not self._cancel_sent:
            self._cancel_sent = True
            lib.tureen_sync_cancel(self.handle, str(self.sync_id).encode("ascii"))

    def on_progress(self, state_json: Optional[bytes]) -> None:
        state: Optional[SyncState] = None
        if self.sync_id is None and state_json is not None:
            try:
                self.sync_id = json.loads(state_json.decode("utf-8")).get("_soupEntryId")
            except (ValueError, AttributeError):
                pass
            if self._interrupted:
                self.interrupt()
        if self.error is None and self.progress is not None and state_json is not None:
            try:
                state = json.loads(state_json.decode("utf-8"))
                self.progress(state)  # type: ignore[arg-type]
            except BaseException as exc:  # noqa: B902 - nothing may unwind into C
                self.error = exc
        if self.error is not None and not self._cancel_sent:
            # The caller's code failed: stop the sync at its next page or
            # batch (it saves what it has; a resync continues it) rather than
            # let it run to the end unobserved.
            self._cancel_sent = True
            if state is None and state_json is not None:
                try:
                    state = json.loads(state_json.decode("utf-8"))
                except ValueError:
                    state = None
            sync_id = state.get("_soupEntryId") if isinstance(state, dict) else None
            if isinstance(sync_id, int):
                lib.tureen_sync_cancel(self.handle, str(sync_id).encode("ascii"))


_calls: Dict[int, _SyncCall] = {}
_thread_calls = threading.local()  # .stack: the _SyncCall of each nested call


def _current_call() -> Optional[_SyncCall]:
    stack: List[_SyncCall] = getattr(_thread_calls, "stack", [])
    return stack[-1] if stack else None


def _progress_trampoline(ctx: Optional[int], state_json: Optional[bytes]) -> None:
    try:
        call = _calls.get(ctx or 0)
        if call is not None:
            call.on_progress(state_json)
    except BaseException:  # noqa: B902 - nothing may unwind into C
        pass


_PROGRESS = ProgressFn(_progress_trampoline)


def _error_body(message: str) -> Dict[str, Any]:
    return {"error": message}


def _status_of(exc: BaseException) -> Tuple[int, Dict[str, Any]]:
    """The status and response a callback target reports for ``exc``."""
    if isinstance(exc, ConflictError):
        record = getattr(exc, "record", None)
        if record is None and isinstance(exc.message, collections.abc.Mapping):
            record = exc.message  # raise tureen.ConflictError(current_record)
        if record is not None or isinstance(exc, ServerConflict):
            return _E_CONFLICT, {"record": None if record is None else dict(record)}
        return _E_CONFLICT, _error_body(exc.message or "conflict")
    if isinstance(exc, Error):
        return (exc.code if exc.code > 0 else _E_INTERNAL), _error_body(str(exc))
    if isinstance(exc, urllib.error.HTTPError):
        # A urllib client inside the callable: 404 on remove is "already gone".
        code = _E_NOT_FOUND if exc.code == 404 else _E_HTTP
        return code, _error_body("HTTP %d: %s" % (exc.code, exc.reason))
    if isinstance(exc, (urllib.error.URLError, ConnectionError, TimeoutError)):
        return _E_NETWORK, _error_body("%s: %s" % (type(exc).__name__, exc))
    return _E_INTERNAL, _error_body("%s: %s" % (type(exc).__name__, exc))


class _HostTarget:
    """A registered callback target: its Python callables and the response
    buffers lent to the library until it releases them."""

    def __init__(self, name: str, functions: Dict[str, Optional[HostCallable]]) -> None:
        self.name = name
        self.functions = functions
        self._buffers: Dict[int, Any] = {}
        self._lock = threading.Lock()

    def serve(self, op: str, request_json: Optional[bytes], response: Any) -> int:
        status, body = self._answer(op, request_json)
        try:
            data = json_text(body, "the %s response of target %r" % (op, self.name))
        except (TypeError, ValueError) as exc:
            status = _E_INTERNAL
            data = json_text(_error_body(str(exc)), "an error")
            call = _current_call()
            if call is not None and call.host_error is None:
                call.host_error = exc
        if not response:
            return status
        buffer = ctypes.create_string_buffer(data)
        address = ctypes.addressof(buffer)
        with self._lock:
            self._buffers[address] = buffer
        response[0] = address
        return status

    def _answer(self, op: str, request_json: Optional[bytes]) -> Tuple[int, Any]:
        call = _current_call()
        if call is not None and call.error is not None:
            # Interrupted: the sync is being stopped; do not run more Python.
            return _E_CANCELLED, _error_body("interrupted")
        function = self.functions.get(op)
        if function is None:
            return _E_INTERNAL, _error_body("target %r has no %s function" % (self.name, op))
        try:
            request = json.loads((request_json or b"null").decode("utf-8"))
            result = function(request)
        except Exception as exc:
            status, body = _status_of(exc)
            if status == _E_INTERNAL and call is not None and call.host_error is None:
                call.host_error = exc
            return status, body
        except BaseException as exc:  # noqa: B902 - KeyboardInterrupt, SystemExit
            if call is not None:
                call.error = exc
            return _E_CANCELLED, _error_body("interrupted")
        if result is None:
            return _OK, {}
        if isinstance(result, collections.abc.Mapping) and not isinstance(result, dict):
            result = dict(result)
        return _OK, result

    def release(self, address: Optional[int]) -> None:
        with self._lock:
            self._buffers.pop(address or 0, None)


_targets: Dict[int, _HostTarget] = {}


def _host_trampoline(op: str) -> Any:
    def trampoline(ctx: Optional[int], request_json: Optional[bytes], response: Any) -> int:
        try:
            target = _targets.get(ctx or 0)
            if target is None:
                return _E_INTERNAL
            return target.serve(op, request_json, response)
        except BaseException:  # noqa: B902 - nothing may unwind into C
            return _E_INTERNAL

    trampoline.__name__ = "tureen_host_" + op
    return HostFn(trampoline)


def _release_trampoline(ctx: Optional[int], response: Optional[int]) -> None:
    try:
        target = _targets.get(ctx or 0)
        if target is not None:
            target.release(response)
    except BaseException:  # noqa: B902 - nothing may unwind into C
        pass


def _free_ctx_trampoline(ctx: Optional[int]) -> None:
    try:
        with _table_lock:
            _targets.pop(ctx or 0, None)
    except BaseException:  # noqa: B902 - nothing may unwind into C
        pass


_HOST_FUNCTIONS = {op: _host_trampoline(op) for op in ("fetch", "create", "update", "remove", "refresh")}
_RELEASE = ReleaseFn(_release_trampoline)
_FREE_CTX = FreeCtxFn(_free_ctx_trampoline)


def _target_text(target: Target) -> bytes:
    if not isinstance(target, collections.abc.Mapping):
        raise TypeError("a target must be a dict, not %s" % type(target).__name__)
    return json_text(dict(target), "the target")


def _options_text(
    name: Optional[str],
    merge_mode: Optional[str],
    fieldlist: Optional[Iterable[str]],
    options: Optional[Mapping[str, Any]],
) -> Optional[bytes]:
    """The sync options as JSON text, or None (NULL) when there are none.
    The keyword arguments win over the same members of ``options``."""
    if options is not None and not isinstance(options, collections.abc.Mapping):
        raise TypeError("options must be a dict, not %s" % type(options).__name__)
    merged: Dict[str, Any] = dict(options) if options else {}
    if name is not None:
        merged["name"] = name
    if merge_mode is not None:
        merged["mergeMode"] = merge_mode
    if fieldlist is not None:
        merged["fieldlist"] = plain_list(fieldlist, "fieldlist", "field names (str)")
    return json_text(merged, "the sync options") if merged else None


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


class Store(ManagedSyncs):
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
            query_timeout_ms: how long one query or count may run before it
                raises :class:`~tureen.QueryError` (library default 60000;
                0: no limit).
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
        if query_timeout_ms is not None:
            options["query_timeout_ms"] = query_timeout_ms
        if not create:
            options["create"] = False
        c_path_arg = c_path(path)
        handle = StoreHandle()
        check(lib.tureen_store_open(c_path_arg, c_json(options), ctypes.byref(handle)))
        return cls(handle, display_path(path))

    def close(self) -> None:
        """Closes the store (checkpointing its write-ahead log).

        Queries running on other threads are interrupted (they raise
        :class:`~tureen.CancelledError`); other calls in progress finish
        first. Listeners are removed. Closing a closed Store does nothing (a
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
            while self._active:
                self._cond.wait()
        # Without the lock: the library's listener thread, which close joins,
        # may be inside a callback that calls this Store (and fails at once).
        try:
            check(lib.tureen_store_close(handle))
        finally:
            # The handle is gone, so the library can call none of its
            # targets any more, whether or not it called their free_ctx.
            with _table_lock:
                for key in self._target_keys:
                    _targets.pop(key, None)
            self._target_keys.clear()
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

    # -- events and transactions ---------------------------------------------

    def listen(self, soup: Optional[str], callback: EventCallable) -> Listener:
        """Calls ``callback(change)`` after each commit that changes ``soup``
        (None: any soup; one call per soup a commit changed), on the
        library's thread. ``change`` is a dict: ``{"soup", "created",
        "updated", "deleted", "origin", "cleared"}`` (see the header).
        Returns a :class:`~tureen.listeners.Listener`: a context manager
        whose :meth:`~tureen.listeners.Listener.remove` stops it."""
        c_soup = None if soup is None else c_string(soup, "soup")
        with self._use() as handle:
            return Listener(lambda fn, key, out: lib.tureen_soup_listen(
                handle, c_soup, fn, key, _LISTENER_FREE, ctypes.byref(out)), callback)

    def live_query(self, spec: QuerySpec, callback: EventCallable) -> Listener:
        """Calls ``callback(page)`` with the first page of ``spec`` (what
        :meth:`query` returns for page 0) at once, then again after every
        commit that changes it, on the library's thread. Bursts of commits
        cost one re-run. Returns a :class:`~tureen.listeners.Listener`."""
        c_spec = _spec_text(spec)
        with self._use() as handle:
            return Listener(lambda fn, key, out: lib.tureen_live_query(
                handle, c_spec, fn, key, _LISTENER_FREE, ctypes.byref(out)), callback)

    def changes(self, soup: Optional[str], timeout: Optional[float] = None) -> Changes:
        """An iterator over ``soup``'s change events as they come:
        ``for change in store.changes("contacts", timeout=5)`` ends after
        ``timeout`` seconds without one (None: never). A context manager."""
        return Changes(lambda fn: self.listen(soup, fn), timeout)

    @contextlib.contextmanager
    def transaction(self) -> Iterator["Store"]:
        """``with store.transaction():`` — this thread's writes inside commit
        together when the block ends, or roll back if it raises; listeners
        hear of them once, at the commit. Other threads' writes wait."""
        with self._use() as handle:
            check(lib.tureen_transaction_begin(handle))
        try:
            yield self
        except BaseException:
            with self._use() as handle:
                check(lib.tureen_transaction_rollback(handle))
            raise
        with self._use() as handle:
            check(lib.tureen_transaction_commit(handle))

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
        c_entries = json_text(_entries_value(entries), "the entries")
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

    def get(self, soup: str, entry_id: int) -> Optional[Entry]:
        """The entry with this ``_soupEntryId``, or None when there is none."""
        found = self.retrieve(soup, [entry_id])
        return found[0] if found else None

    def pending(self, soup: str) -> List[Entry]:
        """The soup's local changes not yet synced (entries whose
        ``"__local__"`` is true: created, updated or deleted here), in entry
        id order."""
        if not self.soup_exists(soup):
            raise NotFoundError("no soup named %r" % soup)
        refs = (soup,) * 4
        spec = query.smart("select {%s:_soup} from {%s} where {%s:__local__} = 1 order by {%s:_soupEntryId}" % refs,
                           page_size=1000)
        return [row[0] for row in self.iter_query(spec)]

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
        with self._use() as handle, on_ctrl_c(lambda: lib.tureen_store_interrupt(handle)):
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
        with self._use() as handle, on_ctrl_c(lambda: lib.tureen_store_interrupt(handle)):
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

    # -- sync ----------------------------------------------------------------

    def _run_sync(
        self, function: Callable[..., int], args: Tuple[Any, ...], progress: Optional[ProgressCallable]
    ) -> SyncState:
        """Runs a sync function, ``function(handle, *args, progress_fn, ctx,
        &state_json)``, and returns the final state.

        A failed sync raises the exception of its status with ``state`` set to
        the final state (None when the library returned none, as for a bad
        target). An exception raised by ``progress`` (or a KeyboardInterrupt
        in a target callable) stopped the sync and is raised here, chained to
        the sync's own error.
        """
        if progress is not None and not callable(progress):
            raise TypeError("progress must be callable, not %s" % type(progress).__name__)
        out = ctypes.c_void_p()
        stack: List[_SyncCall] = _thread_calls.__dict__.setdefault("stack", [])
        with self._use() as handle:
            call = _SyncCall(handle, progress)
            key = next(_keys)
            _calls[key] = call
            stack.append(call)
            try:
                with on_ctrl_c(call.interrupt):
                    rc = function(handle, *args, _PROGRESS, key, ctypes.byref(out))
                error = error_for(rc, errmsg()) if rc != 0 else None
                text = _take_string(out)
            finally:
                stack.pop()
                del _calls[key]
        state: Optional[SyncState] = json.loads(text) if text else None
        if error is not None:
            error.state = state  # type: ignore[attr-defined]
            if call.host_error is not None and call.error is None:
                error.__cause__ = call.host_error
        if call.error is not None:
            raise call.error from error
        if error is not None:
            raise error
        return state if state is not None else {}

    def sync_down(
        self,
        target: Target,
        soup: str,
        *,
        name: Optional[str] = None,
        merge_mode: Optional[str] = None,
        options: Optional[Mapping[str, Any]] = None,
        progress: Optional[ProgressCallable] = None,
    ) -> SyncState:
        """Fetches every record of ``target`` into ``soup`` and saves the sync
        state (in the soup ``"syncs_soup"``), so that :meth:`resync` can fetch
        only what changed since.

        The soup must have a string index on the target's id field (``"id"``
        unless the target says otherwise). Records stored carry
        ``"__local__"`` and the three ``"__locally_*__"`` flags, all False.

        Args:
            target: a dict, e.g. from :func:`tureen.sync.kinto_target`,
                :func:`~tureen.sync.rest_target` or
                :func:`~tureen.sync.callback_target`. It is stored with the
                sync state, credentials included, inside the encrypted store.
            soup: the soup's name.
            name: a unique name for the sync (else it is known by its id).
            merge_mode: :data:`tureen.sync.OVERWRITE` (the library's default)
                or :data:`~tureen.sync.LEAVE_IF_CHANGED` (records changed
                locally are kept).
            options: more options as a dict (the keyword arguments win).
            progress: called with the state dict after each page and at the
                end, on this thread. It must not write to this store. If it
                raises, the sync is cancelled (it ends STOPPED, and a resync
                continues it) and the exception is raised from this call.

        Returns:
            The final sync state, status ``"DONE"``.

        Raises:
            InvalidError: a bad target or option, a name already used, a soup
                without an index on the id field.
            NotFoundError: no soup ``soup``, or an unregistered callback target.
            NetworkError, HTTPError: the server could not be reached, or
                refused (after the retries).
            ConflictError: records in conflict (the others were synced).
            CancelledError: stopped by :meth:`sync_cancel`.
            Every error of a sync that started has ``state``: the final state
            (status ``"FAILED"`` or ``"STOPPED"``, with ``"error"``,
            ``"failed"``, ``"failedIds"``, ...); it is None when the library
            kept no state (a bad target, say).
        """
        c_target = _target_text(target)
        c_soup = c_string(soup, "the soup name")
        c_options = _options_text(name, merge_mode, None, options)
        return self._run_sync(lib.tureen_sync_down, (c_target, c_soup, c_options), progress)

    def sync_up(
        self,
        target: Target,
        soup: str,
        *,
        name: Optional[str] = None,
        merge_mode: Optional[str] = None,
        fieldlist: Optional[Iterable[str]] = None,
        options: Optional[Mapping[str, Any]] = None,
        progress: Optional[ProgressCallable] = None,
    ) -> SyncState:
        """Sends the local changes of ``soup`` (records with ``"__local__"``
        true, e.g. from :meth:`local_upsert` and :meth:`local_delete`) to
        ``target``: creates, updates and deletes, batched where the server
        allows it (Kinto: 25 changes per request).

        A record the server rejects fails alone: it keeps its flags and gets
        ``"__last_error__"``; the others are synced, and the call raises
        :class:`~tureen.HTTPError` whose ``state`` lists ``"failedIds"``.

        Args:
            target, soup, name, options, progress: as :meth:`sync_down`.
            merge_mode: :data:`tureen.sync.OVERWRITE` (default),
                :data:`~tureen.sync.LEAVE_IF_CHANGED`,
                :data:`~tureen.sync.MERGE_ACCEPT_YOURS`,
                :data:`~tureen.sync.MERGE_FAIL_IF_CONFLICT` or
                :data:`~tureen.sync.MERGE_FAIL_IF_CHANGED`. The last ones
                compare the server's copy with the base copy kept at sync
                down; conflicts are kept (see :meth:`conflicts`) and the call
                raises :class:`~tureen.ConflictError`.
            fieldlist: send only these fields (and the id).

        Returns:
            The final sync state, status ``"DONE"``.

        Raises:
            As :meth:`sync_down`.
        """
        c_target = _target_text(target)
        c_soup = c_string(soup, "the soup name")
        c_options = _options_text(name, merge_mode, fieldlist, options)
        return self._run_sync(lib.tureen_sync_up, (c_target, c_soup, c_options), progress)

    def resync(self, sync: SyncRef, progress: Optional[ProgressCallable] = None) -> SyncState:
        """Runs the sync ``sync`` (its id, name or state) again.

        A sync down fetches only what changed since its last run, deletions
        included; a stopped or failed one continues from its last saved page.
        A sync up sends the changes made since.

        Raises:
            NotFoundError: no such sync.
            MisuseError: the sync is running now.
            Otherwise as :meth:`sync_down`.
        """
        return self._run_sync(lib.tureen_resync, (_sync_ref(sync),), progress)

    def sync_status(self, sync: SyncRef) -> SyncState:
        """The state of the sync ``sync`` (its id, name or state).

        Raises:
            NotFoundError: no such sync.
        """
        c_sync = _sync_ref(sync)
        with self._use() as handle:
            text = _call_for_string(lib.tureen_sync_status, handle, c_sync)
        state: SyncState = _json_result(text)
        return state

    def sync_cancel(self, sync: SyncRef) -> None:
        """Asks the running sync ``sync`` to stop; meant to be called from
        another thread than the one running it (or from its progress
        callable's helpers).

        The sync stops between pages or batches, saves what it has and ends
        STOPPED: its call raises :class:`~tureen.CancelledError` (with
        ``state``), and :meth:`resync` continues it. Cancelling a sync that is
        not running does nothing.

        Raises:
            NotFoundError: no such sync.
        """
        c_sync = _sync_ref(sync)
        with self._use() as handle:
            check(lib.tureen_sync_cancel(handle, c_sync))

    def clean_ghosts(self, sync: SyncRef) -> int:
        """For the sync down ``sync``: fetches the ids the server holds now
        and removes the soup's records that the server no longer has (local
        changes are kept). Returns how many were removed.

        Raises:
            InvalidError: ``sync`` is a sync up.
            Otherwise as :meth:`resync`.
        """
        c_sync = _sync_ref(sync)
        out = ctypes.c_int64()
        with self._use() as handle:
            check(lib.tureen_clean_ghosts(handle, c_sync, ctypes.byref(out)))
        return int(out.value)

    # -- local changes and conflicts -----------------------------------------

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
        c_soup = c_string(soup, "the soup name")
        c_entries = json_text(_entries_value(entries), "the entries")
        c_id_field = None if id_field is None else c_string(id_field, "id_field")
        with self._use() as handle:
            text = _call_for_string(lib.tureen_local_upsert, handle, c_soup, c_entries, c_id_field)
        result: Union[Entry, List[Entry]] = _json_result(text)
        return result

    def local_delete(self, soup: str, ids: Iterable[int]) -> None:
        """Marks the entries with ``ids`` (a list of ``_soupEntryId``) deleted
        locally: the next :meth:`sync_up` deletes them on the server, then from
        the soup. An entry created locally and never synced is removed at once.

        Raises:
            NotFoundError: an id that is not in the soup (nothing is changed),
                or no soup ``soup``.
            TypeError: ``ids`` is not a list.
        """
        c_soup = c_string(soup, "the soup name")
        c_ids = _ids_text(ids)
        with self._use() as handle:
            check(lib.tureen_local_delete(handle, c_soup, c_ids))

    def conflicts(self, soup: str) -> List[Dict[str, Any]]:
        """The soup's conflicts, kept by sync up in LEAVE_IF_CHANGED or a
        MERGE_FAIL_* mode and by sync down in LEAVE_IF_CHANGED meeting a
        deletion.

        Each is a dict: ``"entryId"``, ``"id"`` (the record's), ``"syncId"``,
        ``"base"`` (the copy of the last sync), ``"theirs"`` (the server's;
        None when the server deleted it), ``"yours"`` (None when deleted
        locally), and ``"remoteChanges"``, ``"localChanges"``,
        ``"conflictingChanges"`` (lists of field names).

        Raises:
            NotFoundError: no soup ``soup``.
        """
        c_soup = c_string(soup, "the soup name")
        with self._use() as handle:
            text = _call_for_string(lib.tureen_conflicts, handle, c_soup)
        found: List[Dict[str, Any]] = _json_result(text)
        return found

    def resolve_conflict(
        self,
        soup: str,
        entry_id: int,
        resolution: str,
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
        if not _INT64_MIN <= entry_id <= _INT64_MAX:
            raise OverflowError("entry_id %d does not fit a 64-bit integer" % entry_id)
        c_resolution = c_string(resolution, "the resolution")
        c_merged: Optional[bytes] = None
        if merged is not None:
            if not isinstance(merged, collections.abc.Mapping):
                raise TypeError("merged must be a dict, not %s" % type(merged).__name__)
            c_merged = json_text(dict(merged), "the merged record")
        with self._use() as handle:
            check(lib.tureen_conflict_resolve(handle, c_soup, entry_id, c_resolution, c_merged))

    # -- callback targets ----------------------------------------------------

    def register_target(
        self,
        name: str,
        *,
        fetch: HostCallable,
        create: Optional[HostCallable] = None,
        update: Optional[HostCallable] = None,
        remove: Optional[HostCallable] = None,
    ) -> None:
        """Registers the callback target ``name`` on this store: Python
        callables doing a server's work, used by syncs whose target is
        ``{"type": "callback", "name": name}``
        (:func:`tureen.sync.callback_target`).

        Each callable gets the request dict and returns the response dict;
        they run on the thread that called the sync. The shapes (the header's
        "Callback targets"):

        - ``fetch({"since": ms or None, "cursor": value or None})`` ->
          ``{"records": [...], "cursor": value, or None on the last page}``;
        - ``create({"record": {...}})`` -> ``{"record": server copy}``;
        - ``update({"record": {...}, "base": base copy or None})`` ->
          ``{"record": server copy}``;
        - ``remove({"id": "...", "base": ...})`` -> anything (None is fine).

        ``create``, ``update`` and ``remove`` are needed for sync up only.
        Records use the id field ``"id"`` and the integer modification field
        ``"last_modified"`` unless the target sets ``idField`` /
        ``modifiedField``.

        To report a failure a callable raises:

        - :class:`tureen.sync.ServerConflict` (``record``: the server's
          current copy), or ``tureen.ConflictError(current_record)``: the
          update conflicts;
        - :class:`~tureen.NotFoundError`: a remove of a record already gone
          (counted as done);
        - :class:`~tureen.NetworkError` (or ConnectionError, TimeoutError,
          urllib's URLError): the library retries the call;
        - :class:`~tureen.HTTPError` or another :class:`~tureen.Error`: that
          record (or, for fetch, the page) fails with the exception's message;
        - any other exception is a bug in the callable: the record fails with
          TUREEN_E_INTERNAL and the exception is chained (``__cause__``) to
          the error the sync raises.

        No exception ever crosses into the library. A KeyboardInterrupt stops
        the sync and is raised from the sync call.

        Registering a name again replaces it.

        Raises:
            InvalidError: a bad name.
            TypeError: a function that is not callable.
        """
        functions: Dict[str, Optional[HostCallable]] = {
            "fetch": fetch,
            "create": create,
            "update": update,
            "remove": remove,
        }
        for op, function in functions.items():
            if function is not None and not callable(function):
                raise TypeError("%s must be callable, not %s" % (op, type(function).__name__))
        if fetch is None:
            raise TypeError("fetch is required")
        def register(handle: Any, c_name: bytes, key: int) -> int:
            callbacks = tureen_callbacks(
                version=CALLBACKS_VERSION,
                ctx=key,
                release=_RELEASE,
                free_ctx=_FREE_CTX,
                **{op: (_HOST_FUNCTIONS[op] if f is not None else HostFn()) for op, f in functions.items()},
            )
            return int(lib.tureen_target_register(handle, c_name, ctypes.byref(callbacks)))

        self._register_host(c_string(name, "the target name"), _HostTarget(name, functions), register)

    def _register_host(self, c_name: bytes, host: "_HostTarget", register: Callable[[Any, bytes, int], int]) -> None:
        """Registers ``host`` under a new ctx key with ``register(handle,
        c_name, key)``; the key is dropped again if the library refuses."""
        key = next(_keys)
        with _table_lock:
            _targets[key] = host
        with self._use() as handle:
            rc = register(handle, c_name, key)
            if rc != 0:
                error = error_for(rc, errmsg())
                with _table_lock:
                    _targets.pop(key, None)
                raise error
            with _table_lock:
                self._target_keys.add(key)

    def unregister_target(self, name: str) -> None:
        """Removes the callback target ``name``, waiting for a sync using it
        to finish.

        Raises:
            NotFoundError: no target ``name`` on this store.
        """
        c_name = c_string(name, "the target name")
        with self._use() as handle:
            check(lib.tureen_target_unregister(handle, c_name))

    def register_auth(self, name: str, refresh: Callable[[Dict[str, Any]], Mapping[str, Any]]) -> None:
        """Registers the credential refresher ``name`` (a login session):
        targets whose ``auth`` holds ``"refresh": name`` call
        ``refresh({"target": redacted target, "status": 401})`` when the
        server answers 401, and send the request once more with the
        credentials it returns: ``{"bearer": ...}`` or ``{"user": ...,
        "password": ...}``. They are kept for the sync's next runs. It runs on
        the thread running the sync; an exception fails the sync with
        :class:`~tureen.HTTPError`."""
        if not callable(refresh):
            raise TypeError("refresh must be callable, not %s" % type(refresh).__name__)
        def register(handle: Any, c_name: bytes, key: int) -> int:
            callbacks = tureen_auth_callbacks(version=AUTH_CALLBACKS_VERSION, ctx=key, refresh=_HOST_FUNCTIONS["refresh"],
                                              release=_RELEASE, free_ctx=_FREE_CTX)
            return int(lib.tureen_auth_register(handle, c_name, ctypes.byref(callbacks)))

        self._register_host(c_string(name, "the refresher name"), _HostTarget(name, {"refresh": refresh}), register)  # type: ignore[dict-item]

    def unregister_auth(self, name: str) -> None:
        """Removes the credential refresher ``name``."""
        c_name = c_string(name, "the refresher name")
        with self._use() as handle:
            check(lib.tureen_auth_unregister(handle, c_name))


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


#: ``tureen.remove_store(path)``: deletes a closed store file and its
#: companions (what ``Store.remove(path)`` does on the class, by a name that
#: means one thing).
remove_store = _remove_store
