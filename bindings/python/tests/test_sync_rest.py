"""Sync with a generic JSON REST API that is not Kinto (servers.RestServer):
cursor paging, an exclusive since parameter over stamps that are not unique,
tombstones, version-field concurrency, faults and the request log."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from tureen import query, sync

from servers import RestServer
from sync_support import REST_PAGE, WAIT, app_fields, conflicted, rest_target, close_unless_stuck, entries, is_clean, run_bounded

RAW = "af" * 32  # a raw key: no KDF, fast to open
SOUP = "items"
PAGE = REST_PAGE


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    s = tureen.Store.open(tmp_path / "rest.db", raw_key=RAW)
    try:
        s.register_soup(SOUP, [("uid", "string")])
        yield s
    finally:
        close_unless_stuck(s)


@pytest.fixture
def target(rest_server: RestServer) -> Dict[str, Any]:
    return rest_target(rest_server)


def local_by_uid(store: tureen.Store) -> Dict[str, Dict[str, Any]]:
    return {e["uid"]: e for e in entries(store, SOUP)}


def record_gets(server: RestServer) -> List[Any]:
    """The list requests (GET /api/items) of the log."""
    return [r for r in server.requests("GET", "/api/items") if r.path.rstrip("/") == "/api/items"]


# ---------------------------------------------------------------------------
# sync down


def test_sync_down_follows_the_cursor(store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]) -> None:
    for i in range(45):
        rest_server.set_record({"uid": "u%02d" % i, "n": i})
    seen: List[Dict[str, Any]] = []
    state = store.sync_down(target, SOUP, progress=seen.append)
    assert state["status"] == "DONE" and state["done"] == 45

    gets = record_gets(rest_server)
    assert len(gets) == 3  # 20 + 20 + 5
    assert gets[0].query.get("limit") == [str(PAGE)] and "cursor" not in gets[0].query
    assert gets[1].query.get("cursor") and gets[2].query.get("cursor")
    assert all(r.header("X-Api-Key") == "secret" for r in gets)
    local = local_by_uid(store)
    assert len(local) == 45 and all(is_clean(e) for e in local.values())
    assert app_fields(local["u07"]) == rest_server.get_record("u07")
    assert state["maxTimeStamp"] == max(r["version_ts"] for r in rest_server.records())
    assert len(seen) >= 3 and seen[-1]["status"] == "DONE"
    assert [s["done"] for s in seen] == sorted(s["done"] for s in seen)


def as_entry(record: Dict[str, Any]) -> List[Any]:
    """What sync down makes of a server record, member by member, besides the
    "_soup" members the store writes itself: SmartSync's flags false where
    the record had them and the missing ones after its members, and no error
    fields."""
    flags = ["__local__", "__locally_created__", "__locally_updated__", "__locally_deleted__"]
    errors = {"__last_error__", "__last_error_status__", "__last_error_op__", "__sync_attempts__"}
    out: List[Any] = []
    for k, v in record.items():
        if k in flags:
            out.append((k, False))
        elif k not in errors and k not in ("_soupEntryId", "_soupLastModifiedDate"):
            out.append((k, v))
    return out + [(f, False) for f in flags if f not in record]


def test_a_record_naming_tureens_own_members_becomes_a_clean_entry_in_its_order(
    store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]
) -> None:
    # A server may hold what another client wrote: flags, error fields and
    # entry ids among the record's own members, some with a leading "_".
    rest_server.set_record({"uid": "a", "__locally_deleted__": True, "_note": "kept", "__last_error__": "old",
                            "_soupEntryId": 999, "n": 1, "__local__": True, "__sync_attempts__": 4})
    rest_server.set_record({"uid": "b", "__last_error_op__": "update", "n": 2, "__locally_updated__": "yes"})
    rest_server.set_record({"uid": "c", "n": 3, "_soupLastModifiedDate": 7})
    assert store.sync_down(target, SOUP)["status"] == "DONE"

    def own(entry: Dict[str, Any]) -> List[Any]:
        return [(k, v) for k, v in entry.items() if k not in ("_soupEntryId", "_soupLastModifiedDate")]

    local = local_by_uid(store)
    ids = {uid: e["_soupEntryId"] for uid, e in local.items()}
    assert sorted(ids.values()) == [1, 2, 3]
    for uid in ("a", "b", "c"):
        assert own(local[uid]) == as_entry(rest_server.get_record(uid)), uid

    # Changed on the server: the entries keep their ids and take the new order.
    rest_server.set_record({"uid": "a", "_soupEntryId": 5, "n": 10, "__locally_created__": True, "__local__": True})
    rest_server.patch_record("c", {"__last_error_status__": 500, "_soupEntryId": None})
    assert store.sync_down(target, SOUP)["status"] == "DONE"
    local = local_by_uid(store)
    assert {uid: e["_soupEntryId"] for uid, e in local.items()} == ids
    for uid in ("a", "b", "c"):
        assert own(local[uid]) == as_entry(rest_server.get_record(uid)), uid


def test_resync_with_shared_stamps_loses_nothing(
    store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]
) -> None:
    # Stamps are not unique: several records share the last one.
    rest_server.set_clock(5000)
    for i in range(3):
        rest_server.set_record({"uid": "s%d" % i, "v": 1})
    down = store.sync_down(target, SOUP, name="down")
    assert down["maxTimeStamp"] == 5000
    # Written after the sync, in the same millisecond as the last ones.
    rest_server.set_record({"uid": "late", "v": 1})
    rest_server.set_clock(6000)
    rest_server.patch_record("s1", {"v": 2})
    rest_server.delete_record("s2")
    rest_server.clear_log()

    again = store.resync("down")
    assert again["status"] == "DONE" and again["maxTimeStamp"] == 6000
    [get] = record_gets(rest_server)
    since = int(get.query["updated_after"][0])
    assert since == 4999  # exclusive on the server: one below the stamp, to get it again
    local = local_by_uid(store)
    assert set(local) == {"s0", "s1", "late"}
    assert local["s1"]["v"] == 2 and is_clean(local["s1"])


def test_sync_down_cancelled_continues_from_its_last_page(
    store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]
) -> None:
    for i in range(100):
        rest_server.set_record({"uid": "c%03d" % i}, version_ts=1000 + i)
    pages = threading.Event()
    released = threading.Event()

    def progress(state: Dict[str, Any]) -> None:
        if state["done"] >= 2 * PAGE and not pages.is_set():
            pages.set()
            released.wait(WAIT / 2)

    def canceller() -> None:
        try:
            if pages.wait(WAIT):
                store.sync_cancel("slow")
        finally:
            released.set()

    thread = threading.Thread(target=canceller, daemon=True)
    thread.start()
    with pytest.raises(tureen.CancelledError) as info:
        run_bounded(store, lambda: store.sync_down(target, SOUP, name="slow", progress=progress))
    thread.join(WAIT)
    state = info.value.state  # type: ignore[attr-defined]
    assert state["status"] == "STOPPED" and 2 * PAGE <= state["done"] < 100
    got = len(entries(store, SOUP))
    assert 2 * PAGE <= got < 100

    rest_server.clear_log()
    done = store.resync("slow")
    assert done["status"] == "DONE" and len(entries(store, SOUP)) == 100
    # Not from the start: fewer pages than a full sync's five.
    assert len(record_gets(rest_server)) < 5


def test_clean_ghosts(store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]) -> None:
    for i in range(5):
        rest_server.set_record({"uid": "g%d" % i})
    store.sync_down(target, SOUP, name="down")
    rest_server.delete_record("g0")
    rest_server.delete_record("g4")
    assert store.clean_ghosts("down") == 2
    assert set(local_by_uid(store)) == {"g1", "g2", "g3"}


# ---------------------------------------------------------------------------
# sync up


def test_sync_up_one_request_per_change(
    store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]
) -> None:
    for uid in ("keep", "edit", "drop"):
        rest_server.set_record({"uid": uid, "v": 1})
    store.sync_down(target, SOUP)
    store.local_upsert(SOUP, [{"uid": "n%02d" % i, "v": i} for i in range(30)], id_field="uid")
    store.local_upsert(SOUP, {"uid": "edit", "v": 2}, id_field="uid")
    store.local_delete(SOUP, [local_by_uid(store)["drop"]["_soupEntryId"]])
    rest_server.clear_log()

    seen: List[Dict[str, Any]] = []
    state = store.sync_up(target, SOUP, progress=seen.append)
    assert state["status"] == "DONE" and state["synced"] == 32 and state["totalSize"] == 32
    assert rest_server.request_count("PUT") == 31  # no batch endpoint: one each
    assert rest_server.request_count("DELETE") == 1
    assert seen[-1]["done"] == 32

    [edit_put] = [r for r in rest_server.requests("PUT") if r.path.endswith("/edit")]
    body = edit_put.json()
    # OVERWRITE: no precondition, so no version in the body.
    assert body["v"] == 2 and body.get("rev") is None
    assert not any(k.startswith("__") or k.startswith("_soup") for k in body)
    created = [r.json() for r in rest_server.requests("PUT") if "/n" in r.path]
    assert len(created) == 30
    assert all("rev" not in b or b["rev"] is None for b in created)

    server = {r["uid"]: r for r in rest_server.records()}
    assert set(server) == {"keep", "edit"} | {"n%02d" % i for i in range(30)}
    local = local_by_uid(store)
    assert set(local) == set(server)
    for uid, entry in local.items():
        assert is_clean(entry)
        assert app_fields(entry) == server[uid]  # the server's copy, rev and stamp included


def test_version_conflict(store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]) -> None:
    rest_server.set_record({"uid": "r1", "a": 1, "b": 1})
    store.sync_down(target, SOUP)
    entry = local_by_uid(store)["r1"]
    base_rev = entry["rev"]
    current = rest_server.patch_record("r1", {"a": 2})
    store.local_upsert(SOUP, {"uid": "r1", "a": 1, "b": 5}, id_field="uid")

    state = conflicted(lambda: store.sync_up(target, SOUP, name="up", merge_mode=sync.LEAVE_IF_CHANGED),
                       sync.LEAVE_IF_CHANGED)
    assert state["conflictIds"] == [entry["_soupEntryId"]]
    # The update was sent with the version it was made against, and refused.
    [refused] = [r for r in rest_server.requests("PUT") if r.path.endswith("/r1")]
    assert refused.json()["rev"] == base_rev and refused.status == 409
    [c] = store.conflicts(SOUP)
    assert app_fields(c["theirs"]) == current
    assert rest_server.get_record("r1") == current

    store.resolve_conflict(SOUP, entry["_soupEntryId"], sync.YOURS)
    assert store.resync("up")["status"] == "DONE"
    assert {k: rest_server.get_record("r1")[k] for k in ("a", "b")} == {"a": 1, "b": 5}
    assert app_fields(local_by_uid(store)["r1"]) == rest_server.get_record("r1")


def test_rejected_record_fails_alone(store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]) -> None:
    made = store.local_upsert(SOUP, [{"uid": "u%d" % i} for i in range(3)], id_field="uid")
    rest_server.reject_uid("u1", "u1 is not acceptable")
    with pytest.raises(tureen.HTTPError) as info:
        store.sync_up(target, SOUP, name="up")
    state = info.value.state  # type: ignore[attr-defined]
    assert state["status"] == "FAILED" and state["synced"] == 2 and state["failed"] == 1
    assert state["failedIds"] == [made[1]["_soupEntryId"]]
    assert "1" in state["error"]
    local = local_by_uid(store)
    assert "not acceptable" in local["u1"]["__last_error__"] or "422" in local["u1"]["__last_error__"]
    assert local["u1"]["__local__"] is True and is_clean(local["u0"]) and is_clean(local["u2"])
    assert {r["uid"] for r in rest_server.records()} == {"u0", "u2"}

    rest_server.accept_uid("u1")
    assert store.resync("up")["status"] == "DONE"
    assert not local_by_uid(store)["u1"].get("__last_error__")


# ---------------------------------------------------------------------------
# faults


def test_401_fails_at_once(store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]) -> None:
    rest_server.set_unauthorized(True)
    with pytest.raises(tureen.HTTPError) as info:
        store.sync_down(target, SOUP)
    assert rest_server.request_count() == 1
    assert info.value.state["status"] == "FAILED"  # type: ignore[attr-defined]

    rest_server.set_unauthorized(False)
    rest_server.clear_log()
    with pytest.raises(tureen.HTTPError):
        store.sync_down(dict(target, headers={"X-Api-Key": "wrong"}), SOUP)
    assert rest_server.request_count() == 1


@pytest.mark.parametrize("status", [503, 429])
def test_retry_after_is_honoured(
    store: tureen.Store, rest_server: RestServer, target: Dict[str, Any], status: int
) -> None:
    rest_server.set_record({"uid": "r1"})
    rest_server.fail_next(2, status=status, retry_after=1)
    started = time.monotonic()
    state = store.sync_down(target, SOUP)
    elapsed = time.monotonic() - started
    assert state["status"] == "DONE" and "r1" in local_by_uid(store)
    assert [r.status for r in rest_server.requests()][:3] == [status, status, 200]
    assert elapsed >= 1.8, "Retry-After: 1 was not honoured (%.2f s for two retries)" % elapsed


def test_a_page_failing_while_the_previous_one_commits_loses_nothing(
    store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]
) -> None:
    """Sync down downloads the next page while it commits one. When that
    download fails, the pages already committed stay, with their
    maxTimeStamp, and a resync goes on from there."""
    for i in range(100):
        rest_server.set_record({"uid": "f%03d" % i}, version_ts=2000 + i)

    def progress(state: Dict[str, Any]) -> None:
        if state["done"] == 2 * PAGE:
            rest_server.set_unauthorized(True)  # page 3 or 4 is refused

    with pytest.raises(tureen.HTTPError) as info:
        run_bounded(store, lambda: store.sync_down(target, SOUP, name="flaky", progress=progress))
    state = info.value.state  # type: ignore[attr-defined]
    assert state["status"] == "FAILED" and "401" in state["error"]
    got = len(entries(store, SOUP))
    assert got in (2 * PAGE, 3 * PAGE), got  # whole pages, each with its stamp
    assert state["maxTimeStamp"] == 2000 + got - 1

    rest_server.set_unauthorized(False)
    rest_server.clear_log()
    done = store.resync("flaky")
    assert done["status"] == "DONE" and len(entries(store, SOUP)) == 100
    assert len(record_gets(rest_server)) <= 5 - got // PAGE + 1


def test_a_failed_commit_does_not_wait_for_the_page_downloading(
    store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]
) -> None:
    """Page 1 cannot be stored (the soup holds two entries with the id of one
    of its records, so the upsert by id is ambiguous) while page 2 is slow to
    come: the sync fails with page 1's error at once, without waiting for
    page 2 (the library abandons that download)."""
    store.register_soup("coded", [("code", "string")])
    store.upsert("coded", [{"code": "c005"}, {"code": "c005"}])
    for i in range(2 * PAGE):
        rest_server.set_record({"uid": "d%03d" % i, "code": "c%03d" % i}, version_ts=3000 + i)
    rest_server.delay_next(1, 0.0, method="GET")  # page 1: at once
    rest_server.delay_next(1, 20.0, method="GET")  # page 2: slow

    started = time.monotonic()
    with pytest.raises(tureen.ConstraintError) as info:
        run_bounded(store, lambda: store.sync_down(dict(target, idField="code"), "coded"), timeout=10)
    assert time.monotonic() - started < 10
    state = info.value.state  # type: ignore[attr-defined]
    assert state["status"] == "FAILED" and "several entries match" in state["error"]
    assert store.count(query.all("coded")) == 2  # page 1 rolled back whole
    assert state["synced"] == 0 and state["done"] == 0  # and counted for nothing
    rest_server.clear_faults()


def test_a_huge_retry_after_ends_the_call_at_once_not_a_crash(
    store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]
) -> None:
    """Retry-After is the server's text: 2**62 seconds once overflowed the
    milliseconds and trapped inside the host process, and later held the
    call for 300 s per retry. A wait longer than max_wait_ms ends the call at
    once, with the time the server named in the state."""
    rest_server.set_record({"uid": "r1"})
    rest_server.fail_next(1, status=503, retry_after=str(2**62))
    started = time.monotonic()
    with pytest.raises(tureen.HTTPError) as info:
        run_bounded(store, lambda: store.sync_down(target, SOUP, name="patient"))
    assert time.monotonic() - started < 5
    state = info.value.state  # type: ignore[attr-defined]
    assert state["status"] == "FAILED" and str(2**62) in state["error"]
    assert state["retryAt"] > time.time() * 1000 + 10**12
    assert rest_server.request_count() == 1  # not retried
    assert store.resync("patient")["status"] == "DONE" and "r1" in local_by_uid(store)


def test_retries_give_up_after_max_retries(
    store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]
) -> None:
    rest_server.fail_next(5, status=503, retry_after=0)
    with pytest.raises(tureen.HTTPError) as info:
        store.sync_down(dict(target, max_retries=2), SOUP)
    assert rest_server.request_count() == 3
    assert info.value.state["status"] == "FAILED"  # type: ignore[attr-defined]
    rest_server.clear_faults()


def test_dropped_connection_is_retried_without_duplicates(
    store: tureen.Store, rest_server: RestServer, target: Dict[str, Any]
) -> None:
    store.local_upsert(SOUP, {"uid": "once", "v": 1}, id_field="uid")
    rest_server.drop_next(1, method="PUT")
    state = store.sync_up(target, SOUP)
    assert state["status"] == "DONE"
    assert rest_server.request_count("PUT") == 2
    assert [r["uid"] for r in rest_server.records()] == ["once"]
    assert rest_server.get_record("once")["rev"] == 1


def test_bad_rest_target_members(store: tureen.Store, rest_server: RestServer) -> None:
    with pytest.raises(tureen.InvalidError):
        store.sync_down(rest_target(rest_server, nonsense=True), SOUP)  # unknown member
    with pytest.raises(tureen.InvalidError):
        store.sync_down(rest_target(rest_server, update="POST"), SOUP)
    assert rest_server.request_count() == 0
