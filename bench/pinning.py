"""Pins a benchmark's server and clients to separate CPUs, so a row that sets
Tureen against a plain client measures the clients and not how the two share
the machine with the server they both wait on.

A "pinned" layout puts the server (Kinto and, where used, PostgreSQL: every
process of theirs and every thread of each) on one core and this process,
its threads and the children it starts afterwards on another; "shared" gives
every process every CPU again. Affinity is per thread on Linux, which is why
every task under /proc/<pid>/task is set, not only the process's leader, and
why processes and threads created later inherit it from their creator (a
PostgreSQL backend forked by the postmaster, a gunicorn worker, a thread of
the library).

Used by bulk_sync_bench.py and sync_up_parallel_bench.py; run.sh does the
same with `taskset` for the C programs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, List, Optional, Set

SERVER_CPU = 0
CLIENT_CPU = 1


def available() -> bool:
    """True when this machine has the two CPUs a pinned layout needs."""
    return len(os.sched_getaffinity(0)) >= 2 and {SERVER_CPU, CLIENT_CPU} <= os.sched_getaffinity(0)


def all_cpus() -> Set[int]:
    return set(range(os.cpu_count() or 1))


def _descendants(pid: int) -> List[int]:
    """pid's children, their children, and so on (read from /proc)."""
    by_parent: dict = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        by_parent.setdefault(ppid, []).append(int(entry.name))
    found: List[int] = []
    todo = [pid]
    while todo:
        for child in by_parent.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def set_tree(pids: Iterable[int], cpus: Set[int], descend: bool = True) -> None:
    """Every thread of these processes (and, with descend, of all their
    descendants) may run only on cpus. A process that ended meanwhile is
    skipped."""
    for pid in {p for root in pids if root for p in [root] + (_descendants(root) if descend else [])}:
        try:
            tasks = [int(t) for t in os.listdir("/proc/%d/task" % pid)]
        except OSError:
            continue
        for tid in tasks:
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError:
                pass


def server_roots(server: Any) -> List[int]:
    """The processes a KintoServer (servers.py) runs as: Kinto (with its
    gunicorn workers below it) and PostgreSQL's postmaster, if it has one."""
    roots = [server.pid or 0]
    postgres = getattr(server, "postgres", None)
    master: Optional[int] = postgres.postmaster_pid() if postgres else None
    if master:
        roots.append(master)
    return [r for r in roots if r]


def layout(server_pids: List[int], pinned: bool) -> str:
    """Applies a layout to the server's processes and to this process's own
    threads (so to the clients it runs and starts from now on; not to its
    descendants, among which the server may be); returns how it reads in a
    report."""
    server_cpus, client_cpus = ({SERVER_CPU}, {CLIENT_CPU}) if pinned else (all_cpus(), all_cpus())
    set_tree(server_pids, server_cpus)
    set_tree([os.getpid()], client_cpus, descend=False)
    return describe(pinned)


def describe(pinned: bool) -> str:
    if pinned:
        return "pinned: server on CPU %d, clients on CPU %d" % (SERVER_CPU, CLIENT_CPU)
    return "shared: server and clients on CPUs 0-%d" % ((os.cpu_count() or 1) - 1)
