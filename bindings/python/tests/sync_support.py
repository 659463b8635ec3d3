"""Helpers the sync tests share: SmartSync's flags, a record's own fields,
reading a soup, another Kinto client, and calls bounded in time."""

from __future__ import annotations

import hashlib
import threading
from typing import Any, Callable, Dict, List, Optional, Tuple

import kinto_http
import pytest

import tureen
from tureen import query, sync

from servers import RestServer

FLAGS = ("__local__", "__locally_created__", "__locally_updated__", "__locally_deleted__")
WAIT = 30.0


def is_clean(entry: Dict[str, Any]) -> bool:
    """Every flag present and false: the entry is in step with the server."""
    return all(entry.get(name) is False for name in FLAGS)


def app_fields(record: Optional[Dict[str, Any]], *server_fields: str) -> Optional[Dict[str, Any]]:
    """A record without Tureen's members (``_soup*``, ``__*``) nor
    ``server_fields`` (e.g. Kinto's "last_modified"); None stays None."""
    if record is None:
        return None
    return {
        k: v
        for k, v in record.items()
        if not k.startswith("_soup") and not k.startswith("__") and k not in server_fields
    }


def kinto_fields(record: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """:func:`app_fields` of a record that went through Kinto."""
    return app_fields(record, "last_modified")


def entries(store: tureen.Store, soup: str) -> List[Dict[str, Any]]:
    """Every entry of ``soup``, in entry id order."""
    return list(store.iter_query(query.all(soup, order_path="_soupEntryId", page_size=500)))


def kinto_client(collection: Dict[str, Any], url: Optional[str] = None) -> kinto_http.Client:
    """Another client of the same Kinto collection (a ``kinto_collection``)."""
    auth = collection["auth"]
    return kinto_http.Client(
        server_url=url or collection["url"],
        auth=(auth["user"], auth["password"]),
        bucket=collection["bucket"],
        collection=collection["collection"],
        timeout=10,
    )


# Stores left with a call that never returned: closing one would wait for
# that call forever, so fixtures leave them open (close_unless_stuck).
STUCK: List[tureen.Store] = []


def close_unless_stuck(store: tureen.Store) -> None:
    if not any(store is stuck for stuck in STUCK):
        store.close()


def run_bounded(store: tureen.Store, function: Callable[[], Any], timeout: float = WAIT) -> Any:
    """``function()`` on a daemon thread; its result, or its exception raised
    here. A call still running after ``timeout`` fails the test, and ``store``
    is left open (a deadlock in the library must not hang the run)."""
    result: Dict[str, Any] = {}

    def run() -> None:
        try:
            result["value"] = function()
        except BaseException as exc:  # noqa: B902 - handed to the test thread
            result["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        STUCK.append(store)
        pytest.fail("the call did not return within %.0f s" % timeout)
    if "error" in result:
        raise result["error"]
    return result.get("value")


def conflicted(call: Callable[[], Any], mode: str) -> Dict[str, Any]:
    """Runs a sync that leaves records in conflict and returns its state.
    Under LEAVE_IF_CHANGED it ends DONE, as SmartSync says (leaving them
    alone is what was asked), with the conflicts counted; under the
    MERGE_FAIL_* modes (and a sync down's) it fails with ConflictError."""
    if mode == "LEAVE_IF_CHANGED":
        state: Dict[str, Any] = call()
        assert state["status"] == "DONE" and state["conflicts"] > 0 and state["error"] is None
        return state
    with pytest.raises(tureen.ConflictError) as info:
        call()
    failed: Dict[str, Any] = info.value.state  # type: ignore[attr-defined]
    assert failed["status"] == "FAILED" and failed["error"]
    return failed


# Sync up's merge modes, shared by the Kinto and REST tests:
# (id, mode, local change, remote change, conflict expected, expected server fields after)
DISJOINT = ({"b": 2}, {"a": 2})
SAME = ({"a": 3}, {"a": 2})
NO_REMOTE = ({"b": 2}, None)

MERGE_CASES: List[Tuple[str, str, Dict[str, Any], Optional[Dict[str, Any]], bool, Optional[Dict[str, Any]]]] = [
    # OVERWRITE: the local record replaces the server's, whatever changed there.
    ("overwrite-disjoint", sync.OVERWRITE, *DISJOINT, False, {"a": 1, "b": 2, "c": 1}),
    ("overwrite-same", sync.OVERWRITE, *SAME, False, {"a": 3, "b": 1, "c": 1}),
    # LEAVE_IF_CHANGED: any change on the server is a conflict.
    ("leave-disjoint", sync.LEAVE_IF_CHANGED, *DISJOINT, True, None),
    ("leave-same", sync.LEAVE_IF_CHANGED, *SAME, True, None),
    ("leave-unchanged", sync.LEAVE_IF_CHANGED, *NO_REMOTE, False, {"a": 1, "b": 2, "c": 1}),
    # MERGE_ACCEPT_YOURS: field by field; the local value wins a clash.
    ("accept-yours-disjoint", sync.MERGE_ACCEPT_YOURS, *DISJOINT, False, {"a": 2, "b": 2, "c": 1}),
    ("accept-yours-same", sync.MERGE_ACCEPT_YOURS, *SAME, False, {"a": 3, "b": 1, "c": 1}),
    # MERGE_FAIL_IF_CONFLICT: field by field; a clash is a conflict.
    ("fail-if-conflict-disjoint", sync.MERGE_FAIL_IF_CONFLICT, *DISJOINT, False, {"a": 2, "b": 2, "c": 1}),
    ("fail-if-conflict-same", sync.MERGE_FAIL_IF_CONFLICT, *SAME, True, None),
    # MERGE_FAIL_IF_CHANGED: any remote change is a conflict.
    ("fail-if-changed-disjoint", sync.MERGE_FAIL_IF_CHANGED, *DISJOINT, True, None),
    ("fail-if-changed-same", sync.MERGE_FAIL_IF_CHANGED, *SAME, True, None),
    ("fail-if-changed-unchanged", sync.MERGE_FAIL_IF_CHANGED, *NO_REMOTE, False, {"a": 1, "b": 2, "c": 1}),
]


#: The page size of rest_target's list requests.
REST_PAGE = 20


def rest_target(server: RestServer, **extra: Any) -> Dict[str, Any]:
    """The REST target describing RestServer's API (README, "REST targets");
    ``extra`` adds or replaces members."""
    target = sync.rest_target(
        server.items_url,
        headers={"X-Api-Key": "secret"},
        idField="uid",
        modifiedField="version_ts",
        recordsPath="items",
        params={"limit": str(REST_PAGE)},
        since={"param": "updated_after", "exclusive": True},
        sortedByModification=True,
        nextPage={"cursorPath": "next_cursor", "cursorParam": "cursor"},
        tombstone={"field": "removed", "value": True},
        create="PUT",
        update="PUT",
        concurrency={"versionField": "rev"},
        conflictRecordPath="current",
    )
    target.update(extra)
    return target


def photo(n: int, seed: str) -> bytes:
    """``n`` bytes that look random (SHA-256 of ``seed``-i, chained): a blob
    that neither compresses nor repeats."""
    out = bytearray()
    i = 0
    while len(out) < n:
        out += hashlib.sha256(("%s-%d" % (seed, i)).encode()).digest()
        i += 1
    return bytes(out[:n])
