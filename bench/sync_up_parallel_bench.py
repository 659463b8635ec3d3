"""Sync up over several connections (the target's "upload_connections"),
against what the server allows (issue 50 item 4).

A plain client (no store: Python's http.client in threads) sends the same
/batch requests of 25 PUTs with If-None-Match: * as Tureen, over 1 and 4
connections: its speed-up is the ceiling, what the server lets any client
gain from more connections. Bar: Tureen's speed-up with 4 connections >=
0.90 of the plain client's. Two servers:

A. Kinto on PostgreSQL behind 4 gunicorn workers (commit_order.sql), which
   commits the writes to one collection one after another (so both
   speed-ups stay near 1), in two layouts in every repetition: "shared"
   (every process on every CPU) and "pinned" (Kinto and PostgreSQL on CPU
   0, Tureen and the plain client on CPU 1; see pinning.py);
B. parallel_rest_server.py, which takes batches side by side (each waits
   BENCH_UP_PAR_COMMIT_MS without holding a lock or a CPU before it
   answers), pinned (server on CPU 0, clients on CPU 1). Bar: Tureen with 4
   connections >= 2x as fast as with 1.

Each run goes into a fresh collection from a fresh encrypted store; the
sides alternate (Tureen 1 and 4, then the plain client 1 and 4, the order
flipping every repetition); BENCH_REPS (3) repetitions, medians reported,
with where the CPU went during Tureen's runs.

Usage: python bench/sync_up_parallel_bench.py   (make bench runs it)
Settings: BENCH_UP_PAR_N (1000), BENCH_REPS (3), BENCH_UP_PAR_WORKERS (4),
BENCH_UP_PAR_COMMIT_ORDER (1; 0 for Kinto's stock trigger),
BENCH_UP_PAR_COMMIT_MS (20: server B's wait per batch),
BENCH_UP_PAR_SERVERS ("kinto parallel": which servers' rows to run; "parallel"
alone skips Kinto, most of the run's time).
Exit status: 1 if a sync failed, else 0.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bindings" / "python" / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bindings" / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tureen  # noqa: E402
from servers import KintoServer, children_of  # noqa: E402

import bars  # noqa: E402
import pinning  # noqa: E402

AUTH = {"user": "bench", "password": "bench-password"}
RAW = "3b" * 32


def cpu_ticks() -> Tuple[int, int, int]:
    """(busy at normal priority, busy niced, total) jiffies of every CPU so
    far, from /proc/stat; niced work (a background fuzzer) yields to the rest."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle - fields[1], fields[1], sum(fields)


def process_ticks(pids: List[int]) -> int:
    """utime + stime jiffies of these processes so far."""
    total = 0
    for pid in pids:
        try:
            parts = Path("/proc/%d/stat" % pid).read_text().rsplit(")", 1)[1].split()
            total += int(parts[11]) + int(parts[12])
        except (OSError, IndexError, ValueError):
            pass
    return total


def self_ticks() -> int:
    t = os.times()
    return int((t.user + t.system) * os.sysconf("SC_CLK_TCK"))


def one_run(server: KintoServer, work: Path, n: int, connections: int) -> Tuple[float, Dict[str, float], int]:
    """Seconds for one sync up of n creates, the CPU time spent meanwhile
    (in CPU-seconds: by this process, by Kinto's workers, by everything at
    normal priority, by niced processes; and the CPUs' capacity), and the
    HTTP requests it made."""
    suffix = uuid.uuid4().hex[:12]
    target = {"type": "kinto", "url": server.url, "bucket": "b" + suffix, "collection": "c" + suffix,
              "auth": dict(AUTH), "upload_connections": connections}
    server.create_collection(target["bucket"], target["collection"], AUTH)
    path = work / ("%s.db" % suffix)
    with tureen.Store.open(path, raw_key=RAW) as store:
        store.register_soup("items", [("id", "string")])
        store.local_upsert("items", [{"id": "r%05d" % i, "n": i, "text": "x" * 200} for i in range(n)])
        kinto = server.worker_pids() + [server.pid or 0]
        master = server.postgres.postmaster_pid() if server.postgres else None
        pg = [master] + children_of(master) if master else []
        b0, n0, t0 = cpu_ticks()
        k0, p0, s0 = process_ticks(kinto), process_ticks(pg), self_ticks()
        start = time.perf_counter()
        state = store.sync_up(target, "items")
        seconds = time.perf_counter() - start
        b1, n1, t1 = cpu_ticks()
        k1, p1, s1 = process_ticks(kinto), process_ticks(pg), self_ticks()
    if state["status"] != "DONE" or state["synced"] != n:
        raise RuntimeError("sync up ended %s with %d synced" % (state["status"], state["synced"]))
    hz = float(os.sysconf("SC_CLK_TCK"))
    cpu = {"tureen": (s1 - s0) / hz, "kinto": (k1 - k0) / hz, "postgres": (p1 - p0) / hz, "all": (b1 - b0) / hz, "niced": (n1 - n0) / hz,
           "capacity": (t1 - t0) / hz}
    return seconds, cpu, state["requests"]


