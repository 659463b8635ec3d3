"""Finding, loading and declaring libtureen.so.

The library is looked for, in this order:

1. the path in the environment variable ``TUREEN_LIB`` (when it is set, it is
   the only place looked at: a wrong path is an error, not a fallback);
2. ``libtureen.so`` inside this package's directory (a wheel built after
   copying the library there ships it);
3. the system loader: the directories of ``LD_LIBRARY_PATH``, then what
   ``ctypes.util.find_library("tureen")`` finds (an installed prefix that
   ldconfig knows, such as ``make install``'s /usr/local);
4. the repository's release build, ``<repo>/.build/release/libtureen.so``,
   found relative to this file (``bindings/python/tureen/../../../``).

It is loaded once, with :class:`ctypes.CDLL` in the default mode, and never
unloaded. Its ``tureen_version_number()`` must equal
:data:`HEADER_VERSION_NUMBER`; then every function of ``include/tureen.h``
gets its ``argtypes`` and ``restype`` from :data:`PROTOTYPES`.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import (
    LibraryError,
    LibraryNotFoundError,
    VersionMismatchError,
    error_for,
)
from ._python_names import python_names

__all__ = [
    "HEADER_VERSION_NUMBER",
    "ENV_VAR",
    "LIBRARY_NAME",
    "PROTOTYPES",
    "StoreHandle",
    "ProgressFn",
    "HostFn",
    "ReleaseFn",
    "FreeCtxFn",
    "EventFn",
    "LogFn",
    "ListenerHandle",
    "tureen_callbacks",
    "tureen_transformer",
    "CALLBACKS_VERSION",
    "AUTH_CALLBACKS_VERSION",
    "TRANSFORMER_VERSION",
    "tureen_auth_callbacks",
    "lib",
    "LIBRARY_PATH",
    "MISSING_FUNCTIONS",
    "candidates",
    "find_library",
    "load_library",
    "check_version",
    "check",
    "errmsg",
    "version",
    "version_number",
    "format_version_number",
]

#: TUREEN_VERSION_NUMBER of the include/tureen.h this binding follows. The one
#: place it is written in the binding.
HEADER_VERSION_NUMBER = 100

#: Environment variable naming the libtureen.so to load.
ENV_VAR = "TUREEN_LIB"

LIBRARY_NAME = "libtureen.so"

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


class tureen_store(ctypes.Structure):
    """Opaque ``struct tureen_store``; only pointers to it are ever used."""


#: ``tureen_store *``: an open store handle. Never dereferenced.
StoreHandle = ctypes.POINTER(tureen_store)

#: ``tureen_progress_fn``: ``void (*)(void *ctx, const char *state_json)``.
ProgressFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)

#: ``tureen_host_fn``: ``int (*)(void *ctx, const char *request_json, char
#: **response)``. The response is a host buffer whose address is written
#: through the ``c_void_p`` pointer.
HostFn = ctypes.CFUNCTYPE(
    ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)
)

#: ``void (*release)(void *ctx, char *response)`` of ``tureen_callbacks``.
#: The response arrives as c_void_p, not c_char_p: the host needs its address
#: (to find the buffer it lent), not a copy of its bytes.
ReleaseFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)

#: ``void (*free_ctx)(void *ctx)`` of ``tureen_callbacks`` and of listeners.
FreeCtxFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

#: ``tureen_log_fn``: ``void (*)(void *ctx, int level, const char *category,
#: const char *message)``.
LogFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p)

#: ``tureen_event_fn``: ``void (*)(void *ctx, const char *json)``.
EventFn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


class tureen_listener(ctypes.Structure):
    """Opaque ``struct tureen_listener``; only pointers to it are ever used."""


#: ``tureen_listener *``: a listener handle. Never dereferenced.
ListenerHandle = ctypes.POINTER(tureen_listener)


#: TUREEN_CALLBACKS_VERSION: the version of ``tureen_callbacks`` declared below.
CALLBACKS_VERSION = 1


class tureen_callbacks(ctypes.Structure):
    """``struct tureen_callbacks``: the host functions of a callback target.

    A NULL function pointer is the field's type called with no argument
    (``HostFn()``); ``create``, ``update``, ``remove`` and ``free_ctx`` may be
    NULL.
    """

    _fields_ = [
        ("version", ctypes.c_int),
        ("ctx", ctypes.c_void_p),
        ("fetch", HostFn),
        ("create", HostFn),
        ("update", HostFn),
        ("remove", HostFn),
        ("release", ReleaseFn),
        ("free_ctx", FreeCtxFn),
    ]


#: TUREEN_AUTH_CALLBACKS_VERSION: the version of ``tureen_auth_callbacks``.
AUTH_CALLBACKS_VERSION = 1


class tureen_auth_callbacks(ctypes.Structure):
    """``struct tureen_auth_callbacks``: a credential refresher."""

    _fields_ = [
        ("version", ctypes.c_int),
        ("ctx", ctypes.c_void_p),
        ("refresh", HostFn),
        ("release", ReleaseFn),
        ("free_ctx", FreeCtxFn),
    ]

#: TUREEN_TRANSFORMER_VERSION: the version of ``tureen_transformer``.
TRANSFORMER_VERSION = 1


class tureen_transformer(ctypes.Structure):
    """``struct tureen_transformer``: a remote transformer's encode and decode."""

    _fields_ = [
        ("version", ctypes.c_int),
        ("ctx", ctypes.c_void_p),
        ("encode", HostFn),
        ("decode", HostFn),
        ("release", ReleaseFn),
        ("free_ctx", FreeCtxFn),
    ]

