"""Sync: targets, merge modes and the names of ``include/tureen.h``'s "Sync".

A target is a plain dict in the header's shape; the builders below only save
typing and spelling mistakes, and their results can be changed or extended
like any dict::

    from tureen import sync

    target = sync.kinto_target("http://127.0.0.1:8888/v1", "app", "contacts",
                               user="alice", password="s3cret")
    state = store.sync_down(target, "contacts", name="contacts-down")
    store.local_upsert("contacts", {"id": "c1", "name": "Ada"})
    store.sync_up(target, "contacts", merge_mode=sync.MERGE_FAIL_IF_CONFLICT)
    store.resync("contacts-down")

Sync states, requests and responses are plain dicts too (the header lists
their members). Nothing is validated here: the library reports a bad target
or option as :class:`~tureen.InvalidError`.

Callback targets (:meth:`tureen.Store.register_target`) are Python callables
that take the request dict and return the response dict. To report a status
other than success they raise: :class:`~tureen.NotFoundError` (a remove of a
record already gone), :class:`~tureen.NetworkError` (retried by the library),
:class:`~tureen.HTTPError` or any other :class:`~tureen.Error` (that record
fails), or :class:`ServerConflict` with the server's current copy (an update
that conflicts). See :meth:`tureen.Store.register_target`.
"""

from __future__ import annotations

import collections.abc
from typing import Any, Dict, Final, List, Literal, Mapping, Optional, Sequence, Tuple, TypedDict, Union

from ._convert import c_string
from .errors import ConflictError

__all__ = [
    "SYNC_FIELDS",
    "without_sync_fields",
    "Target",
    "SyncState",
    "SyncStatus",
    "RecordError",
    "Conflict",
    "MergeMode",
    "Resolution",
    "OVERWRITE",
    "LEAVE_IF_CHANGED",
    "MERGE_ACCEPT_YOURS",
    "MERGE_FAIL_IF_CONFLICT",
    "MERGE_FAIL_IF_CHANGED",
    "MERGE_MODES",
    "NEW",
    "RUNNING",
    "DONE",
    "FAILED",
    "STOPPED",
    "YOURS",
    "THEIRS",
    "MERGED",
    "SYNCS_SOUP",
    "kinto_target",
    "rest_target",
    "callback_target",
    "ServerConflict",
]

#: A target: a JSON object as a dict.
Target = Dict[str, Any]
#: A merge mode (``"mergeMode"``): see the constants below.
MergeMode = Literal[
    "OVERWRITE", "LEAVE_IF_CHANGED", "MERGE_ACCEPT_YOURS", "MERGE_FAIL_IF_CONFLICT", "MERGE_FAIL_IF_CHANGED"
]
#: How :meth:`tureen.Store.resolve_conflict` settles a conflict.
Resolution = Literal["yours", "theirs", "merged"]
#: A sync state's ``"status"``.
SyncStatus = Literal["NEW", "RUNNING", "DONE", "FAILED", "STOPPED"]


class RecordError(TypedDict):
    """A change sync up could not send, or a record sync down could not
    apply (a sync state's ``"recordErrors"``)."""

    #: None for a record sync down failed on that is stored nowhere.
    entryId: Optional[int]
    id: Optional[str]
    operation: Literal["create", "update", "delete"]
    #: The failure's status by name, as :attr:`tureen.Error.status_name`
    #: says it: ``"HTTP"`` (the server refused the change), ``"CORRUPT"`` or
    #: ``"KEY"`` (an encrypted record that does not open), a transformer's
    #: own status, ...
    status: str
    #: None when the server gave no status (the network failed).
    httpStatus: Optional[int]
    error: str


class SyncState(TypedDict, total=False):
    """A sync state: the JSON object the library returns (the header's "Sync
    state"), as a dict. Members the library adds later are kept too."""

    _soupEntryId: int
    type: Literal["syncDown", "syncUp"]
    name: Optional[str]
    #: The target, credentials redacted where the state leaves the store.
    target: Target
    soupName: str
    options: Dict[str, Any]
    status: SyncStatus
    #: 0-100.
    progress: int
    done: int
    #: -1 while unknown.
    totalSize: int
    maxTimeStamp: int
    maxTimeStampText: Optional[str]
    startTime: int
    endTime: int
    error: Optional[str]
    synced: int
    failed: int
    conflicts: int
    failedIds: List[int]
    conflictIds: List[int]
    failedRecordIds: List[Optional[str]]
    recordErrors: List[RecordError]
    retryAt: Optional[int]
    serverFlushed: bool
    #: Sync down with a since overlap: None once the window below
    #: maxTimeStamp has settled, else the epoch ms (this device's clock)
    #: after which a completed run reads it for the last time.
    overlapUntil: Optional[int]
    #: HTTP requests the last run made.
    requests: int
    #: Blobs the last run uploaded or downloaded (Kinto with kinto-attachment).
    blobs: int
    #: Their bytes.
    blobBytes: int


