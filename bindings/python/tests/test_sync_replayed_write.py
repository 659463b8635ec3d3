"""OVERWRITE must not replay a write whose answer was lost over a later one.

Device A syncs up record r in OVERWRITE; Kinto commits A's copy but the
answer never comes back (the proxy hangs up after the commit). Device B
then writes r and is acknowledged. A's next sync up used to send its copy
again without a precondition, so the server went A, B, A: B's acknowledged
write overwritten by a replay of an older one (the proof run's "replayed
write", docs/proof.md). A now sends it with its base's precondition; the
server's copy is neither the base nor A's, so it is a conflict for A's app.
MERGE_ACCEPT_YOURS, which merged A's fields over B's, does the same where
both changed a field.

A send that never connected (connection refused) cannot have landed: the
change keeps plain OVERWRITE behaviour and overwrites a later server change.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

import tureen
from tureen import sync

from conftest import KINTO_AUTH, new_kinto_collection
from hostile import KintoProxy
from servers import KintoServer
from sync_support import close_unless_stuck, entries, is_clean

KEY = "b4" * 32
SOUP = "items"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    s = tureen.Store.open(tmp_path / "replay.db", raw_key=KEY)
    try:
        s.register_soup(SOUP, [("id", "string")])
        yield s
    finally:
        close_unless_stuck(s)


def record_path(collection: Dict[str, Any]) -> str:
    return "/buckets/%s/collections/%s/records/r" % (collection["bucket"], collection["collection"])


def server_v(kinto: KintoServer, collection: Dict[str, Any]) -> Any:
    r = kinto.request("GET", record_path(collection), auth=KINTO_AUTH)
    assert r.status == 200, r.body[:300]
    return r.json()["data"]["v"]


def other_device_writes(kinto: KintoServer, collection: Dict[str, Any], v: int) -> None:
    """Device B's write, acknowledged by Kinto."""
    r = kinto.request("PUT", record_path(collection), body={"data": {"v": v}}, auth=KINTO_AUTH)
    assert r.status in (200, 201), r.body[:300]


def local(store: tureen.Store) -> Dict[str, Any]:
    found = [e for e in entries(store, SOUP) if e["id"] == "r"]
    assert len(found) == 1, found
    return found[0]


def refused_url() -> str:
    """A local port nothing listens on: connecting is refused."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return "http://127.0.0.1:%d/v1" % port


def ended_in_conflict(call: Any) -> Dict[str, Any]:
    """The state a sync call ended in: returned, or carried by the
    ConflictError it raised."""
    try:
        state: Dict[str, Any] = call()
    except tureen.ConflictError as e:
        state = e.state
    return state


@pytest.mark.parametrize("first", ["create", "update"])
@pytest.mark.parametrize("mode", [sync.OVERWRITE, sync.MERGE_ACCEPT_YOURS])
def test_a_write_whose_answer_was_lost_is_not_replayed_over_a_later_one(
        store: tureen.Store, kinto: KintoServer, first: str, mode: str) -> None:
    collection = new_kinto_collection(kinto)
    with KintoProxy(kinto.url) as proxy:
        target = dict(collection, type="kinto", url=proxy.url, max_retries=1)
        store.local_upsert(SOUP, {"id": "r", "v": 1})
        if first == "update":
            store.sync_up(target, SOUP, name="first", merge_mode=mode)
            assert is_clean(local(store))
            store.local_upsert(SOUP, dict(local(store), v=2))
        mine = 1 if first == "create" else 2
        proxy.commit_then_hang_up()
        with pytest.raises(tureen.NetworkError):
            store.sync_up(target, SOUP, name="up", merge_mode=mode)
        assert server_v(kinto, collection) == mine  # committed, unconfirmed
        proxy.intercept = lambda r: None

        other_device_writes(kinto, collection, 20)
        state = ended_in_conflict(lambda: store.resync("up"))
        assert server_v(kinto, collection) == 20, "device A's older write was replayed over B's acknowledged one"
        assert state["synced"] == 0 and state["conflicts"] == 1, state
        conflicts = store.conflicts(SOUP)
        assert [(c["id"], c["theirs"]["v"], c["yours"]["v"]) for c in conflicts] == [("r", 20, mine)]
        assert local(store)["__local__"] is True and local(store)["v"] == mine

        # The app decides: its copy, now over B's, with B's write known.
        store.resolve_conflict(SOUP, conflicts[0]["entryId"], "yours")
        up = store.resync("up")
        assert up["status"] == "DONE" and up["synced"] == 1 and up["conflicts"] == 0, up
    assert server_v(kinto, collection) == mine


def test_a_delete_whose_answer_was_lost_is_not_replayed_over_a_later_write(
        store: tureen.Store, kinto: KintoServer) -> None:
    """A's delete lands, its answer is lost; B writes the record again. A
    deleting again would remove B's acknowledged write: a conflict instead."""
    collection = new_kinto_collection(kinto)
    with KintoProxy(kinto.url) as proxy:
        target = dict(collection, type="kinto", url=proxy.url, max_retries=1)
        store.local_upsert(SOUP, {"id": "r", "v": 1})
        store.sync_up(target, SOUP, name="up", merge_mode=sync.OVERWRITE)
        store.local_delete(SOUP, [local(store)["_soupEntryId"]])
        proxy.commit_then_hang_up()
        with pytest.raises(tureen.NetworkError):
            store.resync("up")
        assert kinto.request("GET", record_path(collection), auth=KINTO_AUTH).status == 404
        proxy.intercept = lambda r: None

        other_device_writes(kinto, collection, 20)
        state = ended_in_conflict(lambda: store.resync("up"))
        assert kinto.request("GET", record_path(collection), auth=KINTO_AUTH).status == 200, \
            "device A's delete was replayed over B's acknowledged write"
        assert server_v(kinto, collection) == 20
        assert state["conflicts"] == 1, state
        assert [(c["id"], c["theirs"]["v"], c["yours"]) for c in store.conflicts(SOUP)] == [("r", 20, None)]


