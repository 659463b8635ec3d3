"""A REST target without "concurrency" (RestServer(checks_rev=False): a server
that takes any write): every merge mode of sync up still holds, because the
library reads the server's copy before writing and compares its stamp with
the base's. And sync down over ISO 8601 stamps (Salesforce's LastModifiedDate):
ordered by instant, ties across pages, and the highest sent back in the since
parameter exactly as the server wrote it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

import tureen
from tureen import sync

from servers import RestServer, iso_stamp
from sync_support import MERGE_CASES, app_fields, conflicted, entries, is_clean, rest_target

RAW = "5e" * 32  # a raw key: no KDF, fast to open
SOUP = "items"
BASE = {"uid": "r1", "a": 1, "b": 1, "c": 1}
SERVER_FIELDS = ("rev", "version_ts", "modified_at")
T0 = 1_795_000_000_000  # 2026-11-18T11:06:40Z


def plain_target(server: RestServer, **extra: Any) -> Dict[str, Any]:
    """RestServer's API, without "concurrency": nothing in a write says which
    version it was made against."""
    target = rest_target(server, **extra)
    for member in ("concurrency", "conflictRecordPath", "create", "update"):
        target.pop(member, None)
    return target


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    with tureen.Store.open(tmp_path / "rest_merge.db", raw_key=RAW) as s:
        s.register_soup(SOUP, [("uid", "string")])
        yield s


@pytest.fixture
def server() -> Iterator[RestServer]:
    s = RestServer(api_key="secret", checks_rev=False)
    s.start()
    try:
        yield s
    finally:
        s.stop()


def local(store: tureen.Store, uid: str = "r1") -> Optional[Dict[str, Any]]:
    found = [e for e in entries(store, SOUP) if e["uid"] == uid]
    assert len(found) <= 1
    return found[0] if found else None


def own(record: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """A record's app fields, without the server's bookkeeping."""
    return app_fields(record, *SERVER_FIELDS)


def reads(server: RestServer, uid: str = "r1") -> int:
    """GETs of the record itself (not of the list)."""
    return server.request_count("GET", "/api/items/" + uid)


def writes(server: RestServer) -> int:
    return server.request_count("PUT") + server.request_count("PATCH") + server.request_count("DELETE")


def synced_base(store: tureen.Store, server: RestServer, target: Dict[str, Any]) -> Dict[str, Any]:
    """BASE on the server and, through a sync down, in the soup."""
    server.set_record(BASE)
    store.sync_down(target, SOUP)
    entry = local(store)
    assert entry is not None and is_clean(entry)
    return entry


def change_here(store: tureen.Store, entry: Dict[str, Any], fields: Dict[str, Any]) -> None:
    store.local_upsert(SOUP, dict(entry, **fields), id_field="uid")


# ---------------------------------------------------------------------------
# sync up: the merge modes, the server having changed the record meanwhile

# OVERWRITE sends no precondition and reads nothing: it cannot tell this
# target from one with concurrency, so it is left out here.
CASES = [c for c in MERGE_CASES if c[1] != sync.OVERWRITE]


@pytest.mark.parametrize("mode,mine,theirs,conflict,expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_merge_modes_without_concurrency(
    store: tureen.Store,
    server: RestServer,
    mode: str,
    mine: Dict[str, Any],
    theirs: Optional[Dict[str, Any]],
    conflict: bool,
    expected: Optional[Dict[str, Any]],
) -> None:
    target = plain_target(server)
    entry = synced_base(store, server, target)
    if theirs is not None:
        server.patch_record("r1", theirs)
    change_here(store, entry, mine)
    server_before = server.get_record("r1")
    server.clear_log()

    if not conflict:
        state = store.sync_up(target, SOUP, merge_mode=mode)
        assert state["status"] == "DONE" and state["conflicts"] == 0 and state["synced"] == 1
        assert reads(server) >= 1  # the server's copy was compared with the base before writing
        assert own(server.get_record("r1")) == dict(expected, uid="r1")
        mine_now = local(store)
        assert mine_now is not None and is_clean(mine_now)
        assert app_fields(mine_now) == server.get_record("r1")
        assert store.conflicts(SOUP) == []
        return

    state = conflicted(lambda: store.sync_up(target, SOUP, merge_mode=mode), mode)
    assert state["conflicts"] == 1
    assert state["conflictIds"] == [entry["_soupEntryId"]] and state["failed"] == 0 and state["synced"] == 0
    assert writes(server) == 0 and server.get_record("r1") == server_before  # nothing was sent
    [c] = store.conflicts(SOUP)
    assert c["entryId"] == entry["_soupEntryId"] and c["id"] == "r1"
    assert own(c["base"]) == BASE
    assert app_fields(c["theirs"]) == server_before
    assert own(c["yours"]) == dict(BASE, **mine)
    assert sorted(set(c["remoteChanges"]) - {"rev"}) == sorted(theirs or {})
    assert sorted(c["localChanges"]) == sorted(mine)
    assert sorted(c["conflictingChanges"]) == sorted(set(mine) & set(theirs or {}))
    kept = local(store)
    assert kept is not None and own(kept) == dict(BASE, **mine) and kept["__local__"] is True


def test_accept_yours_keeps_their_changes_where_overwrite_replaces_them(
    store: tureen.Store, server: RestServer
) -> None:
    target = plain_target(server)
    server.set_record(dict(BASE, uid="r2"))
    entry = synced_base(store, server, target)
    other = local(store, "r2")
    assert other is not None
    server.patch_record("r1", {"a": 2})
    server.patch_record("r2", {"a": 2})
    change_here(store, entry, {"b": 2})
    server.clear_log()

    assert store.sync_up(target, SOUP, merge_mode=sync.MERGE_ACCEPT_YOURS)["status"] == "DONE"
    assert own(server.get_record("r1")) == {"uid": "r1", "a": 2, "b": 2, "c": 1}

    change_here(store, other, {"b": 2})
    server.clear_log()
    assert store.sync_up(target, SOUP, merge_mode=sync.OVERWRITE)["status"] == "DONE"
    assert reads(server, "r2") == 0  # OVERWRITE never asks
    assert own(server.get_record("r2")) == {"uid": "r2", "a": 1, "b": 2, "c": 1}


@pytest.mark.parametrize("mode", [sync.LEAVE_IF_CHANGED, sync.MERGE_FAIL_IF_CHANGED, sync.MERGE_ACCEPT_YOURS])
def test_server_deleted_the_record_meanwhile(store: tureen.Store, server: RestServer, mode: str) -> None:
    target = plain_target(server)
    entry = synced_base(store, server, target)
    server.delete_record("r1")
    change_here(store, entry, {"b": 2})
    server.clear_log()

    if mode == sync.MERGE_ACCEPT_YOURS:
        # Found gone by the read, yours is published again, as on Kinto.
        assert store.sync_up(target, SOUP, merge_mode=mode)["status"] == "DONE"
        assert reads(server) == 1
        assert own(server.get_record("r1")) == dict(BASE, b=2)
        return
    conflicted(lambda: store.sync_up(target, SOUP, merge_mode=mode), mode)
    assert server.get_record("r1") is None  # not created again behind the deletion
    [c] = store.conflicts(SOUP)
    assert c["theirs"] is None and own(c["yours"]) == dict(BASE, b=2)


def test_local_delete_of_a_record_changed_on_the_server(store: tureen.Store, server: RestServer) -> None:
    target = plain_target(server)
    entry = synced_base(store, server, target)
    changed = server.patch_record("r1", {"a": 2})
    store.local_delete(SOUP, [entry["_soupEntryId"]])

    with pytest.raises(tureen.ConflictError):
        store.sync_up(target, SOUP, merge_mode=sync.MERGE_FAIL_IF_CHANGED)
    assert server.request_count("DELETE") == 0 and server.get_record("r1") == changed
    [c] = store.conflicts(SOUP)
    assert c["yours"] is None and app_fields(c["theirs"]) == changed


# ---------------------------------------------------------------------------
# sync down over ISO 8601 stamps


def iso_target(server: RestServer, **extra: Any) -> Dict[str, Any]:
    return plain_target(server, modifiedField="modified_at", **extra)


def since_sent(server: RestServer) -> List[Optional[str]]:
    """The updated_after of every list request, in order (None: not sent)."""
    lists = [r for r in server.requests("GET", "/api/items") if r.path.rstrip("/") == "/api/items"]
    return [(r.query.get("updated_after") or [None])[0] for r in lists]


def test_iso_stamps_are_ordered_by_instant_and_sent_back_as_written(
    store: tureen.Store, server: RestServer
) -> None:
    # Written in two zones: the later instant has the smaller text.
    server.iso_stamps = "+02:00"
    early = server.set_record({"uid": "early"}, version_ts=T0)
    server.iso_stamps = "Z"
    late = server.set_record({"uid": "late"}, version_ts=T0 + 3_600_000)
    assert late["modified_at"] < early["modified_at"]

    state = store.sync_down(iso_target(server), SOUP, name="down")
    assert state["status"] == "DONE" and state["synced"] == 2 and state["failedRecordIds"] == []
    assert state["maxTimeStamp"] == T0 + 3_600_000
    assert state["maxTimeStampText"] == late["modified_at"] == iso_stamp(T0 + 3_600_000)
    assert {e["uid"]: e["modified_at"] for e in entries(store, SOUP)} == {
        "early": early["modified_at"], "late": late["modified_at"]}

    server.iso_stamps = "+0000"
    newer = server.set_record({"uid": "newer"}, version_ts=T0 + 7_200_000)
    server.clear_log()
    again = store.resync("down")
    assert since_sent(server) == [late["modified_at"]]  # as the server wrote it, not one less
    assert again["status"] == "DONE" and again["synced"] == 1
    assert again["maxTimeStamp"] == T0 + 7_200_000 and again["maxTimeStampText"] == newer["modified_at"]
    assert local(store, "newer") is not None


def test_iso_stamps_tied_across_pages(store: tureen.Store, server: RestServer) -> None:
    server.iso_stamps = "+0000"
    server.set_record({"uid": "first"}, version_ts=T0 - 1000)
    for i in range(5):
        server.set_record({"uid": "t%d" % i}, version_ts=T0)  # one stamp, over three pages of two
    target = iso_target(server, params={"limit": "2"})

    state = store.sync_down(target, SOUP, name="down")
    assert state["status"] == "DONE" and state["synced"] == 6
    assert len(since_sent(server)) == 3
    assert state["maxTimeStamp"] == T0 and state["maxTimeStampText"] == iso_stamp(T0, "+0000")

    server.set_record({"uid": "after"}, version_ts=T0 + 500)
    server.patch_record("t3", {"v": 2}, version_ts=T0 + 700)
    server.delete_record("t1", version_ts=T0 + 800)
    server.clear_log()
    again = store.resync("down")
    assert set(since_sent(server)) == {iso_stamp(T0, "+0000")}  # every page of the resync
    assert again["status"] == "DONE" and again["maxTimeStamp"] == T0 + 800
    assert again["maxTimeStampText"] == iso_stamp(T0 + 800, "+0000")
    uids = {e["uid"]: e for e in entries(store, SOUP)}
    assert set(uids) == {"first", "t0", "t2", "t3", "t4", "after"} and uids["t3"]["v"] == 2


@pytest.mark.parametrize("text", [
    "2026-02-30T00:00:00Z",        # no such day
    "2026-11-24T10:15:30",         # no zone
    "2026-11-24T24:00:00Z",
    "2026-11-24T10:15:30.Z",
    "2026-11-24T10:15:30+25:00",
    "1969-12-31T23:59:59.999Z",    # before 1970
    "2026-11-24",
    "yesterday",
    "1795000000000",
])
def test_a_record_with_a_nonsense_date_fails_alone(store: tureen.Store, server: RestServer, text: str) -> None:
    server.iso_stamps = "Z"
    server.set_record({"uid": "good1"}, version_ts=T0)
    server.set_record({"uid": "bad"}, version_ts=T0 + 1000)
    server.set_record({"uid": "good2"}, version_ts=T0 + 2000)
    server.plant_stamp("bad", text)

    with pytest.raises(tureen.HTTPError) as info:
        store.sync_down(iso_target(server), SOUP)
    state = info.value.state  # type: ignore[attr-defined]
    assert state["failedRecordIds"] == ["bad"] and state["synced"] == 2
    assert state["maxTimeStamp"] == T0 + 2000 and state["maxTimeStampText"] == iso_stamp(T0 + 2000)
    assert sorted(e["uid"] for e in entries(store, SOUP)) == ["good1", "good2"]
