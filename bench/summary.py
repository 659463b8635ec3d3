"""Collects the bar rows the benchmarks of one `make bench` run wrote (a JSON
line each, see bars.py and bench_common.h's bench_bar) into one table on
stdout and a JSON file, with when, on which commit and on what machine, so
runs can be compared over time.

Usage: python bench/summary.py BARS.jsonl SUMMARY.json   (run.sh calls it last)
Exit status: 0 (a bar not met is reported, not an error); 1 when BARS is unreadable.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, timeout=10,
                              cwd=Path(__file__).resolve().parent).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def machine() -> Dict[str, Any]:
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = list(os.getloadavg())
    except OSError:
        load = []
    return {"host": platform.node(), "system": platform.platform(), "cpus": os.cpu_count(), "cpu": model,
            "load_average_at_end": load}


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 1
    bars_path, out_path = Path(sys.argv[1]), Path(sys.argv[2])
    try:
        rows: List[Dict[str, str]] = [json.loads(line) for line in bars_path.read_text().splitlines() if line.strip()]
    except (OSError, ValueError) as e:
        print("bench summary: cannot read %s: %s" % (bars_path, e), file=sys.stderr)
        return 1
    commit = git("rev-parse", "HEAD")
    dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    summary = {"timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "commit": commit, "dirty": dirty,
               "machine": machine(), "bars": rows,
               "met": sum(1 for r in rows if r["verdict"] == "ok"), "total": len(rows)}
    out_path.write_text(json.dumps(summary, indent=2) + "\n")
    cols = ("program", "workload", "measured", "against", "ratio", "bar", "verdict")
    widths = [min(60, max([len(c)] + [len(str(r.get(c, ""))) for r in rows])) for c in cols]
    print("Summary of every bar (%d of %d met), commit %s%s, %s" % (
        summary["met"], summary["total"], commit[:12] or "?", " (uncommitted changes)" if dirty else "",
        summary["timestamp"]))
    print(" | ".join(c.ljust(w) for c, w in zip(cols, widths)))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(" | ".join(str(r.get(c, ""))[:w].ljust(w) for c, w in zip(cols, widths)))
    print("Written to %s" % out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
