"""Sync events ($fh.sync's eleven codes), SmartSync's outcomes, and record
errors the app can act on (RhoConnect's onCreateError & co.): through the
Python binding, against a real Kinto and hostile servers."""

from __future__ import annotations

import queue
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

import tureen
from tureen import sync

from conftest import child_env
from hostile import HostileServer, Reply, Seen, json_reply
from servers import KintoServer
from sync_support import WAIT, close_unless_stuck, kinto_client

RAW = "5e" * 32
SOUP = "contacts"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    s = tureen.Store.open(tmp_path / "events.db", raw_key=RAW)
    try:
        s.register_soup(SOUP, [("id", "string"), ("name", "string")])
        yield s
    finally:
        close_unless_stuck(s)


class Recorder:
    """Collects sync events; ``wait_for(code, pred)`` waits (bounded) until
    one matches."""

    def __init__(self, store: tureen.Store, codes: Optional[List[str]] = None) -> None:
        self.events: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        self.seen: List[Dict[str, Any]] = []
        self.listener = store.sync_listen(self.events.put, codes)  # type: ignore[arg-type]

    def drain(self, settle: float = 0.3) -> List[Dict[str, Any]]:
        deadline = time.monotonic() + settle
        while time.monotonic() < deadline:
            try:
                self.seen.append(self.events.get(timeout=0.05))
            except queue.Empty:
                pass
        return self.seen

    def wait_for(self, code: str, pred: Callable[[Dict[str, Any]], bool] = lambda e: True) -> Dict[str, Any]:
        deadline = time.monotonic() + WAIT
        for e in self.seen:
            if e["code"] == code and pred(e):
                return e
        while time.monotonic() < deadline:
            try:
                e = self.events.get(timeout=0.1)
            except queue.Empty:
                continue
            self.seen.append(e)
            if e["code"] == code and pred(e):
                return e
        raise AssertionError("no %s event within %s s; seen: %r" % (code, WAIT, [x["code"] for x in self.seen]))

    def codes(self) -> List[str]:
        return [e["code"] for e in self.seen]


def kinto_target(collection: Dict[str, Any], **extra: Any) -> Dict[str, Any]:
    return sync.kinto_target(collection["url"], collection["bucket"], collection["collection"],
                             user=collection["auth"]["user"], password=collection["auth"]["password"], **extra)


# ---------------------------------------------------------------------------
# sync down: started, deltas, complete with RhoConnect's lists


def test_sync_down_tells_what_it_received(store: tureen.Store, kinto_collection: Dict[str, Any]) -> None:
    server = kinto_client(kinto_collection)
    for i in range(3):
        server.create_record(id="r%d" % i, data={"name": "n%d" % i})
    rec = Recorder(store)
    state = store.sync_down(kinto_target(kinto_collection), SOUP, options={"name": "down"})
    started = rec.wait_for("sync_started")
    assert started["syncId"] == state["_soupEntryId"] and started["name"] == "down"
    assert started["soup"] == SOUP and started["type"] == "syncDown"
    done = rec.wait_for("sync_complete")
    assert sorted(done["created"]) == ["r0", "r1", "r2"] and done["updated"] == [] and done["deleted"] == []
    assert done["status"] == "DONE" and done["synced"] == 3
    records = [e for e in rec.seen if e["code"] == "record_delta_received"]
    assert sorted(e["recordId"] for e in records) == ["r0", "r1", "r2"]
    assert all(e["operation"] == "create" and isinstance(e["entryId"], int) for e in records)
    delta = rec.wait_for("delta_received")
    assert delta["created"] == 3 and delta["updated"] == 0 and delta["deleted"] == 0
    # Order: started, the records, the page's delta, then complete.
    order = rec.codes()
    assert order.index("sync_started") < order.index("record_delta_received") < order.index("sync_complete")

    server.update_record(id="r1", data={"name": "changed"})
    server.delete_record(id="r2")
    rec.seen.clear()
    store.resync("down")
    done = rec.wait_for("sync_complete")
    assert done["created"] == [] and done["updated"] == ["r1"] and done["deleted"] == ["r2"]
    ops = {e["recordId"]: e["operation"] for e in rec.seen if e["code"] == "record_delta_received"}
    assert ops == {"r1": "update", "r2": "delete"}


