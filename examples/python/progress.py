"""Tureen sync progress with a progress bar, stopped and resumed.

A first sync down of 600 records reports after every page: how many records
are done and, because Kinto can count, how many there are in all. The bar is
tqdm's when tqdm is installed (``pip install tqdm``), else a line of text.
The sync is stopped half-way (as Ctrl-C would stop it), then resumed: the
progress goes on from where it stopped instead of starting again at 0.

Run from the repository root (after building libtureen.so), against a Kinto
server (``make demo`` starts one):

    PYTHONPATH=bindings/python python3 examples/python/progress.py KINTO_URL [DIRECTORY]
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import time
from typing import Any, List

import tureen
from tureen import sync

SOUP = "items"
RECORDS = 600


class Bar:
    """tqdm's bar when tqdm is there, else one line of text per update."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.shown = 0
        try:
            self.tqdm: Any = importlib.import_module("tqdm").tqdm(desc=label, unit="rec")
        except ImportError:
            self.tqdm = None

    def __call__(self, state: tureen.SyncState) -> None:
        done, total = state["done"], state["totalSize"]
        if self.tqdm is not None:
            if total >= 0:
                self.tqdm.total = total
            self.tqdm.update(done - self.tqdm.n)
        else:
            print("%-8s [%-30s] %3d%%  %d of %s" % (self.label, "#" * (state["progress"] * 30 // 100),
                                                    state["progress"], done, total if total >= 0 else "?"))
        self.shown = done

    def close(self) -> None:
        if self.tqdm is not None:
            self.tqdm.close()


class Enough(Exception):
    """Raised by the progress callable to stop the sync (Ctrl-C does the same)."""


def open_store(directory: str, name: str) -> tureen.Store:
    path = os.path.join(directory, "progress-%s.tureen" % name)
    if os.path.exists(path):  # a leftover from an earlier run
        tureen.remove_store(path)
    store = tureen.Store.open(path, key="correct horse battery staple")
    store.register_soup(SOUP, [("id", "string")])
    return store


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: progress.py KINTO_URL [DIRECTORY]", file=sys.stderr)
        return 2
    directory = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="tureen-progress-")
    target = sync.kinto_target(sys.argv[1], "progress", "items-%d" % time.time_ns(),
                               user="demo", password="demo-password", create=True)
    target["page_size"] = 100  # six pages, so that the bar moves
    with open_store(directory, "server") as seeder:
        seeder.local_upsert(SOUP, [{"id": "item-%03d" % i, "n": i} for i in range(RECORDS)])
        seeder.sync_up(target, SOUP)
    print("%d records on the server" % RECORDS)

    with open_store(directory, "device") as device:
        totals: List[int] = []
        first = Bar("first")

        def until_half(state: tureen.SyncState) -> None:
            first(state)
            if state["done"] > 0:  # the first call comes before any page
                totals.append(state["totalSize"])
            if state["done"] >= RECORDS // 2:
                raise Enough()

        try:
            device.sync_down(target, SOUP, name="down", progress=until_half)
        except Enough as stopped:
            state = getattr(stopped.__cause__, "state", None) or device.sync_status("down")
            print("stopped at %d of %d records (%s)" % (state["done"], state["totalSize"], state["status"]))
        finally:
            first.close()

        resumed = Bar("resumed")
        try:
            final = device.resync("down", progress=resumed)
        finally:
            resumed.close()
        print("resumed to %d of %d records (%s); the total was known from the first page: %s"
              % (final["done"], final["totalSize"], final["status"], totals[0] == RECORDS))
        print("%d records here" % device.count(tureen.query.all(SOUP)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