def test_an_edit_whose_send_never_connected_still_overwrites(store: tureen.Store, kinto: KintoServer) -> None:
    collection = new_kinto_collection(kinto)
    target = dict(collection, type="kinto", url=kinto.url, max_retries=1)
    store.local_upsert(SOUP, {"id": "r", "v": 1})
    store.sync_up(target, SOUP, name="up", merge_mode=sync.OVERWRITE)
    store.local_upsert(SOUP, dict(local(store), v=2))
    with pytest.raises(tureen.NetworkError):
        store.sync_up(dict(target, url=refused_url()), SOUP, name="offline", merge_mode=sync.OVERWRITE)

    other_device_writes(kinto, collection, 20)
    up = store.resync("up")
    assert up["status"] == "DONE" and up["synced"] == 1 and up["conflicts"] == 0, up
    assert server_v(kinto, collection) == 2
    assert is_clean(local(store)) and local(store)["v"] == 2


def lose_first_answer(proxy: KintoProxy, meanwhile: Any = None) -> Dict[str, int]:
    """The first write of a record through ``proxy`` reaches Kinto, which
    commits it; then ``meanwhile()`` runs (another device's write, before
    device A can try again) and the answer is dropped. Later requests
    pass. Counts the record writes the proxy saw."""
    seen = {"writes": 0}

    def intercept(r: Any) -> Any:
        if r.method not in ("PUT", "PATCH", "POST", "DELETE") or "/records/" not in r.target:
            return None
        seen["writes"] += 1
        if seen["writes"] > 1:
            return None
        proxy.forward(r)
        if meanwhile is not None:
            meanwhile()
        return lambda handler: None

    proxy.intercept = intercept
    return seen


@pytest.mark.parametrize("first", ["create", "update", "delete"])
@pytest.mark.parametrize("mode", [sync.OVERWRITE, sync.MERGE_ACCEPT_YOURS])
def test_a_retry_inside_one_run_does_not_replay_a_write_over_a_later_one(
        store: tureen.Store, kinto: KintoServer, first: str, mode: str) -> None:
    """The same run tries again after the lost answer (the target's default
    retries): the retry used to go out as the first request was, without a
    precondition, undoing B's write made in between."""
    if first == "delete" and mode == sync.MERGE_ACCEPT_YOURS:
        pytest.skip("a delete is sent the same way in both modes")
    collection = new_kinto_collection(kinto)
    with KintoProxy(kinto.url) as proxy:
        target = dict(collection, type="kinto", url=proxy.url)
        store.local_upsert(SOUP, {"id": "r", "v": 1})
        if first != "create":
            store.sync_up(target, SOUP, name="first", merge_mode=mode)
            assert is_clean(local(store))
            if first == "update":
                store.local_upsert(SOUP, dict(local(store), v=2))
            else:
                store.local_delete(SOUP, [local(store)["_soupEntryId"]])
        mine = {"create": 1, "update": 2, "delete": None}[first]
        seen = lose_first_answer(proxy, lambda: other_device_writes(kinto, collection, 20))
        state = ended_in_conflict(lambda: store.sync_up(target, SOUP, name="up", merge_mode=mode))
        assert seen["writes"] >= 1
        assert server_v(kinto, collection) == 20, "device A's older write was replayed over B's acknowledged one"
        assert state["synced"] == 0 and state["conflicts"] == 1, state
        conflicts = store.conflicts(SOUP)
        assert len(conflicts) == 1 and conflicts[0]["theirs"]["v"] == 20
        yours = conflicts[0]["yours"]
        assert (yours["v"] if yours is not None else None) == mine


@pytest.mark.parametrize("first", ["create", "update", "delete"])
def test_a_retry_inside_one_run_confirms_a_write_that_landed(
        store: tureen.Store, kinto: KintoServer, first: str) -> None:
    """No other device wrote: the retry finds A's own copy (or its
    deletion) on the server and counts it as done; one record, no conflict."""
    collection = new_kinto_collection(kinto)
    with KintoProxy(kinto.url) as proxy:
        target = dict(collection, type="kinto", url=proxy.url)
        store.local_upsert(SOUP, {"id": "r", "v": 1})
        if first != "create":
            store.sync_up(target, SOUP, name="first", merge_mode=sync.OVERWRITE)
            if first == "update":
                store.local_upsert(SOUP, dict(local(store), v=2))
            else:
                store.local_delete(SOUP, [local(store)["_soupEntryId"]])
        seen = lose_first_answer(proxy)
        up = store.sync_up(target, SOUP, name="up", merge_mode=sync.OVERWRITE)
        assert seen["writes"] >= 2, seen  # the answer was lost and the change went again
        assert up["status"] == "DONE" and up["synced"] == 1 and up["conflicts"] == 0, up
        if first == "delete":
            assert kinto.request("GET", record_path(collection), auth=KINTO_AUTH).status == 404
            assert [e for e in entries(store, SOUP) if e["id"] == "r"] == []
        else:
            assert server_v(kinto, collection) == (1 if first == "create" else 2)
            assert is_clean(local(store))
        listed = kinto.request("GET", record_path(collection)[:-2], auth=KINTO_AUTH).json()["data"]
        assert len(listed) == (0 if first == "delete" else 1)