def test_a_filter_selects_codes(store: tureen.Store, kinto_collection: Dict[str, Any]) -> None:
    kinto_client(kinto_collection).create_record(id="a", data={"name": "x"})
    only = Recorder(store, ["sync_complete"])
    # $fh.sync's notify_* flags: when only false ones are given, every other code is wanted.
    flags = Recorder(store, {"notify_record_delta_received": False, "notify_sync_started": False})  # type: ignore[arg-type]
    store.sync_down(kinto_target(kinto_collection), SOUP)
    assert only.drain() and only.codes() == ["sync_complete"]
    assert sorted(set(flags.drain() and flags.codes())) == ["delta_received", "sync_complete"]
    with pytest.raises(tureen.InvalidError):
        store.sync_listen(lambda e: None, ["sync_exploded"])  # type: ignore[list-item]


# ---------------------------------------------------------------------------
# sync up: applied, failed with the HTTP status, local updates


def refusing_server(refuse: Dict[str, int]) -> Callable[[Seen], Optional[Reply]]:
    """A REST API that answers PUT /api/items/<id> with ``refuse[id]`` when
    listed, else stores it."""
    def respond(r: Seen) -> Optional[Reply]:
        if r.method == "GET":
            return json_reply({"items": []})
        rid = r.path.rsplit("/", 1)[-1]
        if rid in refuse:
            return json_reply({"error": "refused"}, refuse[rid])
        if r.method == "DELETE":
            return Reply(204)
        return json_reply(dict(r.json(), last_modified=int(time.time() * 1000)), 201)
    return respond


def rest_target(server: HostileServer) -> Dict[str, Any]:
    return {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}


def test_sync_up_tells_each_outcome_and_keeps_the_status(store: tureen.Store) -> None:
    rec = Recorder(store)
    store.local_upsert(SOUP, [{"id": "ok", "name": "a"}, {"id": "bad", "name": "b"}])
    local = [e for e in rec.drain() if e["code"] == "local_update_applied"]
    assert sorted((e["recordId"], e["operation"]) for e in local) == [("bad", "create"), ("ok", "create")]
    with HostileServer(refusing_server({"bad": 422})) as server:
        with pytest.raises(tureen.HTTPError) as info:
            store.sync_up(rest_target(server), SOUP, options={"name": "up", "maxAttempts": 2})
        applied = rec.wait_for("remote_update_applied")
        assert applied["recordId"] == "ok" and applied["operation"] == "create" and applied["type"] == "syncUp"
        failed = rec.wait_for("remote_update_failed")
        assert failed["recordId"] == "bad" and failed["httpStatus"] == 422 and failed["operation"] == "create"
        ended = rec.wait_for("sync_failed")
        assert ended["failed"] == 1 and ended["errorCode"] == 11 and ended["status"] == "FAILED"
        state = info.value.state  # type: ignore[attr-defined]
        assert state["recordErrors"] == [{"entryId": failed["entryId"], "id": "bad", "operation": "create",
                                          "status": "HTTP", "httpStatus": 422,
                                          "error": state["recordErrors"][0]["error"]}]
        assert set(state["recordErrors"][0]) == set(sync.RecordError.__annotations__)  # the TypedDict is true
        entry = store.get(SOUP, failed["entryId"])
        assert entry["__last_error_status__"] == 422 and entry["__last_error_op__"] == "create"
        assert entry["__sync_attempts__"] == 1 and "422" in entry["__last_error__"]

        # A second refusal reaches maxAttempts; the third sync sends nothing for it.
        with pytest.raises(tureen.HTTPError):
            store.resync("up")
        sent = server.request_count("PUT")
        with pytest.raises(tureen.HTTPError) as info:
            store.resync("up")
        assert server.request_count("PUT") == sent
        assert "maxAttempts" in info.value.state["recordErrors"][0]["error"]  # type: ignore[attr-defined]
        # The app says retry: it is sent again (and succeeds now).
        server.respond = refusing_server({})
        store.sync_error_resolve(SOUP, failed["entryId"], "retry")
        assert store.resync("up")["status"] == "DONE"
        clean = store.get(SOUP, failed["entryId"])
        assert "__last_error__" not in clean and "__sync_attempts__" not in clean and clean["__local__"] is False


