"""The peer of bench/sync_bench.c: what a Python program would write with the
usual libraries to mirror a Kinto collection locally.

One run of ``down`` fetches every record of a collection with the kinto-http
client (``client.get_records()``) and inserts them into a fresh, unencrypted
sqlite3 file, in one transaction. It prints one machine-readable line on
stdout, which sync_bench reads::

    SYNC_BENCH_PEER down seconds=1.234567 fetch=1.0 insert=0.2 records=10000 peak_mb=51.2 python=3.11.7 kinto_http=11.11.0 sqlite=3.40.1

Only the fetch and the insert are timed. Importing, making the client and
creating the table are not, as Tureen's and the floor's sides do not time
opening their store or registering their soup either.

Usage (sync_bench runs it; by hand, against a Kinto holding the records)::

    python bench/sync_bench_peer.py down --url http://127.0.0.1:8888/v1 --bucket B \
        --collection C --user U --password P --db /tmp/peer.db --expect 10000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import sys
import time
from importlib import metadata


def down(args: argparse.Namespace) -> int:
    import kinto_http

    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            os.unlink(args.db + suffix)
        except FileNotFoundError:
            pass
    db = sqlite3.connect(args.db, isolation_level=None)
    # The id is indexed, as it is on Tureen's soup and in the floor's table:
    # a mirror has to find a record by its id when the next change arrives.
    db.execute("CREATE TABLE records (rowid INTEGER PRIMARY KEY, id TEXT NOT NULL, json TEXT NOT NULL)")
    db.execute("CREATE INDEX records_id ON records (id)")
    client = kinto_http.Client(server_url=args.url, auth=(args.user, args.password),
                               bucket=args.bucket, collection=args.collection)

    t0 = time.perf_counter()
    # The same pages as Tureen's Kinto target. kinto-http stops after one page
    # when _limit is given unless told how many pages to follow.
    records = client.get_records(_limit=args.limit, _sort="last_modified", pages=float("inf"))
    t1 = time.perf_counter()
    db.execute("BEGIN")
    db.executemany("INSERT INTO records (id, json) VALUES (?, ?)",
                   ((r["id"], json.dumps(r, separators=(",", ":"))) for r in records))
    db.execute("COMMIT")
    t2 = time.perf_counter()

    stored = db.execute("SELECT count(*) FROM records").fetchone()[0]
    db.close()
    if args.expect is not None and stored != args.expect:
        print("sync_bench_peer: stored %d records, expected %d" % (stored, args.expect), file=sys.stderr)
        return 1
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print("SYNC_BENCH_PEER down seconds=%.6f fetch=%.6f insert=%.6f records=%d peak_mb=%.1f python=%s kinto_http=%s sqlite=%s"
          % (t2 - t0, t1 - t0, t2 - t1, stored, peak_mb, sys.version.split()[0],
             metadata.version("kinto-http"), sqlite3.sqlite_version), flush=True)
    return 0


def main(argv: "list[str] | None" = None) -> int:
    parser = argparse.ArgumentParser(description="The kinto-http + sqlite3 peer of sync_bench.")
    sub = parser.add_subparsers(dest="action", required=True)
    d = sub.add_parser("down", help="fetch a collection into a fresh sqlite3 file, timed")
    d.add_argument("--url", required=True, help="Kinto's root, http://host:port/v1")
    d.add_argument("--bucket", required=True)
    d.add_argument("--collection", required=True)
    d.add_argument("--user", required=True)
    d.add_argument("--password", required=True)
    d.add_argument("--db", required=True, help="the sqlite3 file (replaced)")
    d.add_argument("--limit", type=int, default=1000, help="records per page (_limit)")
    d.add_argument("--expect", type=int, default=None, help="fail unless this many records were stored")
    args = parser.parse_args(argv)
    return down(args)


if __name__ == "__main__":
    sys.exit(main())
