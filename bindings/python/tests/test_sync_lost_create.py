"""A create whose answer was lost, then another device's delete or update.

Device A creates a record under a random UUID (the id ``local_upsert``
gives), and its sync up sends it; behind :class:`hostile.KintoProxy`, Kinto
commits it and the proxy hangs up instead of answering, so the create stays
local. Then another device deletes the record, or writes it again. A
tombstone or another copy under an id only A could have picked proves that
A's create went through: sending it again must neither bring the deleted
record back (Kinto's ``If-None-Match: *`` does not stop a create over a
tombstone) nor write the old value over the newer one. The deletion or the
newer copy reaches A, whether its next step is a sync up or a sync down
first. If A changed the record after the lost send, that is a local change
against a remote one, which the merge mode decides as for any other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Iterator, Optional

import pytest

import tureen
from tureen import sync

from conftest import KINTO_AUTH, new_kinto_collection
from hostile import KintoProxy
from servers import KintoServer
from sync_support import close_unless_stuck, entries, is_clean

KEY = "b8" * 32
SOUP = "items"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    s = tureen.Store.open(tmp_path / "a.db", raw_key=KEY)
    try:
        s.register_soup(SOUP, [("id", "string")])
        yield s
    finally:
        close_unless_stuck(s)


def record_path(collection: Dict[str, Any], rid: str) -> str:
    return "/buckets/%s/collections/%s/records/%s" % (collection["bucket"], collection["collection"], rid)


def server_copy(kinto: KintoServer, collection: Dict[str, Any], rid: str) -> Optional[Dict[str, Any]]:
    """The server's copy, or None when it has none (404: deleted)."""
    r = kinto.request("GET", record_path(collection, rid), auth=KINTO_AUTH)
    if r.status == 404:
        return None
    assert r.status == 200, r.body[:300]
    data: Dict[str, Any] = r.json()["data"]
    return data


def local(store: tureen.Store, rid: str) -> Optional[Dict[str, Any]]:
    found = [e for e in entries(store, SOUP) if e.get("id") == rid]
    assert len(found) <= 1, found
    return found[0] if found else None


def lost_create(store: tureen.Store, kinto: KintoServer, proxy: KintoProxy, target: Dict[str, Any],
                mode: str) -> str:
    """A creates a record whose sync up Kinto commits and whose answer is
    lost; returns the record's id (a random UUID the store gave it)."""
    entry = store.local_upsert(SOUP, {"v": 1})
    rid = entry["id"]
    proxy.commit_then_hang_up()
    with pytest.raises(tureen.NetworkError):
        store.sync_up(target, SOUP, name="up", merge_mode=mode)
    proxy.intercept = lambda r: None
    copy = local(store, rid)
    assert copy is not None and copy["__locally_created__"] is True
    assert (server_copy(kinto, target, rid) or {}).get("v") == 1  # committed, unconfirmed
    return str(rid)


def other_device(kinto: KintoServer, collection: Dict[str, Any], rid: str, other: str) -> Optional[int]:
    """Another device deletes the record, or writes v=5 over it; returns
    the stamp of its write (None for a delete)."""
    path = record_path(collection, rid)
    if other == "delete":
        r = kinto.request("DELETE", path, auth=KINTO_AUTH)
        assert r.status == 200, r.body[:300]
        return None
    r = kinto.request("PUT", path, body={"data": {"v": 5}}, auth=KINTO_AUTH)
    assert r.status == 200, r.body[:300]
    stamp: int = r.json()["data"]["last_modified"]
    return stamp


def seeded_target(kinto: KintoServer, store: tureen.Store, proxy: KintoProxy, mode: str) -> Dict[str, Any]:
    """A collection with one record, and A's sync down of it: a position
    from which A's next sync down receives tombstones."""
    collection = new_kinto_collection(kinto)
    r = kinto.request("PUT", record_path(collection, "seed"), body={"data": {"v": 0}}, auth=KINTO_AUTH)
    assert r.status == 201, r.body[:300]
    target = dict(collection, type="kinto", url=proxy.url, max_retries=0)  # the run ends at the lost answer
    down = store.sync_down(target, SOUP, name="down", merge_mode=mode)
    assert down["status"] == "DONE" and down["maxTimeStamp"] > 0, down
    return target


