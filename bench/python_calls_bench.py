"""What Ctrl-C handling adds to a short call of the Python binding.

On the main thread, with Python's default SIGINT handler, every query,
count and sync goes through ``on_ctrl_c``, which lets Ctrl-C stop the call;
with a handler of the program's own it steps aside. The same calls are
timed both ways on the main thread, in one process, alternating, so the
ratio is what the handling costs a call. A report, no bar: until
2026-11-27 each handled call waited up to 50 ms for a watcher thread's
poll (see tureen/_interrupt.py), and this shows whether it waits again.

Settings: BENCH_PY_CALLS (2000 calls per repetition and workload),
BENCH_REPS (3), BENCH_TMP (/tmp). Run by bench/run.sh (make bench).
"""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from typing import Callable, Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "bindings", "python"))
import tureen  # noqa: E402
from tureen import query  # noqa: E402


KEY = "5e" * 32
ENTRIES = 10_000


def per_call_us(call: Callable[[], object], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    return (time.perf_counter() - t0) / n * 1e6


def own_handler(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def handled(on: bool) -> None:
    signal.signal(signal.SIGINT, signal.default_int_handler if on else own_handler)


def main() -> int:
    n = int(os.environ.get("BENCH_PY_CALLS", "2000"))
    reps = int(os.environ.get("BENCH_REPS", "3"))
    if n < 1 or reps < 1:
        print("python_calls_bench: BENCH_PY_CALLS and BENCH_REPS must be at least 1", file=sys.stderr)
        return 1
    tmp = tempfile.mkdtemp(prefix="tureen-pycalls-", dir=os.environ.get("BENCH_TMP", "/tmp"))
    try:
        with tureen.Store.open(os.path.join(tmp, "calls.db"), raw_key=KEY) as s:
            s.register_soup("items", [{"path": "n", "type": "integer"}])
            for start in range(0, ENTRIES, 1000):
                s.upsert("items", [{"n": i, "text": "entry %d" % i} for i in range(start, start + 1000)])
            workloads: Dict[str, Callable[[], object]] = {
                "a) query, Smart SQL SELECT 1": lambda: s.query(query.smart("SELECT 1")),
                "b) query, range page of 10": lambda: s.query(query.range("items", "n", 5000, 5009)),
                "c) count, all entries": lambda: s.count(query.all("items")),
            }
            print("python_calls_bench: the binding's calls on the main thread, Ctrl-C handled (Python's default SIGINT handler) or not (the program's own)")
            print("  tureen_version       %s (%s)" % (tureen.version(), os.environ.get("TUREEN_LIB", "found by the binding")))
            print("  python               %s" % sys.version.split()[0])
            print("  store                %d entries, one integer index, raw key" % ENTRIES)
            print("  calls                %d per repetition and side, %d repetitions, sides alternating; median" % (n, reps))
            print("  machine              %d online CPUs" % os.cpu_count())
            print()
            header = "%-32s | %-14s | %-14s | %-12s | %s" % ("workload", "Ctrl-C on", "Ctrl-C off", "ratio", "bar")
            print(header)
            print("-" * len(header))
            each: Dict[str, List[str]] = {}
            for name, call in workloads.items():
                for _ in range(50):
                    call()  # warm: statements prepared, reader open
                on_us: List[float] = []
                off_us: List[float] = []
                for rep in range(reps):
                    for on in ((True, False) if rep % 2 == 0 else (False, True)):
                        handled(on)
                        (on_us if on else off_us).append(per_call_us(call, n))
                signal.signal(signal.SIGINT, signal.default_int_handler)
                m, w = statistics.median(on_us), statistics.median(off_us)
                print("%-32s | %9.1f us   | %9.1f us   | %5.2f on/off | - (report)" % (name, m, w, m / w))
                each[name] = ["%.1f/%.1f" % (a, b) for a, b in zip(on_us, off_us)]
            print()
            print("Each repetition, on/off us per call:")
            for name, values in each.items():
                print("  %-30s %s" % (name, " ".join(values)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