def plain_run(server: KintoServer, n: int, connections: int) -> float:
    """Seconds for a plain client (no store) to create the same n records
    in a fresh collection as Tureen's sync up sends them: /batch requests of
    25 PUTs with If-None-Match: *, over `connections` connections at once.
    What the server allows, with nothing on the client's side."""
    suffix = uuid.uuid4().hex[:12]
    bucket, collection = "b" + suffix, "c" + suffix
    server.create_collection(bucket, collection, AUTH)
    u = urllib.parse.urlsplit(server.url)
    auth = base64.b64encode(("%s:%s" % (AUTH["user"], AUTH["password"])).encode()).decode()
    headers = {"Authorization": "Basic " + auth, "Content-Type": "application/json"}
    records = "/buckets/%s/collections/%s/records/" % (bucket, collection)
    batches: "queue.Queue[bytes]" = queue.Queue()
    for start in range(0, n, 25):
        batches.put(json.dumps({"defaults": {"method": "PUT"}, "requests": [
            {"path": records + "r%05d" % i, "headers": {"If-None-Match": "*"},
             "body": {"data": {"id": "r%05d" % i, "n": i, "text": "x" * 200}}}
            for i in range(start, min(n, start + 25))]}).encode())
    failures: List[str] = []

    def send() -> None:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
        try:
            while True:
                try:
                    body = batches.get_nowait()
                except queue.Empty:
                    return
                conn.request("POST", u.path + "/batch", body=body, headers=headers)
                r = conn.getresponse()
                answer = r.read()
                statuses = [x.get("status") for x in json.loads(answer).get("responses", [])] if r.status == 200 else []
                if r.status != 200 or any(st != 201 for st in statuses):
                    failures.append("batch answered %d, statuses %s" % (r.status, sorted(set(statuses))))
        finally:
            conn.close()

    threads = [threading.Thread(target=send) for _ in range(connections)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    if failures:
        raise RuntimeError("the plain client's batches failed: %s" % failures[0])
    return seconds


def cpu_text(u: Dict[str, float]) -> str:
    return ("CPU-s: tureen process %.2f, Kinto workers %.2f, PostgreSQL %.2f, other processes %.2f, niced %.2f, "
            "of %.2f available" % (u["tureen"], u["kinto"], u["postgres"],
                                   max(0.0, u["all"] - u["tureen"] - u["kinto"] - u["postgres"]), u["niced"],
                                   u["capacity"]))


class ParallelServer:
    """parallel_rest_server.py in a process of its own, with what one_run and
    plain_run ask of a KintoServer."""

    def __init__(self, commit_ms: float) -> None:
        self.commit_ms = commit_ms
        self.proc = subprocess.Popen([sys.executable, str(Path(__file__).with_name("parallel_rest_server.py")),
                                      "--commit-ms", str(commit_ms)], stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http://"):
            self.stop()
            raise RuntimeError("parallel_rest_server.py did not start")
        self.pid: Optional[int] = self.proc.pid
        self.postgres = None

    def worker_pids(self) -> List[int]:
        return []

    def create_collection(self, bucket: str, collection: str, auth: Dict[str, str]) -> None:
        pass  # collections are implicit here

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


Sides = Dict[str, Dict[int, List[float]]]


def measure(server: Any, work: Path, n: int, reps: int, layouts: List[str], times: Sides, plain: Sides,
            cpu: Dict[str, Dict[int, List[Dict[str, float]]]], requests: Dict[int, int], label: str) -> None:
    """reps repetitions; in each, for every layout, Tureen's sync up with 1
    and 4 connections, then the plain client's, the order flipping every
    repetition."""
    roots = pinning.server_roots(server)
    for rep in range(reps):
        for mode in layouts:
            pinning.layout(roots, mode == "pinned")
            for c in ((1, 4) if rep % 2 == 0 else (4, 1)):
                s, u, r = one_run(server, work, n, c)
                times[mode][c].append(s)
                cpu[mode][c].append(u)
                requests[c] = r
                print("  %s, %s, rep %d, %d connection(s): %.3f s; %s" % (label, mode, rep + 1, c, s, cpu_text(u)),
                      file=sys.stderr)
            for c in ((1, 4) if rep % 2 == 0 else (4, 1)):
                plain[mode][c].append(plain_run(server, n, c))
                print("  %s, %s, rep %d, plain client, %d connection(s): %.3f s" % (label, mode, rep + 1, c,
                                                                                    plain[mode][c][-1]), file=sys.stderr)
    pinning.layout(roots, False)


def main() -> int:
    n = int(os.environ.get("BENCH_UP_PAR_N", "1000"))
    reps = int(os.environ.get("BENCH_REPS", "3"))
    workers = int(os.environ.get("BENCH_UP_PAR_WORKERS", "4"))
    commit_ms = float(os.environ.get("BENCH_UP_PAR_COMMIT_MS", "20"))
    # 0: Kinto's stock trigger, without commit_order.sql's per-collection lock.
    commit_order = os.environ.get("BENCH_UP_PAR_COMMIT_ORDER", "1") != "0"
    servers = os.environ.get("BENCH_UP_PAR_SERVERS", "kinto parallel").split()
    if not servers or not set(servers) <= {"kinto", "parallel"}:
        print("sync_up_parallel_bench: BENCH_UP_PAR_SERVERS names \"kinto\", \"parallel\" or both", file=sys.stderr)
        return 1
    cpus = os.cpu_count() or 1
    layouts = ["shared", "pinned"] if pinning.available() else ["shared"]
    print("sync_up_parallel_bench: sync up of %d new records (about 250 bytes of JSON each) with upload_connections 1 and "
          "4, against what a plain client reaches with as many connections; median of %d runs each, alternating" % (n, reps))
    if "kinto" in servers:
        print("  server A: Kinto on PostgreSQL behind %d gunicorn workers (%s), which commits the writes to one collection "
              "one after another" % (workers, "commit_order.sql" if commit_order else "Kinto's stock trigger"))
    if "parallel" in servers:
        print("  server B: bench/parallel_rest_server.py, Kinto's /batch of creates, batches side by side, each waiting "
              "%.0f ms (a commit's or a round trip's wait, no CPU) before it answers" % commit_ms)
    print("  CPUs (%d): %s" % (cpus, "; ".join(pinning.describe(m == "pinned") for m in layouts)))
    work = Path(tempfile.mkdtemp(prefix="up-par-bench-"))
    kinto_times: Sides = {m: {1: [], 4: []} for m in layouts}
    kinto_plain: Sides = {m: {1: [], 4: []} for m in layouts}
    kinto_cpu: Dict[str, Dict[int, List[Dict[str, float]]]] = {m: {1: [], 4: []} for m in layouts}
    kinto_requests: Dict[int, int] = {}
    par_layout = layouts[-1]
    par_times: Sides = {par_layout: {1: [], 4: []}}
    par_plain: Sides = {par_layout: {1: [], 4: []}}
    par_cpu: Dict[str, Dict[int, List[Dict[str, float]]]] = {par_layout: {1: [], 4: []}}
    par_requests: Dict[int, int] = {}
    try:
        if "kinto" in servers:
            with KintoServer("postgresql", work / "kinto", workers=workers, commit_order=commit_order,
                             settings={"kinto.retry_after_seconds": "1"}) as server:
                one_run(server, work, min(n, 50), 1)  # warms the workers and PostgreSQL
                measure(server, work, n, reps, layouts, kinto_times, kinto_plain, kinto_cpu, kinto_requests, "Kinto")
        if "parallel" in servers:
            par = ParallelServer(commit_ms)
            try:
                one_run(par, work, min(n, 50), 1)
                measure(par, work, n, reps, [par_layout], par_times, par_plain, par_cpu, par_requests, "parallel server")
            finally:
                par.stop()
    except Exception as e:  # noqa: BLE001 - reported, and the exit status says so
        print("sync_up_parallel_bench: %s" % e, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print()
    head = ("workload", "tureen 4 vs 1 connections", "plain client 4 vs 1", "ratio", "bar")
    table: List[Tuple[str, str, str, str, str]] = []

    def speedups(label: str, mode: str, times: Sides, plain: Sides, absolute: bool) -> None:
        t1, t4 = statistics.median(times[mode][1]), statistics.median(times[mode][4])
        p1, p4 = statistics.median(plain[mode][1]), statistics.median(plain[mode][4])
        ts, ps = t1 / t4, p1 / p4
        workload = "sync up %d, %s, %s" % (n, label, "pinned 0/1" if mode == "pinned" else "shared")
        measured = "%.2fx (%.3f / %.3f s)" % (ts, t1, t4)
        against = "%.2fx (%.3f / %.3f s)" % (ps, p1, p4)
        # The plain client's speed-up is what the server allows: the ceiling.
        ok = ts / ps >= 0.90
        table.append((workload, measured, against, "%.2f t/p" % (ts / ps), "t/p >= 0.90" + (" ok" if ok else " BELOW BAR")))
        bars.record("sync_up_parallel", workload + ": speed-up vs the plain client's", measured, "plain " + against,
                    "%.2f t/p" % (ts / ps), "t/p >= 0.90", ok)
        if absolute:
            ok = ts >= 2.0
            table.append((workload + ": 4 vs 1", measured, "-", "%.2fx" % ts, "4 vs 1 >= 2.00x" + (" ok" if ok else " BELOW BAR")))
            bars.record("sync_up_parallel", workload + ": 4 connections vs 1", measured, "-", "%.2fx" % ts,
                        "4 vs 1 >= 2.00x", ok)

    if "kinto" in servers:
        for mode in layouts:
            speedups("Kinto %d workers" % workers, mode, kinto_times, kinto_plain, False)
    if "parallel" in servers:
        speedups("parallel server", par_layout, par_times, par_plain, True)
    widths = [max(len(h), *(len(r[i]) for r in table)) for i, h in enumerate(head)]
    print(" | ".join(c.ljust(w) for c, w in zip(head, widths)))
    print("-+-".join("-" * w for w in widths))
    for r in table:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)))
    print()
    print("Speed-up = median time with 1 connection / median time with 4 (higher is better); t/p = Tureen's speed-up / "
          "the plain client's (no store; the same /batch requests of 25 PUTs with If-None-Match: *, in threads), whose "
          "speed-up is what the server allows with that many connections. Requests per Tureen run: Kinto %d with 1 "
          "connection, %d with 4; parallel server %d and %d." % (kinto_requests.get(1, 0), kinto_requests.get(4, 0),
                                                                 par_requests.get(1, 0), par_requests.get(4, 0)))
    for label, times, plain, cpu, modes in (("Kinto", kinto_times, kinto_plain, kinto_cpu, layouts),
                                            ("parallel server", par_times, par_plain, par_cpu, [par_layout])):
        for mode in (m for m in modes if times[m][1]):
            print("%s, %s, each run (s): tureen 1: %s; tureen 4: %s; plain 1: %s; plain 4: %s" % (
                label, mode, *(" ".join("%.3f" % x for x in v) for v in
                               (times[mode][1], times[mode][4], plain[mode][1], plain[mode][4]))))
            for c in (1, 4):
                print("  where the CPU went, tureen with %d connection(s), per run (median of CPU-seconds; the server's "
                      "processes under \"Kinto workers\"): %s" % (c, cpu_text(
                          {k: statistics.median(u[k] for u in cpu[mode][c]) for k in cpu[mode][c][0]})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
