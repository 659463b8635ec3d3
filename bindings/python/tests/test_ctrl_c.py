"""Ctrl-C (SIGINT) during a long call ends it promptly with
KeyboardInterrupt, never CancelledError nor an "Exception ignored" in a
callback: a query that would never end, one in a forked child, a sync down
whose pages are slow and a sync up reporting its batches (they end STOPPED
and a resync continues them).
One watcher thread serves every call of a process; a Ctrl-C stops only the
call it arrived in, and never the parent's calls when sent to a child."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Dict, NamedTuple

import pytest

import tureen

from conftest import child_env
from hostile import HostileServer, KintoProxy, Reply, Seen, json_reply
from servers import KintoServer, RestServer
from sync_support import kinto_client
from test_sync_rest import rest_target

KEY = "b8" * 32
UP_RECORDS = 1000  # a sync up of 40 batches


COUNT_300 = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 300) SELECT count(*) FROM c"
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"


class Interrupted(NamedTuple):
    """How a child ended after its Ctrl-C: how long it took, the type of
    the exception its program raised (None if it raised none) and its
    stderr."""

    took: float
    raised: "str | None"
    err: str


def interrupted(code: str, *args: str) -> Interrupted:
    """Runs ``code`` in a child, sends SIGINT once it printed "go" (to the
    process whose pid follows, if one does: a child it forked), and returns
    how the child ended."""
    # A shell without job control starts background commands with SIGINT
    # ignored, and the child would inherit that: give it the handler Python
    # installs when started from a terminal, so the test does not depend on
    # how the suite itself was started.
    code = ("import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\ntry:\n"
            + textwrap.indent(textwrap.dedent(code), "    ")
            + "\nexcept BaseException as exc:\n    print('raised', type(exc).__name__, flush=True)\n    raise\n")
    child = subprocess.Popen([sys.executable, "-c", code, *args], env=child_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    target = child.pid
    try:
        assert child.stdout is not None
        go = child.stdout.readline().split()
        assert go[:1] == ["go"], (go, child.communicate(timeout=20))
        target = int(go[1]) if len(go) > 1 else child.pid
        time.sleep(0.5)
        os.kill(target, signal.SIGINT)
        sent = time.monotonic()
        out, err = child.communicate(timeout=20)
        raised = [line.split()[1] for line in out.splitlines() if line.startswith("raised ")]
        return Interrupted(time.monotonic() - sent, raised[0] if raised else None, err)
    finally:
        if target != child.pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(target, signal.SIGKILL)
        if child.poll() is None:
            child.kill()
            child.wait(10)


def assert_keyboard_interrupt(ended: Interrupted) -> None:
    """The call ended promptly by raising KeyboardInterrupt, and no
    KeyboardInterrupt was lost inside a callback on the way."""
    assert ended.raised == "KeyboardInterrupt", ended
    assert "Exception ignored" not in ended.err, ended.err
    assert ended.took < 3, ended


def test_ctrl_c_stops_a_query_that_never_ends(tmp_path: Path) -> None:
    ended = interrupted(
        """
        import sys, tureen
        s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], query_timeout_ms=0)
        print("go", flush=True)
        s.count(tureen.query.smart(sys.argv[3]))
        """, str(tmp_path / "q.db"), KEY, ENDLESS)
    assert_keyboard_interrupt(ended)


def test_ctrl_c_stops_a_sync_and_a_resync_continues_it(tmp_path: Path, rest_server: RestServer) -> None:
    for i in range(200):
        rest_server.set_record({"uid": "r%03d" % i})
    rest_server.delay_next(10, 1.0, method="GET")  # slow pages
    target = rest_target(rest_server)
    path = tmp_path / "s.db"
    ended = interrupted(
        """
        import json, sys, tureen
        s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2])
        s.register_soup("items", [("uid", "string")])
        print("go", flush=True)
        s.sync_down(json.loads(sys.argv[3]), "items", name="slow")
        """, str(path), KEY, json.dumps(target))
    assert_keyboard_interrupt(ended)
    rest_server.clear_faults()
    with tureen.Store.open(path, raw_key=KEY) as s:
        assert s.sync_status("slow")["status"] == "STOPPED"
        assert s.resync("slow")["status"] == "DONE"
        assert s.count(tureen.query.all("items")) == 200


@pytest.mark.parametrize("progress", ["none", "reports"])
def test_ctrl_c_stops_a_sync_up_with_keyboard_interrupt(tmp_path: Path, kinto: KintoServer,
                                                        kinto_collection: Dict[str, Any], progress: str) -> None:
    # The library reports each batch to Python on the caller's thread; a
    # Ctrl-C that Python's handler raised there, at the progress function's
    # first line, was printed as "Exception ignored" and lost, and the call
    # raised the cancel's CancelledError.
    path = tmp_path / "up.db"
    with KintoProxy(kinto.url) as proxy:
        # 40 batches of at least 50 ms: still running when the Ctrl-C comes.
        proxy.intercept = lambda r: time.sleep(0.05) if r.method == "POST" else None
        target = dict(kinto_collection, type="kinto", url=proxy.url)
        ended = interrupted(
            """
            import json, sys, tureen
            s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2])
            s.register_soup("items", [("id", "string")])
            s.local_upsert("items", [{"id": "r%04d" % i, "n": i} for i in range(int(sys.argv[5]))])
            reports = []
            progress = reports.append if sys.argv[4] == "reports" else None
            print("go", flush=True)
            s.sync_up(json.loads(sys.argv[3]), "items", name="up", progress=progress)
            """, str(path), KEY, json.dumps(target), progress, str(UP_RECORDS))
        assert_keyboard_interrupt(ended)
        proxy.intercept = lambda r: None
        with tureen.Store.open(path, raw_key=KEY) as s:
            assert s.sync_status("up")["status"] == "STOPPED"
            assert s.resync("up")["status"] == "DONE"
            assert s.pending("items") == []
    assert len(kinto_client(kinto_collection).get_records()) == UP_RECORDS


def test_ctrl_c_during_an_open_that_logs_is_not_lost(tmp_path: Path) -> None:
    # With logging on, the library logs "opened" through Python on the
    # caller's thread: a Ctrl-C that came during the key derivation was
    # raised in that callback and lost, and the open returned a store.
    ended = interrupted(
        """
        import logging, sys, tureen
        logging.basicConfig(level=logging.INFO)
        tureen.log.set_level("info")
        print("go", flush=True)
        tureen.Store.open(sys.argv[1], key="a passphrase", kdf_iter=1000000)
        """, str(tmp_path / "o.db"))
    assert_keyboard_interrupt(ended)


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
    ended = interrupted(
        """
        import os, sys, tureen
        s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], query_timeout_ms=0)
        assert s.query(tureen.query.smart("SELECT 1")) == [[1]]  # the watcher starts
        s.close()
        if os.fork():
            _, status = os.wait()
            sys.exit(os.waitstatus_to_exitcode(status))
        s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], query_timeout_ms=0)
        print("go", os.getpid(), flush=True)
        s.count(tureen.query.smart(sys.argv[3]))
        """, str(tmp_path / "f.db"), KEY, ENDLESS)
    assert_keyboard_interrupt(ended)


class Lines:
    """A child's stdout, a line at a time, each within a timeout (a thread
    reads them: select on a buffered pipe misses lines already read)."""

    def __init__(self, child: "subprocess.Popen[str]") -> None:
        self.lines: "queue.Queue[str]" = queue.Queue()
        assert child.stdout is not None
        stdout = child.stdout
        threading.Thread(target=lambda: [self.lines.put(line.strip()) for line in stdout], daemon=True).start()

    def next(self, timeout: float) -> "str | None":
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            return None


def test_a_ctrl_c_stops_only_the_call_it_arrived_in(tmp_path: Path) -> None:
    # One Ctrl-C lands in a loop of short calls; the program catches it and
    # at once starts a query that never ends. The watcher could read the
    # byte only once the next call let go of the GIL, and took it for that
    # call's: 5 to 36 in 100 such queries ended at once, with no second
    # Ctrl-C. Now the ending call empties the pipe.
    code = textwrap.dedent(
        """
        import signal, sys, tureen
        signal.signal(signal.SIGINT, signal.default_int_handler)
        s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], query_timeout_ms=0)
        short, endless = tureen.query.smart(sys.argv[3]), tureen.query.smart(sys.argv[4])
        while True:
            print("go", flush=True)
            try:
                while True:
                    s.count(short)
            except (KeyboardInterrupt, tureen.CancelledError):
                pass
            print("endless", flush=True)
            try:
                s.count(endless)
                print("ended", flush=True)
            except KeyboardInterrupt:
                print("ok", flush=True)
            except tureen.CancelledError:
                print("stopped by the first Ctrl-C", flush=True)
        """)
    child = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "t.db"), KEY, COUNT_300, ENDLESS],
                             env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    rng = random.Random(20261127)
    lines = Lines(child)
    try:
        for trial in range(40):
            assert lines.next(10) == "go", trial
            time.sleep(rng.uniform(0, 0.005))
            child.send_signal(signal.SIGINT)
            assert lines.next(10) == "endless", trial
            early = lines.next(0.3)
            assert early is None, "trial %d: the endless query ended at once: %s" % (trial, early)
            child.send_signal(signal.SIGINT)
            assert lines.next(10) == "ok", trial
    finally:
        child.kill()
        child.wait(10)


def test_a_ctrl_c_to_a_forked_child_does_not_stop_the_parent(tmp_path: Path) -> None:
    # A thread forks while the main thread is inside a call: the child
    # inherits Python's wakeup fd, which names the parent's pipe. The child
    # lets it go at fork; before, the parent's watcher took the child's
    # Ctrl-C for its own calls for the rest of its life.
    code = textwrap.dedent(
        """
        import os, signal, sys, threading, time, tureen
        signal.signal(signal.SIGINT, signal.default_int_handler)
        s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], query_timeout_ms=0)
        slow = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], query_timeout_ms=800)
        children = []

        def fork() -> None:
            time.sleep(0.3)
            pid = os.fork()
            if pid == 0:
                try:
                    time.sleep(60)
                finally:
                    os._exit(0)
            children.append(pid)

        forker = threading.Thread(target=fork)
        forker.start()
        try:
            slow.count(tureen.query.smart(sys.argv[3]))  # the fork happens meanwhile
        except tureen.QueryError:
            pass
        forker.join()
        print("go", children[0], flush=True)
        try:
            s.count(tureen.query.smart(sys.argv[3]))
            print("ended", flush=True)
        except KeyboardInterrupt:
            print("ok", flush=True)
        except tureen.CancelledError:
            print("stopped by the child's Ctrl-C", flush=True)
        finally:
            os.kill(children[0], signal.SIGKILL)
            os.waitpid(children[0], 0)
        """)
    parent = subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "f.db"), KEY, ENDLESS],
                              env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = Lines(parent)
    try:
        line = lines.next(20)
        assert line is not None and line.startswith("go "), line
        os.kill(int(line.split()[1]), signal.SIGINT)
        early = lines.next(0.5)
        assert early is None, "the parent's query ended: %s" % early
        parent.send_signal(signal.SIGINT)
        assert lines.next(10) == "ok"
    finally:
        parent.kill()
        parent.wait(10)


def test_ctrl_c_stops_a_resync_waiting_for_its_soups_other_sync(tmp_path: Path) -> None:
    """A resync waiting for another sync of its soup reports nothing until
    it runs, so a Ctrl-C that waited for its first report to learn its id
    never stopped it: it is cancelled by the name it was given."""
    release = threading.Event()

    def respond(r: Seen) -> Reply:
        if r.method == "PUT":
            release.wait(30)
        return json_reply(dict(r.json(), last_modified=1) if r.method == "PUT" else {"items": []})

    with HostileServer(respond) as server:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        code = """
            import sys, threading, time, tureen
            first = tureen.Store.open(sys.argv[1], key=sys.argv[2], kdf_iter=1000)
            first.register_soup("notes", [("id", "string")])
            target = {"type": "rest", "url": sys.argv[3], "recordsPath": "items"}
            first.sync_up(target, "notes", name="up", options={"start": False})
            first.sync_down(target, "notes", name="down", options={"start": False})
            first.local_upsert("notes", {"id": "n1"})
            threading.Thread(target=lambda: first.resync("up"), daemon=True).start()
            second = tureen.Store.open(sys.argv[1], key=sys.argv[2], kdf_iter=1000)
            time.sleep(0.5)  # the sync up holds the soup, its PUT unanswered
            print("go", flush=True)
            try:
                second.resync("down")
            except BaseException as exc:
                print("raised", type(exc).__name__, flush=True)
                import os
                os._exit(0)  # the sync up's thread still waits on the server
        """
        try:
            ended = interrupted(code, str(tmp_path / "wait.db"), KEY, target["url"])
        finally:
            release.set()
    assert_keyboard_interrupt(ended)