class MiniRest:
    """A REST API holding records in memory that refuses, with 422, the
    changes to the ids in ``refuse``."""

    def __init__(self) -> None:
        self.records: Dict[str, Dict[str, Any]] = {}
        self.refuse: set = set()
        self.stamp = 1000

    def __call__(self, r: Seen) -> Optional[Reply]:
        if r.method == "GET":
            return json_reply({"items": sorted(self.records.values(), key=lambda x: x["last_modified"])})
        rid = r.path.rsplit("/", 1)[-1]
        if rid in self.refuse:
            return json_reply({"error": "refused"}, 422)
        if r.method == "DELETE":
            return Reply(204) if self.records.pop(rid, None) else json_reply({"error": "gone"}, 404)
        self.stamp += 1
        self.records[rid] = dict(r.json(), last_modified=self.stamp)
        return json_reply(self.records[rid], 200)


@pytest.mark.parametrize("action", ["rollback", "recreate", "delete"])
def test_each_error_action(store: tureen.Store, action: str) -> None:
    api = MiniRest()
    api.records["x"] = {"id": "x", "name": "server", "last_modified": 5}
    with HostileServer(api) as server:
        target = rest_target(server)
        store.sync_down(target, SOUP, options={"name": "down"})
        eid = store.local_upsert(SOUP, {"id": "x", "name": "mine"})["_soupEntryId"]
        api.refuse.add("x")
        with pytest.raises(tureen.HTTPError):
            store.sync_up(target, SOUP, options={"name": "up"})
        assert store.get(SOUP, eid)["__last_error_status__"] == 422
        api.refuse.clear()
        if action == "recreate":
            del api.records["x"]
        store.sync_error_resolve(SOUP, eid, action)  # type: ignore[arg-type]
        after = store.get(SOUP, eid)
        if action == "rollback":
            assert after["name"] == "server" and after["__local__"] is False and "__last_error__" not in after
            assert store.resync("up")["status"] == "DONE" and api.records["x"]["name"] == "server"
        elif action == "recreate":
            assert after["__locally_created__"] is True and after["name"] == "mine"
            assert store.resync("up")["status"] == "DONE" and api.records["x"]["name"] == "mine"
        else:
            assert after["__locally_deleted__"] is True
            assert store.resync("up")["status"] == "DONE" and "x" not in api.records
            assert store.get(SOUP, eid) is None
        if action != "delete":
            with pytest.raises(tureen.NotFoundError):
                store.sync_error_resolve(SOUP, eid, "retry")  # no error left to resolve
        with pytest.raises(tureen.InvalidError):
            store.sync_error_resolve(SOUP, eid, "explode")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# conflicts: LEAVE_IF_CHANGED ends DONE (SmartSync), and says collision


def test_leave_if_changed_ends_done_with_its_conflicts(store: tureen.Store, kinto_collection: Dict[str, Any]) -> None:
    server = kinto_client(kinto_collection)
    server.create_record(id="c", data={"name": "v1"})
    store.sync_down(kinto_target(kinto_collection), SOUP)
    store.local_upsert(SOUP, {"id": "c", "name": "mine"})
    server.update_record(id="c", data={"name": "theirs"})
    rec = Recorder(store)
    state = store.sync_up(kinto_target(kinto_collection), SOUP, options={"mergeMode": "LEAVE_IF_CHANGED"})
    assert state["status"] == "DONE" and state["conflicts"] == 1 and state["failed"] == 0
    collision = rec.wait_for("collision_detected")
    assert collision["recordId"] == "c" and collision["operation"] == "update"
    assert rec.wait_for("sync_complete")["conflicts"] == 1
    assert [c["id"] for c in store.conflicts(SOUP)] == ["c"]
    assert server.get_record(id="c")["data"]["name"] == "theirs"
    # The MERGE_FAIL modes still fail.
    with pytest.raises(tureen.ConflictError):
        store.sync_up(kinto_target(kinto_collection), SOUP, options={"mergeMode": "MERGE_FAIL_IF_CHANGED"})


# ---------------------------------------------------------------------------
# offline: sync_failed, then offline_update for changes made meanwhile