# (restype, argtypes) of every function in include/tureen.h. A char ** result
# is declared POINTER(c_void_p), not POINTER(c_char_p), so that the pointer
# survives to be handed back to tureen_free (see _take_string).
PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {
    # Library
    "tureen_version": (ctypes.c_char_p, []),
    "tureen_version_number": (ctypes.c_int, []),
    "tureen_errmsg": (ctypes.c_char_p, []),
    "tureen_status_name": (ctypes.c_int, [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]),
    "tureen_free": (None, [ctypes.c_void_p]),
    # Stores
    "tureen_store_open": (
        ctypes.c_int,
        [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(StoreHandle)],
    ),
    "tureen_store_close": (ctypes.c_int, [StoreHandle]),
    "tureen_store_rekey": (ctypes.c_int, [StoreHandle, ctypes.c_char_p]),
    "tureen_store_size": (ctypes.c_int, [StoreHandle, ctypes.POINTER(ctypes.c_int64)]),
    "tureen_store_remove": (ctypes.c_int, [ctypes.c_char_p]),
    "tureen_store_compact": (ctypes.c_int, [StoreHandle]),
    "tureen_store_check": (ctypes.c_int, [StoreHandle]),
    "tureen_store_interrupt": (ctypes.c_int, [StoreHandle]),
    # Soups
    "tureen_soup_register": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.c_char_p]),
    "tureen_soup_exists": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)],
    ),
    "tureen_soup_names": (ctypes.c_int, [StoreHandle, ctypes.POINTER(ctypes.c_void_p)]),
    "tureen_soup_index_specs": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)],
    ),
    "tureen_soup_alter": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int],
    ),
    "tureen_soup_reindex": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.c_char_p]),
    "tureen_soup_clear": (ctypes.c_int, [StoreHandle, ctypes.c_char_p]),
    "tureen_soup_drop": (ctypes.c_int, [StoreHandle, ctypes.c_char_p]),
    # Entries
    "tureen_upsert": (
        ctypes.c_int,
        [
            StoreHandle,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,  # external_id_path, may be NULL (None)
            ctypes.POINTER(ctypes.c_void_p),  # may be NULL (None)
        ],
    ),
    "tureen_retrieve": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)],
    ),
    "tureen_remove": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.c_char_p]),
    # Queries
    "tureen_query": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_void_p)],
    ),
    "tureen_count": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64)],
    ),
    "tureen_remove_by_query": (ctypes.c_int, [StoreHandle, ctypes.c_char_p]),
    # Sync. Every char **state_json may be NULL (None) when unwanted.
    "tureen_sync_down": (
        ctypes.c_int,
        [
            StoreHandle,
            ctypes.c_char_p,  # target_json
            ctypes.c_char_p,  # soup
            ctypes.c_char_p,  # options_json, may be NULL
            ProgressFn,  # may be NULL (None)
            ctypes.c_void_p,  # ctx
            ctypes.POINTER(ctypes.c_void_p),
        ],
    ),
    "tureen_sync_up": (
        ctypes.c_int,
        [
            StoreHandle,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ProgressFn,
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_void_p),
        ],
    ),
    "tureen_resync": (
        ctypes.c_int,
        [
            StoreHandle,
            ctypes.c_char_p,  # sync id (decimal) or name
            ProgressFn,
            ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_void_p),
        ],
    ),
    "tureen_sync_status": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)],
    ),
    "tureen_sync_cancel": (ctypes.c_int, [StoreHandle, ctypes.c_char_p]),
    "tureen_clean_ghosts": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64)],
    ),
    "tureen_local_upsert": (
        ctypes.c_int,
        [
            StoreHandle,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,  # id_field, may be NULL
            ctypes.POINTER(ctypes.c_void_p),  # may be NULL
        ],
    ),
    "tureen_local_merge": (
        ctypes.c_int,
        [
            StoreHandle,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,  # id_field_or_null
            ctypes.POINTER(ctypes.c_void_p),  # may be NULL
        ],
    ),
    "tureen_local_delete": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.c_char_p]),
    "tureen_local_read": (
        ctypes.c_int,
        [
            StoreHandle,
            ctypes.c_char_p,
            ctypes.c_char_p,  # id_field_or_null
            ctypes.c_char_p,  # record_ids_json
            ctypes.POINTER(ctypes.c_void_p),
        ],
    ),
    "tureen_local_delete_records": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p],  # soup, id_field_or_null, record_ids_json
    ),
    "tureen_conflicts": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)],
    ),
    "tureen_conflict_resolve": (
        ctypes.c_int,
        [
            StoreHandle,
            ctypes.c_char_p,
            ctypes.c_int64,
            ctypes.c_char_p,  # resolution
            ctypes.c_char_p,  # merged_json, NULL except for "merged"
        ],
    ),
    "tureen_target_register": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, ctypes.POINTER(tureen_callbacks)],
    ),
    "tureen_target_unregister": (ctypes.c_int, [StoreHandle, ctypes.c_char_p]),
    "tureen_auth_register": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.POINTER(tureen_auth_callbacks)]),
    "tureen_auth_unregister": (ctypes.c_int, [StoreHandle, ctypes.c_char_p]),
    "tureen_transformer_register": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, ctypes.POINTER(tureen_transformer)],
    ),
    "tureen_transformer_remove": (ctypes.c_int, [StoreHandle, ctypes.c_char_p]),
    "tureen_reencrypt": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    # Logging
    "tureen_log_set": (ctypes.c_int, [ctypes.c_int, LogFn, ctypes.c_void_p, FreeCtxFn]),
    # Events
    "tureen_soup_listen": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, EventFn, ctypes.c_void_p, FreeCtxFn, ctypes.POINTER(ListenerHandle)],
    ),
    "tureen_live_query": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, EventFn, ctypes.c_void_p, FreeCtxFn, ctypes.POINTER(ListenerHandle)],
    ),
    "tureen_sync_listen": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, EventFn, ctypes.c_void_p, FreeCtxFn, ctypes.POINTER(ListenerHandle)],
    ),
    "tureen_listener_remove": (ctypes.c_int, [ListenerHandle]),
    "tureen_changes": (
        ctypes.c_int,
        [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)],  # options may be NULL
    ),
    # Managed syncs and the sync loop
    "tureen_syncs": (ctypes.c_int, [StoreHandle, ctypes.POINTER(ctypes.c_void_p)]),
    "tureen_sync_update": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]),
    "tureen_sync_delete": (ctypes.c_int, [StoreHandle, ctypes.c_char_p]),
    "tureen_sync_error_resolve": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.c_int64, ctypes.c_char_p]),
    "tureen_sync_reset": (ctypes.c_int, [StoreHandle]),
    "tureen_sync_republish": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64)]),
    "tureen_sync_loop_start": (ctypes.c_int, [StoreHandle, ctypes.c_char_p]),
    "tureen_sync_loop_stop": (ctypes.c_int, [StoreHandle]),
    "tureen_sync_loop_force": (ctypes.c_int, [StoreHandle, ctypes.c_char_p]),
    "tureen_sync_loop_status": (ctypes.c_int, [StoreHandle, ctypes.POINTER(ctypes.c_void_p)]),
    # Cached reads
    "tureen_cache_fetch": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "tureen_cache_clear": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64)]),
    "tureen_cache_configure": (ctypes.c_int, [StoreHandle, ctypes.c_char_p]),
    # Blobs
    "tureen_blob_put": (ctypes.c_int, [StoreHandle, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "tureen_blob_get": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]),
    "tureen_blob_import": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "tureen_blob_export": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.c_char_p]),
    "tureen_blob_fetch": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]),
    "tureen_blob_info": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "tureen_blob_collect": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int64)]),
    "tureen_blob_writer_open": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]),
    "tureen_blob_writer_write": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]),
    "tureen_blob_writer_finish": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]),
    "tureen_blob_writer_cancel": (ctypes.c_int, [ctypes.c_void_p]),
    "tureen_blob_reader_open": (ctypes.c_int, [StoreHandle, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64)]),
    "tureen_blob_reader_read": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
    "tureen_blob_reader_close": (ctypes.c_int, [ctypes.c_void_p]),
    # Transactions across calls
    "tureen_transaction_begin": (ctypes.c_int, [StoreHandle]),
    "tureen_transaction_commit": (ctypes.c_int, [StoreHandle]),
    "tureen_transaction_rollback": (ctypes.c_int, [StoreHandle]),
}


