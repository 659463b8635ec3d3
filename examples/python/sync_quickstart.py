"""Tureen sync quickstart: a shop's tills share a price list through Kinto.

The back office writes prices offline and syncs them up; a till syncs them
down, its screen (a live query) refreshing as the sync writes. Both change prices: changes to different fields merge by themselves
(MERGE_ACCEPT_YOURS would also settle clashes, MERGE_FAIL_IF_CONFLICT stops
on them); a clash is listed with both copies and resolved, and a resync
brings everyone level.

Run from the repository root (after building libtureen.so), against a Kinto
server (``make demo`` starts one):

    PYTHONPATH=bindings/python python3 examples/python/sync_quickstart.py KINTO_URL [DIRECTORY]
"""

from __future__ import annotations

import os
import queue
import sys
import tempfile
import time
from typing import Any, Dict, List

import tureen
from tureen import query, sync

SOUP = "prices"


def open_device(directory: str, name: str) -> tureen.Store:
    path = os.path.join(directory, "sync-quickstart-%s.tureen" % name)
    if os.path.exists(path):  # a leftover from an earlier run
        tureen.remove_store(path)
    store = tureen.Store.open(path, key="correct horse battery staple")
    store.register_soup(SOUP, [("id", "string"), ("name", "string"), ("price", "integer")])
    return store


def item(store: tureen.Store, rid: str) -> Dict[str, Any]:
    [entry] = store.query(query.exact(SOUP, "id", rid))
    return {k: v for k, v in entry.items() if not k.startswith("_") and k != "last_modified"}


def show(who: str, what: str, state: tureen.SyncState) -> None:
    print(
        "%-11s %-28s %s: synced %d, conflicts %d, %d requests"
        % (who, what, state["status"], state["synced"], state["conflicts"], state["requests"])
    )


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: sync_quickstart.py KINTO_URL [DIRECTORY]", file=sys.stderr)
        return 2
    directory = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="tureen-sync-")
    # A collection of its own per run, created on first use.
    target = sync.kinto_target(
        sys.argv[1], "quickstart", "prices-py-%d" % time.time_ns(), user="demo", password="demo-password", create=True
    )

    office, till = open_device(directory, "office"), open_device(directory, "till")
    with office, till:
        # Offline in the back office; 60 items go up in 3 batch requests.
        office.local_upsert(
            SOUP, [{"id": "item-%02d" % i, "name": "item %d" % i, "price": 100 + i, "stock": 10} for i in range(60)]
        )
        show("office", "sync up (60 new items)", office.sync_up(target, SOUP, name="up"))

        pages = []
        # The till's screen: the three cheapest items, a live query that the
        # library refreshes as the sync writes (on its own thread).
        cheapest = query.range(SOUP, "price", 0, 10**6, order_path="price", page_size=3)
        screen: "queue.Queue[List[tureen.Entry]]" = queue.Queue()
        with till.live_query(cheapest, screen.put):
            state = till.sync_down(target, SOUP, name="down", progress=lambda s: pages.append(s["done"]))
            shown = [screen.get(timeout=5)]
            while [e["id"] for e in shown[-1]] != ["item-00", "item-01", "item-02"]:
                shown.append(screen.get(timeout=5))
        show("till", "sync down", state)
        print("till        progress reports (records done): %s" % pages)
        print("till        live query pages: %s" % [[e["id"] for e in page] for page in shown])

        # Different fields of item-01: the office the price, the till the stock.
        office.local_upsert(SOUP, dict(item(office, "item-01"), price=199))
        show("office", "resync up (price)", office.resync("up"))
        till.local_upsert(SOUP, dict(item(till, "item-01"), stock=7))
        show("till", "sync up (stock)", till.sync_up(target, SOUP, name="up", merge_mode=sync.MERGE_FAIL_IF_CONFLICT))
        print("till        item-01 on the server now: %s" % item_after_resync(till, "item-01"))

        # The same field of item-02: a clash, kept as a conflict.
        office.local_upsert(SOUP, dict(item(office, "item-02"), price=250))
        office.resync("up")
        till.local_upsert(SOUP, dict(item(till, "item-02"), price=240))
        try:
            till.resync("up")
            print("expected a conflict on item-02", file=sys.stderr)
            return 1
        except tureen.ConflictError as e:
            assert e.state is not None
            show("till", "resync up (price clash)", e.state)
        [conflict] = till.conflicts(SOUP)
        assert conflict["base"] and conflict["theirs"] and conflict["yours"]
        print(
            "till        conflict on %s: base price %s, theirs %s, yours %s; conflicting: %s"
            % (
                conflict["id"],
                conflict["base"]["price"],
                conflict["theirs"]["price"],
                conflict["yours"]["price"],
                conflict["conflictingChanges"],
            )
        )
        # The office's price wins: the till takes theirs, nothing to send.
        till.resolve_conflict(SOUP, conflict["entryId"], sync.THEIRS)
        show("till", "resync up (resolved)", till.resync("up"))
        show("office", "sync down", office.sync_down(target, SOUP, name="down"))

        a, b = item(office, "item-01"), item(till, "item-01")
        c, d = item(office, "item-02"), item(till, "item-02")
        print("office      item-01 %s, item-02 %s" % (a, c))
        print("till        item-01 %s, item-02 %s" % (b, d))
        if not (a == b == dict(a, price=199, stock=7) and c == d and c["price"] == 250):
            print("the two devices disagree", file=sys.stderr)
            return 1
        print("both devices agree")
    return 0


def item_after_resync(store: tureen.Store, rid: str) -> Dict[str, Any]:
    """The record as the server has it now, through the device's sync down."""
    store.resync("down")
    return item(store, rid)


if __name__ == "__main__":
    sys.exit(main())
