"""Kinto's `_since` feed under concurrent writers, stock against fixed.

For each deployment (Kinto 26 on PostgreSQL behind gunicorn, with Kinto's
stock timestamp trigger, then with packaging/kinto/commit_order.sql) and
each worker count, starts a fresh server, runs bindings/python/tests/
kinto_feed.py's trial (writers sending /batch requests of 25 new records
into one collection while a poller follows ?_since=), and prints one row:
what was written, acknowledged, kept, and never received by the feed.

Usage: python bench/kinto_feed_bench.py   (make bench runs it; about a minute)
Settings: BENCH_FEED_WORKERS ("2 4"), BENCH_FEED_WRITERS (4), BENCH_FEED_OVERLAPS
("1000 5000": ms, a poller each),
BENCH_FEED_BATCHES (10 per writer), BENCH_FEED_SECONDS (60: bound per trial).
Exit status: 1 if the fixed deployment lost or dropped anything, else 0.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bindings" / "python" / "tests"))

from kinto_feed import run_trial  # noqa: E402
from servers import KintoServer  # noqa: E402

AUTH = {"user": "alice", "password": "pw"}


def main() -> int:
    workers = [int(w) for w in os.environ.get("BENCH_FEED_WORKERS", "2 4").split()]
    writers = int(os.environ.get("BENCH_FEED_WRITERS", "4"))
    batches = int(os.environ.get("BENCH_FEED_BATCHES", "10"))
    seconds = float(os.environ.get("BENCH_FEED_SECONDS", "60"))
    overlaps = [int(w) for w in os.environ.get("BENCH_FEED_OVERLAPS", "1000 5000").split()]
    print("kinto_feed_bench: Kinto on PostgreSQL behind gunicorn; %d writers x %d batches of 25 new records "
          "(PUT If-None-Match: *) into one collection through /batch, one poller following ?_since=<highest "
          "last_modified received>; then the collection read whole" % (writers, batches))
    print()
    head = ("deployment", "workers", "written", "ack'd 201", "on server", "ack'd, gone", "batches !200",
            "never in feed") + tuple("never, overlap %g s" % (w / 1000) for w in overlaps) + ("seconds",)
    rows = []
    status = 0
    for fixed in (False, True):
        for n in workers:
            with tempfile.TemporaryDirectory(prefix="feed-bench-") as d:
                with KintoServer("postgresql", Path(d), workers=n, commit_order=fixed) as server:
                    server.create_collection("feed", "feed", AUTH)
                    t0 = time.monotonic()
                    trial = run_trial(server, "feed", "feed", AUTH, writers=writers, batches=batches, seconds=seconds,
                                      overlaps_ms=overlaps)
                    took = time.monotonic() - t0
            name = "commit_order.sql" if fixed else "stock trigger"
            rows.append((name, str(n), str(trial.written), str(len(trial.acknowledged)), str(len(trial.final)),
                         str(len(trial.acknowledged_missing)), str(trial.failed_batches), str(len(trial.lost)))
                        + tuple(str(len(trial.lost_overlapping(w))) for w in overlaps) + ("%.1f" % took,))
            print("  %s, %d workers: %s" % (name, n, trial.summary()), file=sys.stderr)
            if fixed and (trial.lost or trial.acknowledged_missing or trial.failed_batches):
                status = 1
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(len(head))]
    for r in [head, tuple("-" * w for w in widths)] + rows:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)))
    print()
    print("ack'd, gone: answered 201 inside a batch answered 200, yet not on the server at the end.")
    print("never in feed: on the server at the end, never received by the poller.")
    print("never, overlap W: the same for a poller asking ?_since=<highest received - W> (a client's guard).")
    if status:
        print("FAILED: the deployment with commit_order.sql lost or refused records")
    return status


if __name__ == "__main__":
    sys.exit(main())
