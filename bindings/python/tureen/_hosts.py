"""Callback targets and credential refreshers: Python callables the library
calls during a sync, in place of a server (``tureen.h``, "Callback
targets" and "Credential refreshers").

ctypes keeps a callback's machine code alive only as long as its Python
object, and the library may call free_ctx (and so drop a target) from inside
one of its calls. The callbacks are therefore created once, here, and live as
long as the module; ``ctx`` is a key into the table of targets below, never a
pointer to a Python object.
"""

from __future__ import annotations

import collections.abc
import ctypes
import itertools
import json
import threading
import urllib.error
from typing import Any, Callable, Dict, Mapping, Optional, Set, Tuple

from ._convert import c_string, json_text
from ._library import (
    AUTH_CALLBACKS_VERSION,
    CALLBACKS_VERSION,
    TRANSFORMER_VERSION,
    FreeCtxFn,
    HostFn,
    ReleaseFn,
    check,
    errmsg,
    lib,
    tureen_auth_callbacks,
    tureen_callbacks,
    tureen_transformer,
)
from ._interrupt import in_python_code
from ._store_part import StorePart
from ._sync_call import current_call
from .errors import ConflictError, Error, error_for
from .status import Status
from .sync import ServerConflict

__all__ = ["HostCallable", "HostTargets"]

#: A callback target's function: gets the request, returns the response.
HostCallable = Callable[[Dict[str, Any]], Optional[Mapping[str, Any]]]

#: A transformer's encode or decode: gets a record, returns the record.
RecordCallable = Callable[[Dict[str, Any]], Mapping[str, Any]]

_keys = itertools.count(1)  # ctx values; 0 would be NULL
_table_lock = threading.Lock()


def _error_body(message: str) -> Dict[str, Any]:
    return {"error": message}


def _status_of(exc: BaseException) -> Tuple[int, Dict[str, Any]]:
    """The status and response a callback target reports for ``exc``."""
    if isinstance(exc, ConflictError):
        record = getattr(exc, "record", None)
        if record is None and isinstance(exc.message, collections.abc.Mapping):
            record = exc.message  # raise tureen.ConflictError(current_record)
        if record is not None or isinstance(exc, ServerConflict):
            return Status.CONFLICT, {"record": None if record is None else dict(record)}
        return Status.CONFLICT, _error_body(exc.message or "conflict")
    if isinstance(exc, Error):
        return (exc.code if exc.code > 0 else Status.INTERNAL), _error_body(str(exc))
    if isinstance(exc, urllib.error.HTTPError):
        # A urllib client inside the callable: 404 on remove is "already gone".
        code = Status.NOT_FOUND if exc.code == 404 else Status.HTTP
        return code, _error_body("HTTP %d: %s" % (exc.code, exc.reason))
    if isinstance(exc, (urllib.error.URLError, ConnectionError, TimeoutError)):
        return Status.NETWORK, _error_body("%s: %s" % (type(exc).__name__, exc))
    return Status.INTERNAL, _error_body("%s: %s" % (type(exc).__name__, exc))


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
            status = Status.INTERNAL
            data = json_text(_error_body(str(exc)), "an error")
            call = current_call()
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
        call = current_call()
        if call is not None and call.error is not None:
            # Interrupted: the sync is being stopped; do not run more Python.
            return Status.CANCELLED, _error_body("interrupted")
        function = self.functions.get(op)
        if function is None:
            return Status.INTERNAL, _error_body("target %r has no %s function" % (self.name, op))
        try:
            request = json.loads((request_json or b"null").decode("utf-8"))
            with in_python_code():
                result = function(request)
        except Exception as exc:
            status, body = _status_of(exc)
            if status == Status.INTERNAL and call is not None and call.host_error is None:
                call.host_error = exc
            return status, body
        except BaseException as exc:  # noqa: B902 - KeyboardInterrupt, SystemExit
            if call is not None:
                call.error = exc
            return Status.CANCELLED, _error_body("interrupted")
        if result is None:
            return Status.OK, {}
        if isinstance(result, collections.abc.Mapping) and not isinstance(result, dict):
            result = dict(result)
        return Status.OK, result

    def release(self, address: Optional[int]) -> None:
        with self._lock:
            self._buffers.pop(address or 0, None)


