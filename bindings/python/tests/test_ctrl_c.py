"""Ctrl-C (SIGINT) during a long call ends it promptly with
KeyboardInterrupt: a query that would never end, one in a forked child, and
a sync whose pages are slow (it ends STOPPED and a resync continues it).
One watcher thread serves every call of a process."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import tureen

from conftest import child_env
from servers import RestServer
from test_sync_rest import rest_target

KEY = "b8" * 32


def interrupted(code: str, *args: str) -> "tuple[float, str]":
    """Runs ``code`` in a child, sends SIGINT once it printed "go", and
    returns how long it took to end after that, and its stderr."""
    # A shell without job control starts background commands with SIGINT
    # ignored, and the child would inherit that: give it the handler Python
    # installs when started from a terminal, so the test does not depend on
    # how the suite itself was started.
    code = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n" + textwrap.dedent(code)
    child = subprocess.Popen([sys.executable, "-c", code, *args], env=child_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "go"
        time.sleep(0.5)
        child.send_signal(signal.SIGINT)
        sent = time.monotonic()
        _, err = child.communicate(timeout=20)
        return time.monotonic() - sent, err
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)


def test_ctrl_c_stops_a_query_that_never_ends(tmp_path: Path) -> None:
    took, err = interrupted(
        """
        import sys, tureen
        s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], query_timeout_ms=0)
        print("go", flush=True)
        s.count(tureen.query.smart("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"))
        """, str(tmp_path / "q.db"), KEY)
    assert took < 3 and "KeyboardInterrupt" in err, err


def test_ctrl_c_stops_a_sync_and_a_resync_continues_it(tmp_path: Path, rest_server: RestServer) -> None:
    for i in range(200):
        rest_server.set_record({"uid": "r%03d" % i})
    rest_server.delay_next(10, 1.0, method="GET")  # slow pages
    target = rest_target(rest_server)
    path = tmp_path / "s.db"
    took, err = interrupted(
        """
        import json, sys, tureen
        s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2])
        s.register_soup("items", [("uid", "string")])
        print("go", flush=True)
        s.sync_down(json.loads(sys.argv[3]), "items", name="slow")
        """, str(path), KEY, __import__("json").dumps(target))
    assert took < 3 and "KeyboardInterrupt" in err, err
    rest_server.clear_faults()
    with tureen.Store.open(path, raw_key=KEY) as s:
        assert s.sync_status("slow")["status"] == "STOPPED"
        assert s.resync("slow")["status"] == "DONE"
        assert s.count(tureen.query.all("items")) == 200


def test_one_watcher_thread_serves_every_call(tmp_path: Path) -> None:
    # A watcher per call made every query on the main thread wait for the
    # thread's next poll (50 ms) as it ended; one watcher, blocked on its
    # pipe between calls, stays for the process.
    code = textwrap.dedent(
        """
        import signal, sys, threading, tureen
        signal.signal(signal.SIGINT, signal.default_int_handler)
        s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2])
        seen = set()
        for _ in range(20):
            assert s.query(tureen.query.smart("SELECT 1")) == [[1]]
            seen |= {t.ident for t in threading.enumerate() if t.name == "tureen-ctrl-c"}
        print(len(seen))
        """)
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "w.db"), KEY], env=child_env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"


def test_ctrl_c_stops_a_query_in_a_forked_child(tmp_path: Path) -> None:
    # The parent's watcher thread does not survive fork: the child's first
    # call starts its own, so Ctrl-C still reaches the child's query.
    code = textwrap.dedent(
        """
        import os, signal, sys, tureen
        signal.signal(signal.SIGINT, signal.default_int_handler)
        s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], query_timeout_ms=0)
        assert s.query(tureen.query.smart("SELECT 1")) == [[1]]  # the watcher starts
        s.close()
        if os.fork():
            _, status = os.wait()
            sys.exit(os.waitstatus_to_exitcode(status))
        s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], query_timeout_ms=0)
        print("go", os.getpid(), flush=True)
        s.count(tureen.query.smart("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"))
        """)
    parent = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "f.db"), KEY], env=child_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    child = 0
    try:
        assert parent.stdout is not None
        go, pid = parent.stdout.readline().split()
        assert go == "go"
        child = int(pid)
        time.sleep(0.5)
        os.kill(child, signal.SIGINT)
        sent = time.monotonic()
        _, err = parent.communicate(timeout=20)
        took = time.monotonic() - sent
    finally:
        for pid in (child, parent.pid):
            with contextlib.suppress(ProcessLookupError):
                if pid:
                    os.kill(pid, signal.SIGKILL)
        parent.wait(10)
    assert took < 3 and "KeyboardInterrupt" in err, err
