"""The bar rows of the Python benchmarks, for run.sh's summary: each row a
JSON line appended to the file named by $BENCH_BARS (nothing when unset).
The C benchmarks write the same lines through bench_common.h's bench_bar."""

from __future__ import annotations

import json
import os


def record(program: str, workload: str, measured: str, against: str, ratio: str, bar: str, met: bool) -> None:
    path = os.environ.get("BENCH_BARS")
    if not path:
        return
    row = {"program": program, "workload": workload, "measured": measured, "against": against,
           "ratio": ratio, "bar": bar, "verdict": "ok" if met else "NOT MET"}
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")
