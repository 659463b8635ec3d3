"""A write Kinto committed whose answer never came back, then a later local
edit of the record, then a sync down in OVERWRITE mode.

Behind :class:`hostile.KintoProxy`, Kinto takes every write of the sync up,
but the proxy closes the connection instead of answering (what a device
killed while its request is out, or a gunicorn worker killed after its
commit, leaves): the sync up fails and the change stays local, based on the
copy before it. The server's copy is now this device's own change, not
another's; the device edits (or deletes) the record again; sync down must
not take the server's copy over that change (convergence.py found it: "device 3 wrote v=61
to d3-1-30 last; the server holds 436").
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

KEY = "a7" * 32
SOUP = "items"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    s = tureen.Store.open(tmp_path / "lost.db", raw_key=KEY)
    try:
        s.register_soup(SOUP, [("id", "string")])
        yield s
    finally:
        close_unless_stuck(s)


def server_copy(kinto: KintoServer, collection: Dict[str, Any], rid: str) -> Dict[str, Any]:
    path = "/buckets/%s/collections/%s/records/%s" % (collection["bucket"], collection["collection"], rid)
    r = kinto.request("GET", path, auth=KINTO_AUTH)
    assert r.status == 200, r.body[:300]
    data: Dict[str, Any] = r.json()["data"]
    return data


def local(store: tureen.Store, rid: str) -> Dict[str, Any]:
    found = [e for e in entries(store, SOUP) if e["id"] == rid]
    assert len(found) == 1, found
    return found[0]


def change_again(store: tureen.Store, then: str) -> None:
    """The device's change after the write whose answer was lost: an edit
    to v=3, or a delete."""
    if then == "edit":
        store.local_upsert(SOUP, dict(local(store, "r"), v=3))
    else:
        store.local_delete(SOUP, [local(store, "r")["_soupEntryId"]])


def assert_the_later_change_won(store: tureen.Store, kinto: KintoServer, collection: Dict[str, Any],
                                then: str) -> None:
    """The edit (v=3) or the delete made after the lost answer is on the
    server and, clean, here."""
    if then == "edit":
        assert server_copy(kinto, collection, "r")["v"] == 3
        assert is_clean(local(store, "r")) and local(store, "r")["v"] == 3
    else:
        path = "/buckets/%s/collections/%s/records/r" % (collection["bucket"], collection["collection"])
        assert kinto.request("GET", path, auth=KINTO_AUTH).status == 404
        assert [e for e in entries(store, SOUP) if e["id"] == "r"] == []


@pytest.mark.parametrize("first,then", [("create", "edit"), ("update", "edit"), ("update", "delete")])
@pytest.mark.parametrize("down_mode", [sync.OVERWRITE, sync.LEAVE_IF_CHANGED])
def test_a_local_change_after_a_write_whose_answer_was_lost_survives_sync_down(
        store: tureen.Store, kinto: KintoServer, first: str, then: str, down_mode: str) -> None:
    collection = new_kinto_collection(kinto)
    with KintoProxy(kinto.url) as proxy:
        target = dict(collection, type="kinto", url=proxy.url, max_retries=1)
        store.sync_down(target, SOUP, name="down", merge_mode=down_mode)
        store.local_upsert(SOUP, {"id": "r", "v": 1})
        if first == "update":
            store.sync_up(target, SOUP, name="up")
            assert is_clean(local(store, "r"))
            store.local_upsert(SOUP, dict(local(store, "r"), v=2))
        proxy.commit_then_hang_up()
        error: Optional[tureen.Error] = None
        try:
            store.sync_up(target, SOUP, name="up") if first == "create" else store.resync("up")
        except tureen.Error as e:
            error = e
        assert isinstance(error, tureen.NetworkError), error
        sent = 1 if first == "create" else 2
        assert server_copy(kinto, collection, "r")["v"] == sent  # committed, unconfirmed
        assert local(store, "r")["__local__"] is True

        proxy.intercept = lambda r: None
        change_again(store, then)
        state = store.resync("down")
        assert state["status"] == "DONE", state
        mine = local(store, "r")
        assert mine["__local__"] is True and (mine["v"] == 3 if then == "edit" else mine["__locally_deleted__"]), \
            "sync down took the device's own earlier write (v=%d) over its later %s: %s" % (sent, then, mine)

        # The change goes up without a conflict, even where the mode compares
        # with the base (If-Match): the base is the copy the server holds.
        up = store.sync_up(target, SOUP, name="up-leave", merge_mode=sync.LEAVE_IF_CHANGED)
        assert up["status"] == "DONE" and up["synced"] == 1 and up["conflicts"] == 0, up
    assert_the_later_change_won(store, kinto, collection, then)


@pytest.mark.parametrize("first,then", [("create", "edit"), ("update", "edit"), ("update", "delete")])
@pytest.mark.parametrize("up_mode", [sync.LEAVE_IF_CHANGED, sync.MERGE_FAIL_IF_CHANGED])
def test_a_local_change_after_a_write_whose_answer_was_lost_goes_up_without_a_conflict(
        store: tureen.Store, kinto: KintoServer, first: str, then: str, up_mode: str) -> None:
    """The same lost answer, then the next sync up straight away, in a mode
    that compares with the base: the server's copy moved from the base, but
    to this store's own unconfirmed write, which the change was made after.
    It goes on top of that copy; no conflict for the app to resolve."""
    collection = new_kinto_collection(kinto)
    with KintoProxy(kinto.url) as proxy:
        target = dict(collection, type="kinto", url=proxy.url, max_retries=1)
        store.local_upsert(SOUP, {"id": "r", "v": 1})
        if first == "update":
            store.sync_up(target, SOUP, name="first")
            store.local_upsert(SOUP, dict(local(store, "r"), v=2))
        proxy.commit_then_hang_up()
        with pytest.raises(tureen.NetworkError):
            store.sync_up(target, SOUP, name="up", merge_mode=up_mode)
        assert server_copy(kinto, collection, "r")["v"] == (1 if first == "create" else 2)

        proxy.intercept = lambda r: None
        change_again(store, then)
        up = store.resync("up")
        assert up["status"] == "DONE" and up["synced"] == 1 and up["conflicts"] == 0, \
            (up["synced"], up["conflicts"], store.conflicts(SOUP))
    assert_the_later_change_won(store, kinto, collection, then)
