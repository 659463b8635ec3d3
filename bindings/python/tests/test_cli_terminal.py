"""The `tureen` inspector where a terminal matters, each through a real
pseudo-terminal or pipe: the shell `tureen STORE` opens (its commands, help
and history), the progress bar (on a terminal only) and `watch` (events as
they happen, ended by Ctrl-C)."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import tureen
from tureen import query

from conftest import child_env
from sync_support import rest_target

KEY = "terminal passphrase"
PROMPT = b"tureen> "
WAIT = 30.0


def env_for(home: Path) -> Dict[str, str]:
    # TERM=dumb: readline then sends no escape sequences to parse around.
    return child_env({"TUREEN_KEY": KEY, "HOME": str(home), "TERM": "dumb"})


class Terminal:
    """A child whose standard input, output and error are one pty."""

    def __init__(self, args: List[str], env: Dict[str, str]) -> None:
        self.master, slave = os.openpty()
        self.child = subprocess.Popen([sys.executable, "-m", "tureen", *args], stdin=slave, stdout=slave,
                                      stderr=slave, env=env, start_new_session=True)
        os.close(slave)
        self.seen = b""

    def read_until(self, wanted: bytes, timeout: float = WAIT) -> bytes:
        """What the child wrote up to and including ``wanted``."""
        deadline = time.monotonic() + timeout
        while wanted not in self.seen:
            left = deadline - time.monotonic()
            assert left > 0, "no %r within %ss; the terminal shows %r" % (wanted, timeout, self.seen)
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    piece = os.read(self.master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    piece = b""
                assert piece, "the child ended before %r: %r" % (wanted, self.seen)
                self.seen += piece
        at = self.seen.index(wanted) + len(wanted)
        out, self.seen = self.seen[:at], self.seen[at:]
        return out

    def command(self, line: str) -> List[str]:
        """Types ``line``; the lines it wrote before the next prompt (the
        first, readline's echo of the line, left out)."""
        os.write(self.master, line.encode("utf-8") + b"\n")
        out = self.read_until(PROMPT).decode("utf-8")
        return [x.rstrip("\r") for x in out.split("\n")[1:-1]]

    def wait(self) -> int:
        return self.child.wait(timeout=WAIT)

    def end(self) -> None:
        if self.child.poll() is None:
            self.child.kill()
            self.child.wait()
        os.close(self.master)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    p = tmp_path / "terminal.db"
    with tureen.Store.open(p, key=KEY) as s:
        s.register_soup("people", [("name", "string"), ("age", "integer")])
        s.upsert("people", [{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}])
    return p


def test_the_store_alone_on_a_terminal_opens_a_shell(path: Path, tmp_path: Path) -> None:
    term = Terminal([str(path), "--read-only"], env_for(tmp_path))
    try:
        term.read_until(PROMPT)
        assert [json.loads(x) for x in term.command("soups --format ndjson")] == [{"soup": "people", "entries": 2}]
        assert [x.split() for x in term.command("sql \"select {people:name}, {people:age} from {people} order by 2\"")] \
            == [["name", "age"], ["Ada", "36"], ["Alan", "41"]]
        refused = term.command("rm people 1")  # --read-only holds for every command typed
        assert refused == ["tureen: rm writes to the store, which --read-only keeps as it is"]
        assert [e["name"] for e in json.loads(term.command("get people 1")[0])] == ["Ada"]
        assert term.command("get people")[-1].startswith("tureen")  # a usage error: the shell goes on
        assert term.command("nosuch")[-1] == "tureen: no command 'nosuch' (help lists them)"
        listed = {x.split()[0] for x in term.command("help")}
        assert {"soups", "query", "sql", "get", "put", "rm", "blobs", "watch", "syncs", "exit"} <= listed
        os.write(term.master, b"exit\n")
        assert term.wait() == 0
    finally:
        term.end()
    history = (tmp_path / ".tureen_history").read_text().splitlines()
    assert history[-3:] == ["nosuch", "help", "exit"] and "soups --format ndjson" in history
    with tureen.Store.open(path, key=KEY) as s:
        assert s.count(query.all("people")) == 2


def test_the_shell_writes_without_read_only_and_ends_on_ctrl_d(path: Path, tmp_path: Path) -> None:
    term = Terminal([str(path)], env_for(tmp_path))
    try:
        term.read_until(PROMPT)
        term.command("rm people 1")
        assert [e["name"] for e in json.loads(term.command("query '%s'" % json.dumps(query.all("people")))[0])] \
            == ["Alan"]
        os.write(term.master, b"\x04")  # Ctrl-D
        assert term.wait() == 0
    finally:
        term.end()


def test_the_progress_bar_is_drawn_on_a_terminal_only(path: Path, tmp_path: Path, rest_server: Any) -> None:
    with tureen.Store.open(path, key=KEY) as s:
        s.register_soup("items", [("uid", "string")])
        rest_server.set_record({"uid": "r1"})
        s.sync_down(rest_target(rest_server), "items", name="down")
    rest_server.set_record({"uid": "r2"})
    term = Terminal([str(path), "sync", "down"], env_for(tmp_path))
    try:
        shown = term.read_until(b"}").decode("utf-8")
        assert term.wait() == 0
    finally:
        term.end()
    bar = shown[:shown.index("{")].replace("\r\n", "\n").rstrip("\n")
    assert bar.startswith("\r[") and bar.split("\r")[-1].startswith("[%s] 100%% " % ("#" * 30))  # redrawn in place
    state = json.loads(shown[shown.index("{"):])
    assert state["status"] == "DONE" and state["name"] == "down"
    piped = subprocess.run([sys.executable, "-m", "tureen", str(path), "sync", "down"], capture_output=True,
                           text=True, timeout=60, env=env_for(tmp_path))
    assert piped.returncode == 0 and json.loads(piped.stdout)["status"] == "DONE"
    assert piped.stderr == ""  # no bar into a pipe


_unread: "weakref.WeakKeyDictionary[Any, bytes]" = weakref.WeakKeyDictionary()


def read_line(child: "subprocess.Popen[str]", stream: Any, deadline: float) -> Optional[str]:
    """The stream's next line, or None past the deadline. Read from its
    file descriptor: a buffered readline takes in every line already
    written, and select() then waits for more that never comes."""
    fd = stream.fileno()
    while b"\n" not in _unread.get(stream, b""):
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        piece = os.read(fd, 65536) if ready else b""
        if not piece:
            return None
        _unread[stream] = _unread.get(stream, b"") + piece
    line, _, rest = _unread[stream].partition(b"\n")
    _unread[stream] = rest
    return line.decode("utf-8") + "\n"


def test_watch_prints_changes_and_syncs_as_they_happen_until_ctrl_c(path: Path, tmp_path: Path,
                                                                   rest_server: Any) -> None:
    child = subprocess.Popen([sys.executable, "-m", "tureen", str(path), "watch"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, bufsize=1, env=env_for(tmp_path))
    try:
        deadline = time.monotonic() + WAIT
        assert (read_line(child, child.stderr, deadline) or "").startswith("watching"), "watch did not start"
        with tureen.Store.open(path, key=KEY) as s:
            s.upsert("people", [{"name": "Grace", "age": 85}])
            s.remove("people", [1])
        created: List[int] = []
        deleted: List[int] = []
        while not (created and deleted):  # the two commits may be told as one
            line = read_line(child, child.stdout, deadline)
            assert line, "no event within %ss: %r, %r" % (WAIT, created, deleted)
            event = json.loads(line)
            assert (event["event"], event["soup"], event["origin"]) == ("change", "people", "external")
            created += event["created"]
            deleted += event["deleted"]
        assert (created, deleted) == ([3], [1])
        rest_server.set_record({"uid": "r1"})
        with tureen.Store.open(path, key=KEY) as s:
            s.register_soup("items", [("uid", "string")])
            s.sync_down(rest_target(rest_server), "items", name="down")
        # Another process's sync: told by the writes to its state, read back.
        states: List[Dict[str, Any]] = []
        while not states or states[-1]["status"] != "DONE":
            line = read_line(child, child.stdout, deadline)
            assert line, "no sync state within %ss: %r" % (WAIT, states)
            event = json.loads(line)
            if event["event"] == "sync":
                states.append(event)
        assert (states[-1]["name"], states[-1]["type"], states[-1]["soupName"], states[-1]["synced"]) \
            == ("down", "syncDown", "items", 1)
        child.send_signal(signal.SIGINT)
        assert child.wait(timeout=WAIT) == 0
        assert "Traceback" not in child.stderr.read()
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        child.stdout.close()
        child.stderr.close()