def test_offline_updates_are_told(store: tureen.Store) -> None:
    rec = Recorder(store)
    with HostileServer(refusing_server({})) as server:
        target = dict(rest_target(server), max_retries=0)
        store.local_upsert(SOUP, {"id": "a", "name": "x"})
        port = server.down()
        with pytest.raises(tureen.NetworkError):
            store.sync_up(target, SOUP, options={"name": "up"})
        failed = rec.wait_for("sync_failed")
        assert failed["errorCode"] == 10 and failed["name"] == "up"
        store.local_upsert(SOUP, {"id": "b", "name": "y"})
        offline = rec.wait_for("offline_update")
        assert offline["recordId"] == "b" and offline["operation"] == "create" and offline["soup"] == SOUP
        server.start(port)
        assert store.resync("up")["status"] == "DONE"
        rec.seen.clear()
        store.local_upsert(SOUP, {"id": "c", "name": "z"})
        assert "offline_update" not in [e["code"] for e in rec.drain()]


def test_a_local_delete_names_the_record_by_the_upserts_id_field(tmp_path: Path, store: tureen.Store) -> None:
    store.register_soup("people", [("uid", "string")])
    rec = Recorder(store, ["local_update_applied"])
    made = store.local_upsert("people", [{"uid": "u1", "name": "a"}, {"uid": "u2", "name": "b"}], id_field="uid")
    store.local_delete("people", [made[0]["_soupEntryId"]])
    deleted = rec.wait_for("local_update_applied", lambda e: e["operation"] == "delete")
    assert (deleted["recordId"], deleted["entryId"], deleted["soup"]) == ("u1", made[0]["_soupEntryId"], "people")
    # Kept in the store: a handle opened later names it the same way, and
    # another soup's records keep their own field.
    store.close()
    again = tureen.Store.open(tmp_path / "events.db", raw_key=RAW)
    try:
        rec = Recorder(again, ["local_update_applied"])
        other = again.local_upsert(SOUP, {"id": "c1", "name": "c"})
        again.local_delete("people", [made[1]["_soupEntryId"]])
        again.local_delete(SOUP, [other["_soupEntryId"]])
        rec.drain()
        deletes = [(e["soup"], e["recordId"]) for e in rec.seen if e["operation"] == "delete"]
        assert sorted(deletes) == [(SOUP, "c1"), ("people", "u2")]
    finally:
        again.close()


# ---------------------------------------------------------------------------
# client_storage_failed: the store itself cannot write


HOLDER = """
import sys, time, tureen
s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2])
with s.transaction():
    s.upsert("contacts", {"id": "held", "name": "h"})
    print("holding", flush=True)
    time.sleep(60)
"""


