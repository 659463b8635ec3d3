"""Tureen: JSON documents in SQLCipher-encrypted stores (Python binding).

A ctypes binding of libtureen.so (C header ``include/tureen.h``)::

    import tureen

    from tureen import query

    with tureen.Store.open("notes.db", key="correct horse battery") as store:
        store.register_soup("notes", [("title", "string"), ("stars", "integer")])
        store.upsert("notes", [{"title": "tea", "stars": 5}, {"title": "rice", "stars": 3}])
        for note in store.iter_query(query.range("notes", "stars", begin=4)):
            print(note["title"], note["_soupEntryId"])

Importing this package loads libtureen.so: from ``$TUREEN_LIB``, else from the
package directory, else through the system loader (an installed prefix,
``LD_LIBRARY_PATH``), else from the repository's ``.build/release``; it raises
:class:`tureen.LibraryError` (an ImportError) saying where it looked if none is
there, or if the library's version is not the one this binding follows.

Every failing call raises :class:`tureen.Error` or its subclass for the status
code (:class:`BadKeyError`, :class:`DiskError`, ...), with ``code`` (a
:class:`tureen.Status`) and
``message`` attributes; a failed sync's error also has ``state``.

Sync with a server (see :mod:`tureen.sync`)::

    target = tureen.kinto_target("http://127.0.0.1:8888/v1", "app", "notes",
                                 user="alice", password="s3cret")
    store.sync_down(target, "notes", name="notes-down")
    store.local_upsert("notes", {"title": "miso"})
    store.sync_up(target, "notes", merge_mode=tureen.MERGE_FAIL_IF_CONFLICT)
"""

from __future__ import annotations

__version__ = "0.1.0"

from .errors import (
    BadKeyError,
    BusyError,
    CancelledError,
    ConflictError,
    ConstraintError,
    CorruptError,
    DiskError,
    Error,
    HTTPError,
    InternalError,
    InvalidError,
    LibraryError,
    LibraryNotFoundError,
    MisuseError,
    NetworkError,
    NotFoundError,
    QueryError,
    VersionMismatchError,
)
from .status import Status
from ._library import HEADER_VERSION_NUMBER, LIBRARY_PATH, version, version_number
from .index_spec import IndexSpec
from ._blobs import BlobReader, BlobRef
from ._cache import CACHE_SOUP, CachedAnswer, CachePolicy
from ._soups import ENGINE_SOUPS
from .listeners import Changes, Listener
from .feed import ChangeFeed
from .managed import ErrorAction, SyncEvent, SyncEventCode, SyncLoop
from .row import Row
from .store import Entry, QuerySpec, Store, remove_store
from .sync import (
    SYNC_FIELDS,
    Conflict,
    LEAVE_IF_CHANGED,
    MERGE_ACCEPT_YOURS,
    MERGE_FAIL_IF_CHANGED,
    MERGE_FAIL_IF_CONFLICT,
    OVERWRITE,
    MergeMode,
    Resolution,
    ServerConflict,
    SyncState,
    Target,
    callback_target,
    kinto_target,
    rest_target,
    without_sync_fields,
)
from . import log, query, sync

__all__ = [
    "__version__",
    "HEADER_VERSION_NUMBER",
    "LIBRARY_PATH",
    "version",
    "version_number",
    "Store",
    "remove_store",
    "Listener",
    "Changes",
    "ChangeFeed",
    "SyncLoop",
    "SyncEvent",
    "SyncEventCode",
    "ErrorAction",
    "BlobReader",
    "BlobRef",
    "CachePolicy",
    "CachedAnswer",
    "CACHE_SOUP",
    "ENGINE_SOUPS",
    "IndexSpec",
    "Entry",
    "QuerySpec",
    "Row",
    "query",
    "log",
    "sync",
    "SyncState",
    "Conflict",
    "MergeMode",
    "Resolution",
    "SYNC_FIELDS",
    "without_sync_fields",
    "Target",
    "kinto_target",
    "rest_target",
    "callback_target",
    "OVERWRITE",
    "LEAVE_IF_CHANGED",
    "MERGE_ACCEPT_YOURS",
    "MERGE_FAIL_IF_CONFLICT",
    "MERGE_FAIL_IF_CHANGED",
    "ServerConflict",
    "Status",
    "Error",
    "MisuseError",
    "InvalidError",
    "NotFoundError",
    "BadKeyError",
    "CorruptError",
    "DiskError",
    "BusyError",
    "ConstraintError",
    "QueryError",
    "NetworkError",
    "HTTPError",
    "ConflictError",
    "CancelledError",
    "InternalError",
    "LibraryError",
    "LibraryNotFoundError",
    "VersionMismatchError",
]