def format_version_number(number: int) -> str:
    """``10203`` -> ``"1.2.3"`` (major * 10000 + minor * 100 + patch)."""
    return "%d.%d.%d" % (number // 10000, number // 100 % 100, number % 100)


_LDCONFIG = "the system loader (ldconfig)"


def candidates(
    environ: Optional[Mapping[str, str]] = None,
    package_dir: Optional[str] = None,
) -> List[Tuple[str, str]]:
    """The places to look for libtureen.so, in order, as (description, path).

    When ``TUREEN_LIB`` is set (and not empty) it is the only candidate.
    """
    env = os.environ if environ is None else environ
    pkg = _PACKAGE_DIR if package_dir is None else package_dir
    explicit = env.get(ENV_VAR)
    if explicit:
        return [("$" + ENV_VAR, explicit)]
    loader = [("$LD_LIBRARY_PATH", os.path.join(d, LIBRARY_NAME))
              for d in env.get("LD_LIBRARY_PATH", "").split(os.pathsep) if d]
    # A name the loader resolves itself (ldconfig's cache), not a path.
    known = ctypes.util.find_library("tureen")
    if known:
        loader.append((_LDCONFIG, known))
    return [("the package directory", os.path.join(pkg, LIBRARY_NAME))] + loader + [
        (
            "the repository's release build",
            os.path.normpath(
                os.path.join(pkg, os.pardir, os.pardir, os.pardir, ".build", "release", LIBRARY_NAME)
            ),
        ),
    ]


def find_library(
    environ: Optional[Mapping[str, str]] = None,
    package_dir: Optional[str] = None,
) -> str:
    """The path of the libtureen.so to load.

    Raises:
        LibraryNotFoundError: nothing at any candidate; its ``tried`` and
            its message list every place looked at, in order.
    """
    places = candidates(environ, package_dir)
    for _where, path in places:
        if os.path.isfile(path) or (not os.path.dirname(path) and path.startswith("libtureen.so")):
            return path
    tried: List[Tuple[str, Optional[str]]] = list(places)
    if len(places) > 1 and not any(where == _LDCONFIG for where, _path in places):
        # Asked, and it knew nothing: a place looked at all the same.
        tried.insert(len(places) - 1, (_LDCONFIG, None))
    looked = "; ".join("%s: %s" % (where, path or "no libtureen known") for where, path in tried)
    if len(places) == 1 and places[0][0] == "$" + ENV_VAR:
        hint = "%s is set but names no file" % ENV_VAR
    else:
        hint = (
            "install it (make install, in the repository), build it (make lib), "
            "copy it into the package directory, or set %s to its path" % ENV_VAR
        )
    raise LibraryNotFoundError("libtureen.so not found (looked at %s): %s" % (looked, hint), tried)


def check_version(found: int, path: str = LIBRARY_NAME) -> None:
    """Raises :class:`VersionMismatchError` unless ``found`` (the library's
    ``tureen_version_number()``) is :data:`HEADER_VERSION_NUMBER`."""
    if found != HEADER_VERSION_NUMBER:
        raise VersionMismatchError(
            "%s is Tureen %s (version number %d), but this binding was written for "
            "the header of Tureen %s (TUREEN_VERSION_NUMBER %d); use a matching "
            "library and binding"
            % (
                path,
                format_version_number(found),
                found,
                format_version_number(HEADER_VERSION_NUMBER),
                HEADER_VERSION_NUMBER,
            )
        )


def _missing_function(path: str, name: str) -> Callable[..., int]:
    def missing(*_args: Any) -> int:
        raise LibraryError(
            "%s has no function %s: the library is older than the header this "
            "binding follows; rebuild it" % (path, name)
        )

    missing.__name__ = name
    return missing


def _declare(handle: ctypes.CDLL, path: str, names: Sequence[str]) -> List[str]:
    """Sets restype and argtypes of each function; returns the names the
    library does not export (replaced by stubs that raise LibraryError)."""
    missing: List[str] = []
    for name in names:
        restype, argtypes = PROTOTYPES[name]
        try:
            function = getattr(handle, name)
        except AttributeError:
            missing.append(name)
            setattr(handle, name, _missing_function(path, name))
            continue
        function.restype = restype
        function.argtypes = argtypes
    return missing


#: The shared libraries libtureen.so needs from the system, and the Debian
#: package of each (what a bare ``ImportError`` leaves a user to guess).
SYSTEM_DEPENDENCIES: Mapping[str, str] = {
    "libsqlcipher.so.0": "libsqlcipher0",
    "libcurl.so.4": "libcurl4",
}


def _missing_package_hint(loader_message: str) -> str:
    """For the loader's "libX.so.N: cannot open shared object file", the
    Debian package that provides it; otherwise nothing."""
    for soname, package in SYSTEM_DEPENDENCIES.items():
        if soname in loader_message:
            return " (%s is in the Debian package %s: sudo apt-get install %s)" % (soname, package, package)
    return ""


def _check_system_dependencies() -> None:
    """Loads the system libraries libtureen.so opens itself at run time.

    SQLCipher is not a link dependency of libtureen.so (it is opened with
    ``dlopen`` at the first store open, so that it cannot collide with a
    host's own SQLite), so without this a missing ``libsqlcipher0`` would
    surface only at the first ``Store.open``, as an internal error.
    """
    for soname in ("libsqlcipher.so.0",):
        try:
            ctypes.CDLL(soname)
        except OSError as exc:
            raise LibraryError(
                "libtureen needs %s, which cannot be loaded: %s%s"
                % (soname, exc, _missing_package_hint(soname))
            ) from exc


def load_library(path: str) -> Tuple[ctypes.CDLL, List[str]]:
    """Loads the library at ``path``, checks its version and declares every
    function of :data:`PROTOTYPES` on it.

    Returns the library and the names of the functions it lacks. A library of
    the right version lacking a function is a stale build: the rest of the
    binding still works, and calling a missing function raises LibraryError.
    The version functions themselves must be there.
    """
    try:
        handle = ctypes.CDLL(path)
    except OSError as exc:
        raise LibraryError("cannot load %s: %s%s" % (path, exc, _missing_package_hint(str(exc)))) from exc
    _check_system_dependencies()
    if _declare(handle, path, ["tureen_version_number"]):
        raise LibraryError("%s has no function tureen_version_number: it is not libtureen" % path)
    check_version(handle.tureen_version_number(), path)
    essential = ["tureen_version", "tureen_errmsg", "tureen_free"]
    missing = _declare(handle, path, list(PROTOTYPES))
    if any(name in essential for name in missing):
        raise LibraryError("%s lacks %s: it is not a usable libtureen" % (path, ", ".join(missing)))
    return handle, missing


#: Path of the loaded library.
LIBRARY_PATH: str = find_library()
#: The loaded library, every function declared.
lib: ctypes.CDLL
#: Functions of the header that the loaded library does not export (a stale
#: build); calling them raises LibraryError. Normally empty.
MISSING_FUNCTIONS: Tuple[str, ...]
lib, _missing = load_library(LIBRARY_PATH)
MISSING_FUNCTIONS = tuple(_missing)
del _missing


def errmsg() -> str:
    """``tureen_errmsg()``: the calling thread's last error message, the
    calls it points to named as Python makes them."""
    raw = lib.tureen_errmsg()
    return python_names(raw.decode("utf-8", "replace")) if raw else ""


def check(rc: int) -> None:
    """Raises the exception for status ``rc`` unless it is TUREEN_OK.

    Call it right after the library call, on the same thread, so that
    ``tureen_errmsg()`` still describes that call.
    """
    if rc != 0:
        raise error_for(rc, errmsg())


def _take_string(ptr: ctypes.c_void_p) -> Optional[str]:
    """Copies a ``char *`` the library returned through an out-parameter into
    a str and releases it with ``tureen_free``. ``None`` for NULL."""
    address = ptr.value
    if not address:
        return None
    try:
        return ctypes.string_at(address).decode("utf-8")
    finally:
        lib.tureen_free(address)


def status_name(code: int) -> Optional[str]:
    """``tureen_status_name``: the header's name of a status code without
    its prefix (``"KEY"`` for TUREEN_E_KEY, ``"OK"``), or None for a number
    that is no status code."""
    name = ctypes.c_char_p()
    if not -(2 ** 31) <= code < 2 ** 31 or lib.tureen_status_name(code, ctypes.byref(name)) != 0 or not name.value:
        return None
    return name.value.decode("ascii")


def version() -> str:
    """The loaded library's version, e.g. ``"0.1.0"``."""
    return str(lib.tureen_version().decode("ascii"))


def version_number() -> int:
    """The loaded library's version number (major * 10000 + minor * 100 + patch)."""
    return int(lib.tureen_version_number())


def call_for_string(function: Callable[..., int], *args: Any) -> str:
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
