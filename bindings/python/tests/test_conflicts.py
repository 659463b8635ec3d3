"""Conflicts with a real Kinto server: every merge mode of sync up, deletions
on either side, sync down meeting a deletion, and each resolution followed by
a sync that makes the server and the soup agree."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import kinto_http
import pytest

import tureen
from tureen import query, sync
from sync_support import MERGE_CASES, conflicted, is_clean, kinto_client, kinto_fields

RAW = "8d" * 32  # a raw key: no KDF, fast to open
SOUP = "items"
BASE = {"id": "r1", "a": 1, "b": 1, "c": 1}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    with tureen.Store.open(tmp_path / "conflicts.db", raw_key=RAW) as s:
        s.register_soup(SOUP, [("id", "string")])
        yield s


@pytest.fixture
def target(kinto_collection: Dict[str, Any]) -> Dict[str, Any]:
    return dict(kinto_collection, type="kinto")


@pytest.fixture
def other(kinto_collection: Dict[str, Any]) -> kinto_http.Client:
    """Another client of the same collection, changing the server."""
    return kinto_client(kinto_collection)


def local(store: tureen.Store, rid: str = "r1") -> Optional[Dict[str, Any]]:
    found = store.query(query.exact(SOUP, "id", rid))
    assert len(found) <= 1
    return found[0] if found else None


def remote(other: kinto_http.Client, rid: str = "r1") -> Optional[Dict[str, Any]]:
    for record in other.get_records():
        if record["id"] == rid:
            return record
    return None


def synced_base(store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client) -> Dict[str, Any]:
    """BASE on the server and, through a sync down, in the soup."""
    other.create_record(id=BASE["id"], data=dict(BASE))
    store.sync_down(target, SOUP)
    entry = local(store)
    assert entry is not None and is_clean(entry)
    return entry


def assert_agree(store: tureen.Store, other: kinto_http.Client, rid: str = "r1") -> None:
    """The soup's record and the server's are the same, and nothing is left
    to send."""
    mine, theirs = local(store, rid), remote(other, rid)
    assert kinto_fields(mine) == kinto_fields(theirs), (mine, theirs)
    if mine is not None:
        assert is_clean(mine), mine
    assert store.conflicts(SOUP) == []




@pytest.mark.parametrize(
    "mode,mine,theirs,conflict,expected", [c[1:] for c in MERGE_CASES], ids=[c[0] for c in MERGE_CASES]
)
def test_merge_modes(
    store: tureen.Store,
    target: Dict[str, Any],
    other: kinto_http.Client,
    mode: str,
    mine: Dict[str, Any],
    theirs: Optional[Dict[str, Any]],
    conflict: bool,
    expected: Optional[Dict[str, Any]],
) -> None:
    entry = synced_base(store, target, other)
    if theirs is not None:
        other.patch_record(id="r1", data=theirs)
    store.local_upsert(SOUP, dict(BASE, **mine))
    server_before = remote(other)

    if not conflict:
        state = store.sync_up(target, SOUP, merge_mode=mode)
        assert state["status"] == "DONE" and state["conflicts"] == 0 and state["synced"] == 1
        assert kinto_fields(remote(other)) == dict(expected, id="r1")
        assert_agree(store, other)
        return

    state = conflicted(lambda: store.sync_up(target, SOUP, merge_mode=mode), mode)
    assert state["conflicts"] == 1 and state["conflictIds"] == [entry["_soupEntryId"]]
    assert state["failed"] == 0 and state["synced"] == 0
    assert remote(other) == server_before  # nothing was sent

    found = store.conflicts(SOUP)
    assert len(found) == 1
    c = found[0]
    assert c["entryId"] == entry["_soupEntryId"] and c["id"] == "r1"
    assert c["syncId"] == state["_soupEntryId"]
    assert kinto_fields(c["base"]) == BASE
    assert kinto_fields(c["theirs"]) == kinto_fields(server_before)
    assert kinto_fields(c["yours"]) == dict(BASE, **mine)
    assert sorted(c["remoteChanges"]) == sorted(theirs or {})
    assert sorted(c["localChanges"]) == sorted(mine)
    assert sorted(c["conflictingChanges"]) == sorted(set(mine) & set(theirs or {}))
    # The record is kept as it was, still a local change.
    kept = local(store)
    assert kept is not None and kinto_fields(kept) == dict(BASE, **mine)
    assert kept["__local__"] is True


CONFLICTING_MODES = [sync.LEAVE_IF_CHANGED, sync.MERGE_FAIL_IF_CONFLICT, sync.MERGE_FAIL_IF_CHANGED]


@pytest.mark.parametrize("mode", CONFLICTING_MODES)
@pytest.mark.parametrize("resolution", [sync.YOURS, sync.THEIRS, sync.MERGED])
def test_resolutions(
    store: tureen.Store,
    target: Dict[str, Any],
    other: kinto_http.Client,
    mode: str,
    resolution: str,
) -> None:
    entry = synced_base(store, target, other)
    other.patch_record(id="r1", data={"a": 2})
    store.local_upsert(SOUP, dict(BASE, a=3, b=3))
    state = conflicted(lambda: store.sync_up(target, SOUP, name="up", merge_mode=mode), mode)
    assert state["conflicts"] == 1

    merged = dict(BASE, a=23, b=3, c=4)
    store.resolve_conflict(
        SOUP, entry["_soupEntryId"], resolution, merged if resolution == sync.MERGED else None
    )
    assert store.conflicts(SOUP) == []
    after = local(store)
    assert after is not None
    if resolution == sync.THEIRS:
        # The server's copy, with nothing left to send.
        assert kinto_fields(after) == dict(BASE, a=2) and is_clean(after)
    elif resolution == sync.YOURS:
        assert kinto_fields(after) == dict(BASE, a=3, b=3) and after["__local__"] is True
    else:
        assert kinto_fields(after) == merged and after["__local__"] is True

    # The same sync, same mode, run again: the server takes the resolution.
    state = store.resync("up")
    assert state["status"] == "DONE" and state["conflicts"] == 0
    expected = {sync.YOURS: dict(BASE, a=3, b=3), sync.THEIRS: dict(BASE, a=2), sync.MERGED: merged}
    assert kinto_fields(remote(other)) == expected[resolution]
    assert state["synced"] == (0 if resolution == sync.THEIRS else 1)
    assert_agree(store, other)


def deleted_there_changed_here(
    store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client, mode: str
) -> Dict[str, Any]:
    """BASE synced down, deleted on the server, changed here: sync up "up"
    in `mode` leaves a conflict. Returns the entry as synced down."""
    entry = synced_base(store, target, other)
    other.delete_record(id="r1")
    store.local_upsert(SOUP, dict(BASE, b=5))
    conflicted(lambda: store.sync_up(target, SOUP, name="up", merge_mode=mode), mode)
    return entry


def test_server_deleted_local_updated(
    store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client
) -> None:
    entry = deleted_there_changed_here(store, target, other, sync.LEAVE_IF_CHANGED)
    [c] = store.conflicts(SOUP)
    assert set(c) == set(tureen.Conflict.__annotations__)  # the TypedDict is true
    assert c["theirs"] is None and kinto_fields(c["yours"]) == dict(BASE, b=5)
    assert kinto_fields(c["base"]) == BASE

    # Yours: the record is made again on the server.
    store.resolve_conflict(SOUP, entry["_soupEntryId"], "yours")
    assert store.resync("up")["status"] == "DONE"
    assert kinto_fields(remote(other)) == dict(BASE, b=5)
    assert_agree(store, other)


def test_server_deleted_local_updated_yours_under_a_random_id(
    store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client
) -> None:
    """As test_server_deleted_local_updated, under the random id local_upsert
    gives: "yours" makes the record again. (The update refused by the
    deletion was once taken for a lost create of this store's, and the
    deletion stood: the record vanished from both sides.)"""
    entry = store.local_upsert(SOUP, {"a": 1})
    rid = entry["id"]
    store.sync_up(target, SOUP, name="up", merge_mode=sync.LEAVE_IF_CHANGED)
    other.delete_record(id=rid)
    store.local_upsert(SOUP, dict(local(store, rid) or {}, a=2))
    conflicted(lambda: store.sync_up(target, SOUP, name="up", merge_mode=sync.LEAVE_IF_CHANGED),
               sync.LEAVE_IF_CHANGED)
    [c] = store.conflicts(SOUP)
    assert c["theirs"] is None

    store.resolve_conflict(SOUP, entry["_soupEntryId"], sync.YOURS)
    assert store.resync("up")["synced"] == 1
    assert kinto_fields(remote(other, rid)) == {"id": rid, "a": 2}
    assert_agree(store, other, rid)


def test_server_deleted_local_updated_theirs_removes(
    store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client
) -> None:
    entry = deleted_there_changed_here(store, target, other, sync.MERGE_FAIL_IF_CHANGED)
    store.resolve_conflict(SOUP, entry["_soupEntryId"], "theirs")
    assert local(store) is None and remote(other) is None
    assert store.conflicts(SOUP) == []


@pytest.mark.parametrize("resolution", [sync.YOURS, sync.THEIRS])
def test_local_deleted_server_updated(
    store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client, resolution: str
) -> None:
    entry = synced_base(store, target, other)
    other.patch_record(id="r1", data={"c": 9})
    store.local_delete(SOUP, [entry["_soupEntryId"]])
    with pytest.raises(tureen.ConflictError):
        store.sync_up(target, SOUP, name="up", merge_mode=sync.MERGE_FAIL_IF_CHANGED)
    [c] = store.conflicts(SOUP)
    assert c["yours"] is None and kinto_fields(c["theirs"]) == dict(BASE, c=9)
    assert c["remoteChanges"] == ["c"]

    store.resolve_conflict(SOUP, entry["_soupEntryId"], resolution)
    state = store.resync("up")
    assert state["status"] == "DONE"
    if resolution == sync.YOURS:
        assert remote(other) is None and local(store) is None
    else:
        assert kinto_fields(local(store)) == dict(BASE, c=9)
    assert_agree(store, other)


def test_sync_down_leave_if_changed_meets_a_deletion(
    store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client
) -> None:
    other.create_record(id="r1", data=dict(BASE))
    other.create_record(id="r2", data={"id": "r2", "a": 1})
    store.sync_down(target, SOUP, name="down", merge_mode=sync.LEAVE_IF_CHANGED)
    entry = local(store)
    assert entry is not None
    store.local_upsert(SOUP, dict(BASE, a=7))
    other.delete_record(id="r1")
    other.delete_record(id="r2")  # not changed locally: simply removed

    state = conflicted(lambda: store.resync("down"), sync.LEAVE_IF_CHANGED)
    assert state["conflictIds"] == [entry["_soupEntryId"]]
    assert local(store, "r2") is None
    [c] = store.conflicts(SOUP)
    assert c["theirs"] is None and kinto_fields(c["yours"]) == dict(BASE, a=7)

    store.resolve_conflict(SOUP, entry["_soupEntryId"], "theirs")
    assert local(store) is None and store.conflicts(SOUP) == []
    assert store.resync("down")["status"] == "DONE"


def test_resolve_errors(store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client) -> None:
    entry = synced_base(store, target, other)
    with pytest.raises(tureen.NotFoundError):
        store.resolve_conflict(SOUP, entry["_soupEntryId"], "yours")  # no conflict
    other.patch_record(id="r1", data={"a": 2})
    store.local_upsert(SOUP, dict(BASE, a=3))
    with pytest.raises(tureen.ConflictError):
        store.sync_up(target, SOUP, merge_mode=sync.MERGE_FAIL_IF_CHANGED)
    eid = entry["_soupEntryId"]
    with pytest.raises(tureen.InvalidError):
        store.resolve_conflict(SOUP, eid, "mine")
    with pytest.raises(tureen.InvalidError):
        store.resolve_conflict(SOUP, eid, "merged")  # merged record missing
    with pytest.raises(tureen.InvalidError):
        store.resolve_conflict(SOUP, eid, "yours", {"id": "r1"})  # merged only with "merged"
    with pytest.raises(TypeError):
        store.resolve_conflict(SOUP, str(eid), "yours")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.resolve_conflict(SOUP, eid, "merged", ["not", "a", "dict"])  # type: ignore[arg-type]
    with pytest.raises(tureen.NotFoundError):
        store.conflicts("no_such_soup")
    assert len(store.conflicts(SOUP)) == 1  # still there after the refused attempts


def test_base_kept_through_app_edits(store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client) -> None:
    """Sync down keeps no second copy of a record: the clean entry is its
    base until something changes it. An app that marks its edits itself
    (SmartSync's convention, plain upsert) must still get the server copy as
    the base, however many times it edits before the sync up."""
    entry = synced_base(store, target, other)
    store.upsert(SOUP, dict(entry, b=2))  # edited, not marked yet
    store.upsert(SOUP, dict(local(store) or {}, b=3, __local__=True, __locally_updated__=True))
    other.patch_record(id="r1", data={"a": 2})

    with pytest.raises(tureen.ConflictError):
        store.sync_up(target, SOUP, merge_mode=sync.MERGE_FAIL_IF_CHANGED)
    [c] = store.conflicts(SOUP)
    assert kinto_fields(c["base"]) == BASE
    assert sorted(c["localChanges"]) == ["b"] and sorted(c["remoteChanges"]) == ["a"]

    store.resolve_conflict(SOUP, entry["_soupEntryId"], sync.YOURS)
    assert store.sync_up(target, SOUP, merge_mode=sync.MERGE_FAIL_IF_CHANGED)["status"] == "DONE"
    assert kinto_fields(remote(other)) == dict(BASE, b=3)


def test_resync_makes_the_new_server_copy_the_base(
    store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client
) -> None:
    """A record updated by a resync is based on the server's new version: a
    local edit made after it goes up without a conflict, even in the strictest
    mode, and one made on the server after it is seen as the server's."""
    synced_base(store, target, other)
    other.patch_record(id="r1", data={"a": 2})
    store.sync_down(target, SOUP)
    assert kinto_fields(local(store)) == dict(BASE, a=2)
    store.local_upsert(SOUP, dict(BASE, a=2, b=5))
    state = store.sync_up(target, SOUP, merge_mode=sync.MERGE_FAIL_IF_CHANGED)
    assert state["status"] == "DONE" and state["synced"] == 1
    assert kinto_fields(remote(other)) == dict(BASE, a=2, b=5)

    other.patch_record(id="r1", data={"c": 7})
    store.local_upsert(SOUP, dict(BASE, a=2, b=6))
    with pytest.raises(tureen.ConflictError):
        store.sync_up(target, SOUP, merge_mode=sync.MERGE_FAIL_IF_CHANGED)
    [c] = store.conflicts(SOUP)
    assert kinto_fields(c["base"]) == dict(BASE, a=2, b=5)
    assert c["remoteChanges"] == ["c"] and c["localChanges"] == ["b"]


def conflict_on_a(store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client) -> Dict[str, Any]:
    """BASE synced down, then "a" changed on both sides: a LEAVE_IF_CHANGED
    sync up leaves one conflict. Returns the entry as synced down."""
    entry = synced_base(store, target, other)
    other.patch_record(id="r1", data={"a": 2})
    store.local_upsert(SOUP, dict(BASE, a=3))
    conflicted(lambda: store.sync_up(target, SOUP, merge_mode=sync.LEAVE_IF_CHANGED), sync.LEAVE_IF_CHANGED)
    assert len(store.conflicts(SOUP)) == 1
    return entry


def test_a_soup_dropped_and_registered_again_starts_clean(
    store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client
) -> None:
    """A new soup of the same name reuses entry ids from 1: the conflicts and
    base copies of the dropped one must not come back attached to them."""
    entry = conflict_on_a(store, target, other)

    store.drop_soup(SOUP)
    store.register_soup(SOUP, [("id", "string")])
    assert store.conflicts(SOUP) == []
    store.sync_down(target, SOUP)
    again = local(store)
    assert again is not None and again["_soupEntryId"] == entry["_soupEntryId"]  # the same id, a new record
    assert store.conflicts(SOUP) == []
    store.local_upsert(SOUP, dict(BASE, a=2, c=4))
    state = store.sync_up(target, SOUP, merge_mode=sync.MERGE_FAIL_IF_CHANGED)
    assert state["status"] == "DONE" and state["synced"] == 1
    assert kinto_fields(remote(other)) == dict(BASE, a=2, c=4)


@pytest.mark.parametrize("how", ["remove", "clear"])
def test_removing_the_entry_removes_its_conflict(
    store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client, how: str
) -> None:
    """A conflict names an entry; once the app removes that entry (or clears
    the soup), no conflict is listed for it, and nothing is sent for it."""
    entry = conflict_on_a(store, target, other)

    if how == "remove":
        store.remove(SOUP, [entry["_soupEntryId"]])
    else:
        store.clear_soup(SOUP)
    assert store.conflicts(SOUP) == []
    with pytest.raises(tureen.NotFoundError):
        store.resolve_conflict(SOUP, entry["_soupEntryId"], sync.YOURS)
    state = store.sync_up(target, SOUP, merge_mode=sync.LEAVE_IF_CHANGED)
    assert state["status"] == "DONE" and state["synced"] == 0
    assert kinto_fields(remote(other)) == dict(BASE, a=2)


def test_theirs_after_a_sync_down_past_a_newer_copy(
    store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client
) -> None:
    """The server moves again while a conflict is open, and a sync down
    passes its new copy (the local change stays, LEAVE_IF_CHANGED): the
    conflict's "theirs" is that copy, so resolving "theirs" ends with the
    server's record as it is, not the one the conflict first kept, which
    no later sync would ever correct."""
    entry = conflict_on_a(store, target, other)
    other.patch_record(id="r1", data={"c": 8})
    newest = remote(other)
    state = store.sync_down(target, SOUP, name="down", merge_mode=sync.LEAVE_IF_CHANGED)
    assert state["status"] == "DONE"
    kept = local(store)
    assert kept is not None and kinto_fields(kept) == dict(BASE, a=3) and kept["__local__"] is True

    [c] = store.conflicts(SOUP)
    assert c["theirs"] == newest
    assert kinto_fields(c["base"]) == BASE and kinto_fields(c["yours"]) == dict(BASE, a=3)
    assert sorted(c["remoteChanges"]) == ["a", "c"] and c["conflictingChanges"] == ["a"]

    store.resolve_conflict(SOUP, entry["_soupEntryId"], sync.THEIRS)
    after = local(store)
    assert after is not None and after["last_modified"] == newest["last_modified"]
    assert kinto_fields(after) == dict(BASE, a=2, c=8) and is_clean(after)
    assert store.resync("down")["status"] == "DONE"
    assert store.sync_up(target, SOUP, merge_mode=sync.LEAVE_IF_CHANGED)["synced"] == 0
    assert_agree(store, other)


def test_theirs_after_a_sync_down_past_the_record_made_again(
    store: tureen.Store, target: Dict[str, Any], other: kinto_http.Client
) -> None:
    """Deleted on the server, so "theirs" is None; then made again there
    while the conflict is open, and a sync down passes it: resolving
    "theirs" keeps the record as the server has it, where removing the
    entry would lose it here for good."""
    entry = deleted_there_changed_here(store, target, other, sync.LEAVE_IF_CHANGED)
    other.create_record(id="r1", data={"id": "r1", "a": 4})
    made_again = remote(other)
    store.sync_down(target, SOUP, name="down", merge_mode=sync.LEAVE_IF_CHANGED)
    [c] = store.conflicts(SOUP)
    assert c["theirs"] == made_again and kinto_fields(c["yours"]) == dict(BASE, b=5)

    store.resolve_conflict(SOUP, entry["_soupEntryId"], sync.THEIRS)
    after = local(store)
    assert after is not None and after["_soupEntryId"] == entry["_soupEntryId"]
    assert kinto_fields(after) == {"id": "r1", "a": 4} and is_clean(after)
    assert store.resync("down")["status"] == "DONE"
    assert_agree(store, other)
