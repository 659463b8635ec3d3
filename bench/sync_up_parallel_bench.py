"""Sync up over several connections (the target's "upload_connections").

Starts Kinto on PostgreSQL behind 4 gunicorn workers (commit_order.sql),
then, in one run, syncs up BENCH_UP_PAR_N (1000) new records with 1
connection and with 4, alternating, BENCH_REPS (3) times each, each run into
a fresh collection from a fresh encrypted store; prints the medians, the
ratio and the bar (4 connections >= 2x faster), with how busy the machine's
CPUs were during each side (Kinto, PostgreSQL and Tureen share them: when
they are all busy, the CPUs bound the gain, not the connections).
Beside them, alternating, a plain client (no store) sends the same /batch
requests over 1 and 4 connections: what the server allows. The report also
gives the CPUs' ceiling: the CPU-seconds the 1-connection run took from
Tureen, Kinto and PostgreSQL, spread over every CPU.

Usage: python bench/sync_up_parallel_bench.py   (make bench runs it)
Settings: BENCH_UP_PAR_N (1000), BENCH_REPS (3), BENCH_UP_PAR_WORKERS (4),
BENCH_UP_PAR_COMMIT_ORDER (1; 0 for Kinto's stock trigger).
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
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from pathlib import Path
from typing import Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bindings" / "python" / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bindings" / "python"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import tureen  # noqa: E402
from servers import KintoServer, children_of  # noqa: E402

import bars  # noqa: E402

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


def main() -> int:
    n = int(os.environ.get("BENCH_UP_PAR_N", "1000"))
    reps = int(os.environ.get("BENCH_REPS", "3"))
    workers = int(os.environ.get("BENCH_UP_PAR_WORKERS", "4"))
    # 0: Kinto's stock trigger, without commit_order.sql's per-collection lock.
    commit_order = os.environ.get("BENCH_UP_PAR_COMMIT_ORDER", "1") != "0"
    cpus = os.cpu_count() or 1
    print("sync_up_parallel_bench: sync up of %d new records (about 250 bytes of JSON each) to Kinto on PostgreSQL behind %d "
          "gunicorn workers, with upload_connections 1 and 4; median of %d runs each, alternating; %d CPUs shared "
          "by Kinto, PostgreSQL and Tureen" % (n, workers, reps, cpus))
    work = Path(tempfile.mkdtemp(prefix="up-par-bench-"))
    times: Dict[int, List[float]] = {1: [], 4: []}
    plain: Dict[int, List[float]] = {1: [], 4: []}
    cpu: Dict[int, List[Dict[str, float]]] = {1: [], 4: []}
    requests: Dict[int, int] = {}
    try:
        with KintoServer("postgresql", work / "kinto", workers=workers, commit_order=commit_order,
                         settings={"kinto.retry_after_seconds": "1"}) as server:
            one_run(server, work, min(n, 50), 1)  # warms the workers and PostgreSQL
            for rep in range(reps):
                for c in ((1, 4) if rep % 2 == 0 else (4, 1)):
                    s, u, r = one_run(server, work, n, c)
                    times[c].append(s)
                    cpu[c].append(u)
                    requests[c] = r
                    print("  rep %d, %d connection(s): %.3f s; %s" % (rep + 1, c, s, cpu_text(u)), file=sys.stderr)
                for c in ((1, 4) if rep % 2 == 0 else (4, 1)):
                    plain[c].append(plain_run(server, n, c))
                    print("  rep %d, plain client, %d connection(s): %.3f s" % (rep + 1, c, plain[c][-1]), file=sys.stderr)
    except Exception as e:  # noqa: BLE001 - reported, and the exit status says so
        print("sync_up_parallel_bench: %s" % e, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    t1, t4 = statistics.median(times[1]), statistics.median(times[4])

    def busy(c: int) -> float:
        return statistics.median(u["all"] / u["capacity"] for u in cpu[c])
    speedup = t1 / t4
    print()
    head = ("workload", "tureen (4 connections)", "against (1 connection)", "ratio", "bar")
    row = ("sync up %d changes, %d workers" % (n, workers),
           "%.3f s, %.0f r/s, CPUs %.0f%%" % (t4, n / t4, 100 * busy(4)),
           "%.3f s, %.0f r/s, CPUs %.0f%%" % (t1, n / t1, 100 * busy(1)),
           "%.2fx" % speedup, "1/4 >= 2.00x" + (" ok" if speedup >= 2.0 else " BELOW BAR"))
    widths = [max(len(a), len(b)) for a, b in zip(head, row)]
    print(" | ".join(c.ljust(w) for c, w in zip(head, widths)))
    print(" | ".join(c.ljust(w) for c, w in zip(row, widths)))
    print()
    print("ratio = time with 1 connection / time with 4 (higher is better); r/s = records per second; CPUs = the "
          "share of all %d CPUs busy at normal priority during the sync (any process; niced ones, e.g. a background "
          "fuzzer, left out): near 100%% means the machine, not the number of connections, bounds the run. "
          "Requests: %d with 1 connection, %d with 4." % (cpus, requests.get(1, 0), requests.get(4, 0)))
    p1, p4 = statistics.median(plain[1]), statistics.median(plain[4])
    print("What the server allows: a plain client (no store; the same /batch requests of 25 PUTs with If-None-Match: *, "
          "alternating with Tureen's runs) took %.3f s with 1 connection and %.3f s with 4: %.2fx. Each run, 1 / 4: %s / %s s."
          % (p1, p4, p1 / p4, " ".join("%.3f" % x for x in plain[1]), " ".join("%.3f" % x for x in plain[4])))
    need = statistics.median(u["tureen"] + u["kinto"] + u["postgres"] for u in cpu[1])
    print("The CPUs' ceiling: with 1 connection Tureen, Kinto's workers and PostgreSQL used %.1f CPU-seconds; spread over "
          "all %d CPUs that takes %.3f s at least, so no number of connections could make the run more than %.2fx faster "
          "on this machine." % (need, cpus, need / cpus, t1 / max(need / cpus, 1e-9)))
    for c in (1, 4):
        print("Where the CPU went, %d connection(s), per run (median of CPU-seconds): %s" % (c, cpu_text(
            {k: statistics.median(u[k] for u in cpu[c]) for k in cpu[c][0]})))
    bars.record("sync_up_parallel", row[0], row[1], row[2], row[3], "1/4 >= 2.00x", speedup >= 2.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