_targets: Dict[int, _HostTarget] = {}


def _host_trampoline(op: str) -> Any:
    def trampoline(ctx: Optional[int], request_json: Optional[bytes], response: Any) -> int:
        try:
            target = _targets.get(ctx or 0)
            if target is None:
                return Status.INTERNAL
            return target.serve(op, request_json, response)
        except BaseException:  # noqa: B902 - nothing may unwind into C
            return Status.INTERNAL

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


_HOST_FUNCTIONS = {
    op: _host_trampoline(op) for op in ("fetch", "create", "update", "remove", "refresh", "encode", "decode")
}


def _on_record(function: RecordCallable) -> HostCallable:
    """A transformer's function as a host function: {"record": r} in,
    {"record": function(r)} out."""

    def call(request: Dict[str, Any]) -> Mapping[str, Any]:
        result = function(request["record"])
        return {"record": dict(result) if isinstance(result, collections.abc.Mapping) else result}

    return call
_RELEASE = ReleaseFn(_release_trampoline)
_FREE_CTX = FreeCtxFn(_free_ctx_trampoline)



class HostTargets(StorePart):
    """Mixed into :class:`tureen.Store`: its callback targets and credential
    refreshers."""

    #: ctx keys of the callables registered on this store (the Store sets it).
    _target_keys: Set[int]
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

        self._register_host(c_string(name, "the refresher name"), _HostTarget(name, {"refresh": refresh}), register)

    def unregister_auth(self, name: str) -> None:
        """Removes the credential refresher ``name``."""
        c_name = c_string(name, "the refresher name")
        with self._use() as handle:
            check(lib.tureen_auth_unregister(handle, c_name))


    def register_transformer(self, name: str, encode: RecordCallable, decode: RecordCallable) -> None:
        """Registers the remote transformer ``name`` (kinto.js's), used by
        targets whose ``"transformers"`` list names it
        (``kinto_target(..., transformers=[name])``).

        ``encode(record)`` gets each record before it is sent (a deletion as
        its tombstone ``{"id": ..., "deleted": True}``) and returns the
        record as the server is to hold it; ``decode(record)`` gets each
        record the server sends back (tombstones too) and returns it as the
        store keeps it. Several transformers encode in list order and
        decode in reverse. Both must keep the record's id. They run on the
        thread running the sync.

        An exception fails that record alone (its change stays local, or
        the fetched record is not applied; the state's ``recordErrors``
        says why), and the sync ends FAILED; :class:`~tureen.NetworkError`
        (or ConnectionError, TimeoutError) has the call retried, as a
        request is. An exception that is not a :class:`~tureen.Error` is
        chained (``__cause__``) to the error the sync raises. A
        KeyboardInterrupt stops the sync and is raised from the sync call.

        Registering a name again replaces it.

        Raises:
            InvalidError: a bad name.
            TypeError: encode or decode is not callable.
        """
        for what, function in (("encode", encode), ("decode", decode)):
            if not callable(function):
                raise TypeError("%s must be callable, not %s" % (what, type(function).__name__))

        def register(handle: Any, c_name: bytes, key: int) -> int:
            transformer = tureen_transformer(version=TRANSFORMER_VERSION, ctx=key, encode=_HOST_FUNCTIONS["encode"],
                                             decode=_HOST_FUNCTIONS["decode"], release=_RELEASE, free_ctx=_FREE_CTX)
            return int(lib.tureen_transformer_register(handle, c_name, ctypes.byref(transformer)))

        host = _HostTarget(name, {"encode": _on_record(encode), "decode": _on_record(decode)})
        self._register_host(c_string(name, "the transformer name"), host, register)

    def remove_transformer(self, name: str) -> None:
        """Removes the transformer ``name``: syncs started later no longer
        find it.

        Raises:
            NotFoundError: no transformer ``name`` on this store.
        """
        c_name = c_string(name, "the transformer name")
        with self._use() as handle:
            check(lib.tureen_transformer_remove(handle, c_name))

    def _forget_host_targets(self) -> None:
        """Drops this store's callables once its handle is closed: the
        library can call none of them any more, whether or not it called
        their free_ctx."""
        with _table_lock:
            for key in self._target_keys:
                _targets.pop(key, None)
        self._target_keys.clear()