class Conflict(TypedDict):
    """A conflict kept by a sync (:meth:`tureen.Store.conflicts`)."""

    #: The entry's ``_soupEntryId``: what :meth:`~tureen.Store.resolve_conflict` takes.
    entryId: int
    #: The record's server id.
    id: str
    syncId: int
    #: The copy of the last sync.
    base: Optional[Dict[str, Any]]
    #: The server's latest copy seen (a later sync up or LEAVE_IF_CHANGED
    #: sync down replaces it); None when the server deleted it.
    theirs: Optional[Dict[str, Any]]
    #: The local copy; None when it was deleted locally.
    yours: Optional[Dict[str, Any]]
    remoteChanges: List[str]
    localChanges: List[str]
    conflictingChanges: List[str]

# Merge modes ("mergeMode"). Sync down takes the first two; the MERGE_* modes
# of sync up compare the server's copy with the base copy kept at sync down.
#: The server's copy replaces the local one on sync down, the local one
#: replaces the server's on sync up (the default). On sync down, a record
#: changed locally (edited or deleted) takes the copy, or the deletion, the
#: run receives, and its flags are cleared. A new sync (or one whose
#: maxTimeStamp is still -1) receives every record the server holds and does
#: so for each, whether the server changed it or not. A resync receives what
#: changed since its position, and again the records at or just below it; it
#: leaves a local change alone against the very copy the change was made from
#: (read again, or this store's own sync up coming back: the server changed
#: nothing) and against a deletion read again. A server copy that this store
#: sent itself, whose answer never came, replaces no later local change.
OVERWRITE: Final = "OVERWRITE"
#: Sync down keeps records changed locally; sync up records a conflict
#: instead of sending a record whose server copy changed.
LEAVE_IF_CHANGED: Final = "LEAVE_IF_CHANGED"
#: Sync up merges theirs and yours; a field changed on both sides keeps the
#: local value.
MERGE_ACCEPT_YOURS: Final = "MERGE_ACCEPT_YOURS"
#: Sync up merges theirs and yours; a field changed on both sides is a
#: conflict.
MERGE_FAIL_IF_CONFLICT: Final = "MERGE_FAIL_IF_CONFLICT"
#: Sync up records a conflict when any field changed on the server.
MERGE_FAIL_IF_CHANGED: Final = "MERGE_FAIL_IF_CHANGED"

MERGE_MODES = (
    OVERWRITE,
    LEAVE_IF_CHANGED,
    MERGE_ACCEPT_YOURS,
    MERGE_FAIL_IF_CONFLICT,
    MERGE_FAIL_IF_CHANGED,
)

# Values of a sync state's "status".
NEW: Final = "NEW"
RUNNING: Final = "RUNNING"
DONE: Final = "DONE"
FAILED: Final = "FAILED"
STOPPED: Final = "STOPPED"

# Resolutions of :meth:`tureen.Store.resolve_conflict`.
#: Keep the local record: the next sync up overwrites the server's.
YOURS: Final = "yours"
#: Take the server's record (or its deletion): nothing left to send.
THEIRS: Final = "theirs"
#: Save the given merged record locally: the next sync up sends it.
MERGED: Final = "merged"

#: The soup that holds the sync states.
SYNCS_SOUP = "syncs_soup"

#: The fields sync keeps inside each entry of a synced soup: SmartSync's
#: change flags, and the record of a change the server refused.
SYNC_FIELDS = (
    "__local__",
    "__locally_created__",
    "__locally_updated__",
    "__locally_deleted__",
    "__last_error__",
    "__last_error_status__",
    "__last_error_op__",
    "__sync_attempts__",
)


def without_sync_fields(entry: Mapping[str, Any]) -> Dict[str, Any]:
    """A copy of ``entry`` without the :data:`SYNC_FIELDS`: the record as
    the app wrote it (its ``_soupEntryId`` and other fields kept)."""
    return {name: value for name, value in entry.items() if name not in SYNC_FIELDS}


def _drop_sync_fields(value: Any) -> Any:
    """For a read with ``sync_fields=False``: an entry without its sync
    fields, or a query row whose whole entries (``{soup:_soup}``) lose
    theirs; other values as they are."""
    if isinstance(value, dict):
        return without_sync_fields(value)
    if isinstance(value, list):
        return [
            without_sync_fields(item) if isinstance(item, dict) and "_soupEntryId" in item else item
            for item in value
        ]
    return value


#: Encryption keys: ``(id, key)`` pairs or ``{"id": ..., "key": ...}`` dicts.
EncryptionKeys = Sequence[Union[Tuple[str, str], Mapping[str, str]]]


def encryption_member(keys: EncryptionKeys) -> Dict[str, Any]:
    """The target's ``"encryption"`` member for ``keys``, in their order
    (the first encrypts). Keys are checked by the library, which names no
    key in its messages."""
    listed: List[Dict[str, Any]] = []
    for k in keys:
        if isinstance(k, Mapping):
            listed.append(dict(k))
        else:
            key_id, key = k
            listed.append({"id": key_id, "key": key})
    return {"keys": listed}


