"""Tureen sync loop: two tills keep a price list in step by themselves.

Each till defines its syncs once (``start=False``), starts the background
loop, and listens to sync events ($fh.sync's codes). A price changed on one
till reaches the other within a poll, with no sync call in the app; the
events say what happened, record by record.

Run from the repository root (after building libtureen.so), against a Kinto
server (``make demo`` starts one):

    PYTHONPATH=bindings/python python3 examples/python/sync_loop.py KINTO_URL [DIRECTORY]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import uuid
from typing import Any, Dict

import tureen
from tureen import query, sync

SOUP = "prices"


def open_till(directory: str, name: str, target: tureen.Target) -> tureen.Store:
    path = os.path.join(directory, "sync-loop-%s.tureen" % name)
    if os.path.exists(path):  # a leftover from an earlier run
        tureen.remove_store(path)
    store = tureen.Store.open(path, key="correct horse battery staple")
    store.register_soup(SOUP, [("id", "string"), ("price", "integer")])
    # Defined once, run by the loop from now on.
    store.sync_up(target, SOUP, name="up", options={"start": False})
    store.sync_down(target, SOUP, name="down", options={"start": False})
    return store


def show(till: str) -> Any:
    def on_event(event: Dict[str, Any]) -> None:
        code = event["code"]
        if code in ("sync_started", "delta_received"):
            return  # many of these: the rest tells the story
        if code == "sync_complete" and not (event["created"] or event["updated"] or event["deleted"]):
            return  # a cycle that found nothing to do
        what = event.get("recordId") or ", ".join(
            "%s %s" % (k, event[k]) for k in ("created", "updated", "deleted") if event.get(k))
        print("  [%s] %-22s %s %s" % (till, code, event.get("name") or event.get("soup"), what or ""))
    return on_event


def price(store: tureen.Store, rid: str) -> Any:
    found = store.query(query.exact(SOUP, "id", rid))
    return found[0]["price"] if found else None


def wait_until(check: Any, what: str) -> None:
    deadline = time.monotonic() + 10
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit("sync_loop: %s did not happen within 10 s" % what)
        time.sleep(0.02)


def main() -> None:
    url = sys.argv[1]
    directory = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()
    target = sync.kinto_target(url, "shop", "loop-" + uuid.uuid4().hex[:8], user="till", password="s3cret",
                               create=True)
    a, b = open_till(directory, "a", target), open_till(directory, "b", target)
    with a, b, a.sync_listen(show("a")), b.sync_listen(show("b")), \
            a.sync_loop_start(sync_frequency_ms=200), b.sync_loop_start(sync_frequency_ms=200):
        print("till a sets the price of tea; the loops carry it to till b:")
        started = time.monotonic()
        a.local_upsert(SOUP, {"id": "tea", "price": 250})
        wait_until(lambda: price(b, "tea") == 250, "tea on till b")
        print("till b shows tea at %d after %.0f ms" % (price(b, "tea"), (time.monotonic() - started) * 1000))
        print("till b raises it; till a follows:")
        entry = b.query(query.exact(SOUP, "id", "tea"))[0]
        b.local_upsert(SOUP, dict(entry, price=275))
        wait_until(lambda: price(a, "tea") == 275, "the new price on till a")
        print("till a shows tea at %d" % price(a, "tea"))
        status = a.sync_loop_status()
        print("till a's loop: %d cycle(s), offline: %s" % (status["cycles"], status["offline"]))


if __name__ == "__main__":
    main()
