"""Many devices converging on Kinto (PostgreSQL, gunicorn), with kills.

Runs bindings/python/tests/convergence.py at a size larger than the test's,
once per worker count (1 and 4 by default, each on a fresh server with
packaging/kinto/commit_order.sql), then with 4 workers on Kinto's stock
trigger (what Tureen's own guards hold), and prints one row per run: devices,
operations, kills, the time the devices took and their throughput
(operations per second across devices, syncs included), and the time to
quiesce (every device syncs up, then every device syncs down).

Every run must pass convergence.py's checks (every device equals the
server; nothing duplicated, lost or resurrected; no local changes or
conflicts left; every store sound); a failure prints the seed.

Usage: python bench/converge_bench.py   (make bench runs it)
Settings: BENCH_CONVERGE_WORKERS ("1 4"), BENCH_CONVERGE_DEVICES (10),
BENCH_CONVERGE_OPS (400 per device), BENCH_CONVERGE_DEVICE_KILLS (2 per
device), BENCH_CONVERGE_WORKER_KILLS (6), BENCH_CONVERGE_SEED (20261125),
BENCH_CONVERGE_BUDGET (900 s per run), BENCH_CONVERGE_STOCK_WORKERS ("4"; ""
for no stock run).
Exit status: 1 if a run failed its checks, else 0.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bindings" / "python" / "tests"))

import convergence  # noqa: E402
from servers import KintoServer  # noqa: E402


def main() -> int:
    workers = [int(w) for w in os.environ.get("BENCH_CONVERGE_WORKERS", "1 4").split()]
    devices = int(os.environ.get("BENCH_CONVERGE_DEVICES", "10"))
    ops = int(os.environ.get("BENCH_CONVERGE_OPS", "400"))
    device_kills = int(os.environ.get("BENCH_CONVERGE_DEVICE_KILLS", str(2 * devices)))
    worker_kills = int(os.environ.get("BENCH_CONVERGE_WORKER_KILLS", "6"))
    seed = int(os.environ.get("BENCH_CONVERGE_SEED", "20261125"))
    budget = float(os.environ.get("BENCH_CONVERGE_BUDGET", "900"))
    # The same run on Kinto's stock trigger: what Tureen's own guards hold.
    stock = [int(w) for w in os.environ.get("BENCH_CONVERGE_STOCK_WORKERS", "4").split()]
    print("converge_bench: %d devices (a process and an encrypted store each) x %d random operations on one Kinto "
          "collection (PostgreSQL, gunicorn, commit_order.sql but where said), up to %d device and %d worker SIGKILLs, seed %d"
          % (devices, ops, device_kills, worker_kills, seed))
    print()
    head = ("server", "workers", "devices", "operations", "device kills", "worker kills", "run s", "ops/s", "quiesce s",
            "records", "acked creates", "acked deletes", "writes checked", "checks")
    rows = []
    status = 0
    for n, fixed in [(w, True) for w in workers] + [(w, False) for w in stock]:
        name = "commit_order.sql" if fixed else "stock trigger"
        # Kept when a run fails: the message names the stores.
        d = Path(tempfile.mkdtemp(prefix="converge-bench-"))
        with KintoServer("postgresql", d / "kinto", workers=n, commit_order=fixed,
                         settings={"kinto.retry_after_seconds": "1"}) as server:
            try:
                r = convergence.run(server, d / "devices", devices=devices, ops=ops, seed=seed,
                                    device_kills=device_kills, worker_kills=worker_kills, budget=budget)
            except convergence.ConvergenceError as e:
                print("%s, workers=%d: %s" % (name, n, e), file=sys.stderr)
                rows.append((name, str(n), str(devices), str(devices * ops)) + ("-",) * 9
                            + ("FAILED (seed %d)" % seed,))
                status = 1
                continue
        shutil.rmtree(d, ignore_errors=True)
        rows.append((name, str(n), str(r.devices), str(r.operations), str(r.device_kills), str(r.worker_kills),
                     "%.1f" % r.run_seconds, "%.1f" % r.throughput, "%.1f" % r.quiesce_seconds, str(r.records),
                     str(r.acked_creates), str(r.acked_deletes), str(r.checked_writes), "ok"))
    widths = [max(len(row[i]) for row in rows + [head]) for i in range(len(head))]
    for row in [head, tuple("-" * w for w in widths)] + rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths)))
    print()
    print("ops/s: operations of all devices (local writes and syncs) per second of the run, kills and restarts "
          "included; quiesce s: every device syncing up, then every device syncing down, one after the other.")
    return status


if __name__ == "__main__":
    sys.exit(main())