def kinto_target(
    url: str,
    bucket: str,
    collection: str,
    user: Optional[str] = None,
    password: Optional[str] = None,
    bearer: Optional[str] = None,
    create: bool = False,
    transformers: Optional[Sequence[str]] = None,
    encryption: Optional[EncryptionKeys] = None,
    **extra: Any,
) -> Target:
    """A Kinto target: ``{"type": "kinto", "url", "bucket", "collection",
    "auth"}``.

    Args:
        url: the server's root, with its version: ``"http://host:8888/v1"``.
        bucket, collection: where the records are.
        user, password: basic authentication (``"auth": {"user", "password"}``).
        bearer: a token instead (``"auth": {"bearer"}``). With neither, no
            ``"auth"`` member is sent.
        create: True to have the library create the bucket and collection
            when they are missing.
        transformers: names of transformers registered with
            :meth:`tureen.Store.register_transformer`: records are encoded
            through them in this order before they are sent, and decoded
            in reverse after they are fetched.
        encryption: end-to-end encryption keys, the first encrypting and
            every one decrypting: ``(id, key)`` pairs or ``{"id", "key"}``
            dicts, each key 64 hex digits (``"encryption": {"keys": [...]}``).
            The server then holds no value and no field name, and blobs
            only sealed, under a keyed name (not their digest).
        extra: more members as they are, e.g. ``headers={...}``,
            ``timeout_ms=5000``, ``verify_tls=False``, ``max_retries=2``,
            and for blobs (kinto-attachment):

            - ``attachments_url``: the URL prefix attachment files are
              downloaded from when the server keeps them elsewhere (a CDN,
              a bucket of files): a file or redirect outside it, and
              outside the server's own origin when it is not given, is
              refused. Downloads never carry the target's credentials.
            - ``blobs_collection``: the collection whose records hold the
              attachments (default ``"<collection>-blobs"``).
    """
    target: Target = {"type": "kinto", "url": url, "bucket": bucket, "collection": collection}
    auth: Dict[str, Any] = {}
    # Every given credential is sent, so that a contradictory pair reaches
    # the library and is reported there rather than silently dropped here.
    if user is not None:
        auth["user"] = user
    if password is not None:
        auth["password"] = password
    if bearer is not None:
        auth["bearer"] = bearer
    if auth:
        target["auth"] = auth
    if create:
        target["create"] = True
    if transformers is not None:
        target["transformers"] = list(transformers)
    if encryption is not None:
        target["encryption"] = encryption_member(encryption)
    target.update(extra)
    return target


def rest_target(url: str, transformers: Optional[Sequence[str]] = None,
                encryption: Optional[EncryptionKeys] = None, **members: Any) -> Target:
    """A generic JSON REST target: ``{"type": "rest", "url", ...members}``.

    The members (where records sit in a response, paging, the since
    parameter, id and modification fields, tombstones, create and update
    methods, concurrency) are the library's README's "REST targets"; they
    are passed as they are. ``transformers``, ``encryption``: as for
    :func:`kinto_target`.
    """
    target: Target = {"type": "rest", "url": url}
    if transformers is not None:
        target["transformers"] = list(transformers)
    if encryption is not None:
        target["encryption"] = encryption_member(encryption)
    target.update(members)
    return target


def callback_target(name: str, **members: Any) -> Target:
    """A callback target: ``{"type": "callback", "name"}``, naming functions
    registered with :meth:`tureen.Store.register_target`.

    ``members`` are passed as they are, e.g. ``idField="uid"``,
    ``modifiedField="updated"``.
    """
    target: Target = {"type": "callback", "name": name}
    target.update(members)
    return target


class ServerConflict(ConflictError):
    """Raised by a callback target's ``update`` (or ``create``) when the
    server's copy changed: ``record`` is the server's current copy, handed to
    the library as ``{"record": record}`` with TUREEN_E_CONFLICT.

    Raising a plain :class:`~tureen.ConflictError` whose only argument is the
    record (``raise tureen.ConflictError(current)``) does the same.
    """

    def __init__(self, record: Optional[Mapping[str, Any]], message: str = "") -> None:
        super().__init__(message or "the server's copy changed")
        self.record: Optional[Dict[str, Any]] = None if record is None else dict(record)

    def __reduce__(self) -> Any:
        return (type(self), (self.record, self.message))


#: A sync: its id, its name, or its state (a dict with ``_soupEntryId``).
SyncRef = Union[int, str, Mapping[str, Any]]


def sync_ref(sync: SyncRef) -> bytes:
    """A sync id, name or state as the library's ``sync_id_or_name``."""
    if isinstance(sync, collections.abc.Mapping):
        sync = sync.get("_soupEntryId")  # type: ignore[assignment]
        if not isinstance(sync, int) or isinstance(sync, bool):
            raise TypeError("a sync state without an integer _soupEntryId")
    if isinstance(sync, bool):
        raise TypeError("a sync must be an int id or a str name, not bool")
    if isinstance(sync, int):
        return str(sync).encode("ascii")
    if isinstance(sync, str):
        return c_string(sync, "the sync name")
    raise TypeError("a sync must be an int id or a str name, not %s" % type(sync).__name__)
