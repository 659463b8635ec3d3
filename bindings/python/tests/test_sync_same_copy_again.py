"""The server writes a record again with the very fields this store's local
change was made from, under a new stamp, then sync down runs from its
position.

The proof run found it (docs/proof.md, seed 20261131 of `make proof`):
behind the fault proxy, a device's sync up was delivered to Kinto twice, so
the record was committed twice with the same fields; the device kept the
first stamp as its base, edited the record again, and a sync down in
OVERWRITE took the second copy over the edit: "device 6 wrote v=6.4.24 to
d6-4-3 last; the server holds '6.4.23'". The server changed nothing, so the
edit must stay, and go up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

import pytest

import tureen
from tureen import sync

from conftest import KINTO_AUTH, new_kinto_collection
from servers import KintoServer
from sync_support import entries, is_clean

KEY = "3c" * 32
SOUP = "items"


def _path(collection: Dict[str, Any], rid: str) -> str:
    return "/buckets/%s/collections/%s/records/%s" % (collection["bucket"], collection["collection"], rid)


@pytest.mark.parametrize("up_mode", [sync.OVERWRITE, sync.LEAVE_IF_CHANGED])
def test_a_local_change_survives_its_base_written_again(kinto: KintoServer, tmp_path: Path, up_mode: str) -> None:
    collection = new_kinto_collection(kinto)
    target = dict(collection, type="kinto")
    with tureen.Store.open(tmp_path / "s.db", raw_key=KEY) as store:
        store.register_soup(SOUP, [("id", "string")])
        assert store.sync_down(target, SOUP, name="down", merge_mode=sync.OVERWRITE)["status"] == "DONE"
        store.local_upsert(SOUP, {"id": "r", "v": 1})
        assert store.sync_up(target, SOUP, name="up", merge_mode=up_mode)["status"] == "DONE"
        assert store.resync("down")["status"] == "DONE"
        first = kinto.request("GET", _path(collection, "r"), auth=KINTO_AUTH).json()["data"]
        # The same fields committed again: a new stamp, nothing changed.
        again = kinto.request("PUT", _path(collection, "r"), {"data": {"v": 1}}, auth=KINTO_AUTH).json()["data"]
        assert again["last_modified"] > first["last_modified"]
        [e] = [x for x in entries(store, SOUP) if x["id"] == "r"]
        store.local_upsert(SOUP, dict(e, v=2))
        assert store.resync("down")["status"] == "DONE"
        [e] = [x for x in entries(store, SOUP) if x["id"] == "r"]
        assert e["v"] == 2 and e["__locally_updated__"] is True, e
        state = store.resync("up")
        assert state["status"] == "DONE" and state["synced"] == 1 and not store.conflicts(SOUP), state
        assert kinto.request("GET", _path(collection, "r"), auth=KINTO_AUTH).json()["data"]["v"] == 2
        [e] = [x for x in entries(store, SOUP) if x["id"] == "r"]
        assert is_clean(e) and e["v"] == 2
