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
from typing import Any, Dict, Mapping, Optional, Union

from ._convert import c_string
from .errors import ConflictError

__all__ = [
    "Target",
    "SyncState",
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
#: A sync state: the JSON object the library returns, as a dict (members
#: ``"_soupEntryId"``, ``"type"``, ``"name"``, ``"status"``, ``"progress"``,
#: ``"done"``, ``"totalSize"``, ``"synced"``, ``"failed"``, ``"conflicts"``,
#: ``"failedIds"``, ``"conflictIds"``, ``"error"``, ...).
SyncState = Dict[str, Any]

# Merge modes ("mergeMode"). Sync down takes the first two; the MERGE_* modes
# of sync up compare the server's copy with the base copy kept at sync down.
#: The server's copy replaces the local one on sync down, the local one
#: replaces the server's on sync up (the default).
OVERWRITE = "OVERWRITE"
#: Sync down keeps records changed locally; sync up records a conflict
#: instead of sending a record whose server copy changed.
LEAVE_IF_CHANGED = "LEAVE_IF_CHANGED"
#: Sync up merges theirs and yours; a field changed on both sides keeps the
#: local value.
MERGE_ACCEPT_YOURS = "MERGE_ACCEPT_YOURS"
#: Sync up merges theirs and yours; a field changed on both sides is a
#: conflict.
MERGE_FAIL_IF_CONFLICT = "MERGE_FAIL_IF_CONFLICT"
#: Sync up records a conflict when any field changed on the server.
MERGE_FAIL_IF_CHANGED = "MERGE_FAIL_IF_CHANGED"

MERGE_MODES = (
    OVERWRITE,
    LEAVE_IF_CHANGED,
    MERGE_ACCEPT_YOURS,
    MERGE_FAIL_IF_CONFLICT,
    MERGE_FAIL_IF_CHANGED,
)

# Values of a sync state's "status".
NEW = "NEW"
RUNNING = "RUNNING"
DONE = "DONE"
FAILED = "FAILED"
STOPPED = "STOPPED"

# Resolutions of :meth:`tureen.Store.resolve_conflict`.
#: Keep the local record: the next sync up overwrites the server's.
YOURS = "yours"
#: Take the server's record (or its deletion): nothing left to send.
THEIRS = "theirs"
#: Save the given merged record locally: the next sync up sends it.
MERGED = "merged"

#: The soup that holds the sync states.
SYNCS_SOUP = "syncs_soup"


def kinto_target(
    url: str,
    bucket: str,
    collection: str,
    user: Optional[str] = None,
    password: Optional[str] = None,
    bearer: Optional[str] = None,
    create: bool = False,
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
        extra: more members as they are, e.g. ``headers={...}``,
            ``timeout_ms=5000``, ``verify_tls=False``, ``max_retries=2``.
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
    target.update(extra)
    return target


def rest_target(url: str, **members: Any) -> Target:
    """A generic JSON REST target: ``{"type": "rest", "url", ...members}``.

    The members (where records sit in a response, paging, the since
    parameter, id and modification fields, tombstones, create and update
    methods, concurrency) are the library's README's "REST targets"; they
    are passed as they are.
    """
    target: Target = {"type": "rest", "url": url}
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