def test_a_store_that_cannot_write_is_told(tmp_path: Path, kinto_collection: Dict[str, Any]) -> None:
    path = tmp_path / "busy.db"
    kinto_client(kinto_collection).create_record(id="r", data={"name": "n"})
    with tureen.Store.open(path, raw_key=RAW, busy_timeout_ms=200) as s:
        s.register_soup(SOUP, [("id", "string"), ("name", "string")])
        rec = Recorder(s)
        s.sync_down(kinto_target(kinto_collection), SOUP, options={"name": "down", "start": False})
        child = subprocess.Popen([sys.executable, "-c", HOLDER, str(path), RAW], env=child_env(),
                                 stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "holding"
            with pytest.raises(tureen.BusyError):
                s.resync("down")
        finally:
            child.kill()
            child.wait(10)
        storage = rec.wait_for("client_storage_failed")
        assert storage["errorCode"] == 7 and storage["name"] == "down"
        assert rec.wait_for("sync_failed")["errorCode"] == 7
        assert s.resync("down")["status"] == "DONE"


def test_a_devices_own_change_coming_back_is_not_news(store: tureen.Store, kinto_collection: Dict[str, Any]) -> None:
    """After a sync up, the next sync down receives the device's own change
    (with the server's stamp): the entry already holds it, so nothing is
    written and no record event or change event is told."""
    target = kinto_target(kinto_collection)
    store.sync_down(target, SOUP, options={"name": "down"})
    store.local_upsert(SOUP, {"id": "mine", "name": "m"})
    store.sync_up(target, SOUP)
    rec = Recorder(store)
    changes: List[Dict[str, Any]] = []
    with store.listen(SOUP, changes.append):
        state = store.resync("down")
        done = rec.wait_for("sync_complete")
        rec.drain(0.2)
    assert state["status"] == "DONE" and state["synced"] == 1
    assert done["created"] == done["updated"] == done["deleted"] == []
    assert "record_delta_received" not in rec.codes()
    assert [c for c in changes if c["soup"] == SOUP and (c["created"] or c["updated"])] == []


# ---------------------------------------------------------------------------
# $fh.sync's own members: dataset_id, uid, message


RECORD_CODES = ("record_delta_received", "remote_update_applied", "remote_update_failed", "collision_detected",
                "local_update_applied", "offline_update")


def assert_fh_sync_members(events: List[Dict[str, Any]]) -> None:
    """Every event names its dataset (a string); a record event names its
    record as "uid"; only record events have a "uid"."""
    for e in events:
        assert isinstance(e["dataset_id"], str) and "message" in e, e
        if e["code"] in RECORD_CODES:
            assert e["uid"] == e["recordId"] and isinstance(e["uid"], str), e
        else:
            assert "uid" not in e, e


def test_events_carry_fh_sync_dataset_uid_and_message(store: tureen.Store, kinto_collection: Dict[str, Any]) -> None:
    server = kinto_client(kinto_collection)
    server.create_record(id="c", data={"name": "v1"})
    rec = Recorder(store)
    # An unnamed sync down: its id, as text, names the dataset.
    state = store.sync_down(kinto_target(kinto_collection), SOUP)
    unnamed = str(state["_soupEntryId"])
    assert rec.wait_for("sync_started")["dataset_id"] == unnamed
    assert rec.wait_for("sync_started")["message"] is None
    delta = rec.wait_for("record_delta_received")
    assert (delta["dataset_id"], delta["uid"], delta["message"]) == (unnamed, "c", "create")
    assert rec.wait_for("delta_received")["message"] == "partial dataset"
    assert rec.wait_for("sync_complete")["message"] == "online"

    # A local write: no sync made it, so the soup names the dataset.
    store.local_upsert(SOUP, {"id": "c", "name": "mine"})
    local = rec.wait_for("local_update_applied")
    assert (local["dataset_id"], local["uid"], local["message"]) == (SOUP, "c", "update")

    # A named sync up meets a change on the server: the collision carries
    # $fh.sync's update object.
    server.update_record(id="c", data={"name": "theirs"})
    store.sync_up(kinto_target(kinto_collection), SOUP, options={"name": "up", "mergeMode": "LEAVE_IF_CHANGED"})
    collision = rec.wait_for("collision_detected")
    assert collision["dataset_id"] == "up" and collision["uid"] == "c"
    assert collision["message"] == {"action": "update", "type": "collision", "uid": "c"}
    assert_fh_sync_members(rec.drain())


def test_sync_up_events_carry_fh_sync_update_objects(store: tureen.Store) -> None:
    rec = Recorder(store)
    store.local_upsert(SOUP, [{"id": "ok", "name": "a"}, {"id": "bad", "name": "b"}])
    with HostileServer(refusing_server({"bad": 422})) as server:
        with pytest.raises(tureen.HTTPError):
            store.sync_up(rest_target(server), SOUP, options={"name": "up"})
        applied = rec.wait_for("remote_update_applied")
        assert applied["message"] == {"action": "create", "type": "applied", "uid": "ok"}
        failed = rec.wait_for("remote_update_failed")
        message = failed["message"]
        assert isinstance(message, dict) and set(message) == {"action", "type", "uid", "msg"}
        assert (message["action"], message["type"], message["uid"]) == ("create", "failed", "bad")
        assert message["msg"] == failed["error"] and isinstance(message["msg"], str)
        ended = rec.wait_for("sync_failed")
        assert ended["dataset_id"] == "up" and ended["message"] == ended["error"] != "offline"

        # Out of reach: $fh.sync says "offline".
        target = dict(rest_target(server), max_retries=0)
        port = server.down()
        rec.seen.clear()
        with pytest.raises(tureen.NetworkError):
            store.sync_up(target, SOUP, options={"name": "up2"})
        offline = rec.wait_for("sync_failed")
        assert (offline["dataset_id"], offline["errorCode"], offline["message"]) == ("up2", 10, "offline")
        store.local_upsert(SOUP, {"id": "later", "name": "z"})
        update = rec.wait_for("offline_update")
        assert (update["dataset_id"], update["uid"], update["message"]) == (SOUP, "later", "create")
        server.start(port)
    assert_fh_sync_members(rec.drain())