@pytest.mark.parametrize("path", ["up", "down then up"])
@pytest.mark.parametrize("other", ["delete", "update"])
@pytest.mark.parametrize("mode", [sync.OVERWRITE, sync.LEAVE_IF_CHANGED])
def test_a_lost_create_does_not_undo_what_another_device_did_after_it(
        store: tureen.Store, kinto: KintoServer, mode: str, other: str, path: str) -> None:
    with KintoProxy(kinto.url) as proxy:
        target = seeded_target(kinto, store, proxy, mode)
        rid = lost_create(store, kinto, proxy, target, mode)
        stamp = other_device(kinto, target, rid, other)

        if path == "down then up":
            down = store.resync("down")
            assert down["status"] == "DONE" and down["conflicts"] == 0, down
        up = store.resync("up")
        assert up["status"] == "DONE" and up["conflicts"] == 0, (up, store.conflicts(SOUP))
        assert store.conflicts(SOUP) == []

    theirs = server_copy(kinto, target, rid)
    mine = local(store, rid)
    if other == "delete":
        assert theirs is None, "the record another device deleted is back: %r" % theirs
        assert mine is None, "the deletion did not reach this device: %r" % mine
    else:
        assert theirs is not None and theirs["v"] == 5 and theirs["last_modified"] == stamp, \
            "the lost create was written again over the newer copy: %r" % theirs
        assert mine is not None and is_clean(mine) and mine["v"] == 5 and mine["last_modified"] == stamp, mine
    # Nothing is left to send: a further sync up sends nothing.
    again = store.resync("up")
    assert again["status"] == "DONE" and again["totalSize"] == 0, again


@pytest.mark.parametrize("other", ["delete", "update"])
@pytest.mark.parametrize("mode", [sync.OVERWRITE, sync.LEAVE_IF_CHANGED])
def test_a_change_made_after_a_lost_create_meets_the_other_device_by_the_merge_mode(
        store: tureen.Store, kinto: KintoServer, mode: str, other: str) -> None:
    """A edits the record (v=3) after the lost send, then another device
    deletes it or writes v=5: OVERWRITE publishes A's later edit; under
    LEAVE_IF_CHANGED it is a conflict, and the server keeps the other
    device's write."""
    with KintoProxy(kinto.url) as proxy:
        target = seeded_target(kinto, store, proxy, mode)
        rid = lost_create(store, kinto, proxy, target, mode)
        store.local_upsert(SOUP, dict(local(store, rid) or {}, v=3))
        stamp = other_device(kinto, target, rid, other)
        up = store.resync("up")

    theirs = server_copy(kinto, target, rid)
    mine = local(store, rid)
    assert mine is not None
    if mode == sync.OVERWRITE:
        assert up["status"] == "DONE" and up["synced"] == 1 and up["conflicts"] == 0, up
        assert theirs is not None and theirs["v"] == 3, theirs
        assert is_clean(mine) and mine["v"] == 3, mine
        return
    assert up["status"] == "DONE" and up["conflicts"] == 1, up
    [conflict] = store.conflicts(SOUP)
    assert conflict["id"] == rid and conflict["yours"] is not None and conflict["yours"]["v"] == 3, conflict
    if other == "delete":
        assert theirs is None, "a conflict must not publish the local copy: %r" % theirs
        assert conflict["theirs"] is None, conflict
    else:
        assert theirs is not None and theirs["v"] == 5 and theirs["last_modified"] == stamp, theirs
        assert conflict["theirs"] is not None and conflict["theirs"]["v"] == 5, conflict
    assert mine["__local__"] is True and mine["v"] == 3, mine
