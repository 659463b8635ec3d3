"""The Jepsen-style proof run (docs/proof.md): many device processes on one
Kinto collection (PostgreSQL, gunicorn workers, the history plugin), each
behind its own port of a seeded fault-injecting proxy, with device and
worker SIGKILLs and partitions; then quiescence and every check of
convergence.py and proof_checks.py.

One run per seed (``--seed``, then ``--seeds`` - 1 more, each on a fresh
server); one row each: its size, what was injected, what was checked. A
failing seed prints its problems and the one command that replays it.

Usage: make proof [SEED=S] [SEEDS=N] [PROOF_ARGS='--devices 24 ...'], or
       python bench/proof.py [--seed S] [--seeds N] [--devices 24] [--ops 150]
       [--device-kills 200] [--worker-kills 20] [--partitions 8] [--workers 4]
       [--budget 3600] [--keep]
(``make proof`` runs the defaults with 20 seeds.) Exit status 1 if a seed
failed a check.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import List

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "bindings" / "python" / p) for p in ("tests", "")]

import convergence  # noqa: E402
from fault_proxy import FAULTS  # noqa: E402
from servers import KintoServer  # noqa: E402

#: Kinto as the proof runs it: its history kept (the checks read it), and a
#: short Retry-After after an integrity error.
SETTINGS = {"kinto.includes": "kinto.plugins.flush kinto.plugins.history", "kinto.retry_after_seconds": "1"}


def replay_command(a: argparse.Namespace, seed: int) -> str:
    return ("make proof SEED=%d SEEDS=1 PROOF_ARGS='--devices %d --ops %d --device-kills %d --worker-kills %d "
            "--partitions %d --workers %d%s%s'" % (seed, a.devices, a.ops, a.device_kills, a.worker_kills, a.partitions,
                                                   a.workers, " --strict" if a.strict else "",
                                                   " --faults %s" % json.dumps(a.faults) if a.faults else ""))


def main(argv: List[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=20261129)
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--devices", type=int, default=24)
    p.add_argument("--ops", type=int, default=150, help="random operations per device")
    p.add_argument("--device-kills", type=int, default=200)
    p.add_argument("--worker-kills", type=int, default=20)
    p.add_argument("--partitions", type=int, default=8)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--budget", type=float, default=3600.0, help="seconds per seed")
    p.add_argument("--keep", action="store_true", help="keep the stores, journals and logs of passing seeds too")
    p.add_argument("--faults", default="", help='the proxy\'s fault shares to change, as JSON: \'{"drop": 0.2}\'')
    p.add_argument("--strict", action="store_true",
                   help="count OVERWRITE's blind re-sends of a write whose answer was lost as replays")
    a = p.parse_args(argv)
    head = ("seed", "devices", "ops", "device kills", "worker kills", "partitions", "drops", "drop-cuts", "duplicates", "resets",
            "503s", "delays", "cut", "run s", "quiesce s", "versions", "reads", "writes", "blind re-sends", "checks")
    rows = []
    failed = []
    started = time.monotonic()
    for seed in range(a.seed, a.seed + a.seeds):
        d = Path(tempfile.mkdtemp(prefix="tureen-proof-%d-" % seed))
        with KintoServer("postgresql", d / "kinto", workers=a.workers, settings=SETTINGS) as server:
            try:
                r = convergence.run(server, d / "devices", devices=a.devices, ops=a.ops, seed=seed,
                                    device_kills=a.device_kills, worker_kills=a.worker_kills, budget=a.budget,
                                    faults=True, partitions=a.partitions, replay=replay_command(a, seed),
                                    strict=a.strict, fault_shares=dict(FAULTS, **json.loads(a.faults or "{}")))
            except convergence.ConvergenceError as e:
                print("FAILED: %s" % e, file=sys.stderr, flush=True)
                failed.append(seed)
                rows.append((str(seed), str(a.devices), str(a.devices * a.ops)) + ("-",) * 16 + ("FAILED",))
                continue
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)
        f = r.faults
        rows.append((str(seed), str(r.devices), str(r.operations), str(r.device_kills), str(r.worker_kills),
                     str(r.partitions), str(f.get("drop", 0)), str(f.get("drop-cut", 0)), str(f.get("duplicate", 0)),
                     str(f.get("reset", 0)),
                     str(f.get("unavailable", 0)), str(f.get("delay", 0)),
                     str(f.get("cut-reset", 0) + f.get("cut-hang", 0)), "%.0f" % r.run_seconds,
                     "%.0f" % r.quiesce_seconds, str(r.history.commits), str(r.history.reads), str(r.history.writes),
                     str(r.history.blind_replays), "ok"))
        for note in r.history.notes:
            print("seed %d: %s" % (seed, note))
        print("seed %d: ok (%.0f s)" % (seed, r.run_seconds + r.quiesce_seconds), flush=True)
    widths = [max(len(row[i]) for row in rows + [head]) for i in range(len(head))]
    for row in [head, tuple("-" * w for w in widths)] + rows:
        print(" | ".join(c.ljust(w) for c, w in zip(row, widths)))
    print("\n%d seeds, %d failed%s; %.0f s in all" % (a.seeds, len(failed), (" (%s)" % ", ".join(map(str, failed)))
                                                        if failed else "", time.monotonic() - started))
    for seed in failed:
        print("replay: " + replay_command(a, seed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
