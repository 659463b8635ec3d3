"""The library's log: one line per HTTP request and per sync page or batch,
routed to Python's logging; TUREEN_LOG turns it on without code; nothing
logged ever holds a key, a token or a password."""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path
from typing import Iterator

import pytest

import tureen
from tureen import _library

from conftest import run_python
from servers import RestServer
from test_sync_rest import rest_target

SECRET_KEY = "a9" * 32
TOKEN = "tok-" + "z" * 20
API_KEY = "secret"  # RestServer's key: a header value, so a secret


@pytest.fixture
def debug_log() -> Iterator[None]:
    tureen.log.set_level("debug")
    try:
        yield
    finally:
        logging.getLogger("tureen").setLevel(logging.NOTSET)


def test_requests_and_pages_are_logged_without_secrets(tmp_path: Path, rest_server: RestServer,
                                                       caplog: pytest.LogCaptureFixture, debug_log: None) -> None:
    for i in range(30):
        rest_server.set_record({"uid": "r%02d" % i})
    with caplog.at_level(logging.DEBUG, logger="tureen"):
        with tureen.Store.open(tmp_path / "log.db", raw_key=SECRET_KEY) as store:
            store.register_soup("items", [("uid", "string")])
            target = rest_target(rest_server, auth={"bearer": TOKEN}, params={"limit": "20", "api_key": TOKEN})
            store.sync_down(target, "items", name="down")
    lines = [(r.name, r.levelname, r.getMessage()) for r in caplog.records]
    http = [m for n, _, m in lines if n == "tureen.http"]
    assert any(m.startswith("GET http://127.0.0.1:%d/api/items?" % rest_server.port) and "-> 200" in m for m in http), lines
    assert len(http) == 2  # two pages, one line each
    assert sum(1 for n, _, m in lines if n == "tureen.sync" and "page of" in m) == 2
    assert any(n == "tureen.sync" and "ended DONE" in m for n, _, m in lines)
    assert any(n == "tureen.store" and "opened" in m for n, _, m in lines)
    text = "\n".join(m for _, _, m in lines)
    for secret in (SECRET_KEY, TOKEN, API_KEY):
        assert secret not in text


def test_levels_filter_and_bad_levels_are_refused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # the root logger's: "tureen" is set apart below
    tureen.log.set_level("warning")
    try:
        with tureen.Store.open(tmp_path / "w.db", raw_key=SECRET_KEY):
            pass
        assert not [r for r in caplog.records if r.name.startswith("tureen.")]  # "opened" is info
    finally:
        logging.getLogger("tureen").setLevel(logging.NOTSET)
    with pytest.raises(ValueError):
        tureen.log.set_level("loud")
    with pytest.raises(tureen.InvalidError):
        _library.check(_library.lib.tureen_log_set(7, _library.LogFn(), None, _library.FreeCtxFn()))


def test_tureen_log_in_the_environment_turns_it_on(tmp_path: Path) -> None:
    code = textwrap.dedent(
        """
        import sys, tureen
        with tureen.Store.open(sys.argv[1], raw_key=sys.argv[2]) as s:
            s.register_soup("x", [("n", "integer")])
        """
    )
    done = run_python(code, [str(tmp_path / "e.db"), SECRET_KEY], env=dict(__import__("conftest").child_env(),
                                                                            TUREEN_LOG="info"))
    assert done.returncode == 0, done.stderr
    assert "tureen.store INFO opened" in done.stderr and SECRET_KEY not in done.stderr
    quiet = run_python(code, [str(tmp_path / "e.db"), SECRET_KEY])
    assert "tureen" not in quiet.stderr
    # "off" wins over the application's logging configuration.
    configured = "import logging; logging.basicConfig(level=logging.DEBUG)\n" + code
    off = run_python(configured, [str(tmp_path / "e.db"), SECRET_KEY],
                     env=dict(__import__("conftest").child_env(), TUREEN_LOG="off"))
    assert off.returncode == 0 and "tureen" not in off.stderr, off.stderr


# A child's log: the library's lines that reached Python (with their level
# number, whatever the loggers then did with them) and the records the
# root handler got, as JSON, after each step of sys.argv[4] (a JSON list).
FOLLOWING = """
import json, logging, sys, tureen

crossed = []
log = logging.Logger.log


def counted(self, level, msg, *args, **kwargs):
    # The library's lines come in through here (tureen.log's trampoline).
    if self.name.startswith("tureen."):
        crossed.append(level)
    return log(self, level, msg, *args, **kwargs)


logging.Logger.log = counted
records = []


class Kept(logging.Handler):
    def emit(self, record):
        records.append([record.name, record.levelname, record.getMessage()])


store = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2])
store.register_soup("items", [("uid", "string")])
for n, step in enumerate(json.loads(sys.argv[4])):
    exec(step)
    store.sync_down(json.loads(sys.argv[3]), "items", name="s%d" % n)
    print(json.dumps({"step": step, "crossed": crossed, "records": records}), flush=True)
    crossed.clear()
    records.clear()
"""


def following(tmp_path: Path, rest_server: RestServer, steps: "list[str]") -> "list[dict]":
    """Runs the steps in a child, each followed by a sync down; what each
    one logged."""
    for i in range(3):
        rest_server.set_record({"uid": "r%d" % i})
    done = run_python(FOLLOWING, [str(tmp_path / "f.db"), SECRET_KEY, json.dumps(rest_target(rest_server)),
                                  json.dumps(steps)])
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_library_logs_at_the_level_logging_was_configured_with(tmp_path: Path,
                                                                    rest_server: RestServer) -> None:
    unset, configured, narrowed, one_category, disabled = following(tmp_path, rest_server, [
        "pass",
        "logging.basicConfig(level=logging.DEBUG, handlers=[Kept()])",
        "logging.getLogger('tureen').setLevel(logging.WARNING)",
        "logging.getLogger('tureen.http').setLevel(logging.DEBUG)",
        "logging.disable(logging.CRITICAL)",
    ])
    # Unconfigured (the root logger at WARNING), no info or debug line is
    # even passed to Python; nothing is printed.
    assert unset["records"] == [] and all(level >= logging.WARNING for level in unset["crossed"]), unset
    # basicConfig alone shows the requests, pages and the sync's end.
    names = {(name, level) for name, level, _ in configured["records"]}
    assert {("tureen.http", "DEBUG"), ("tureen.sync", "INFO")} <= names, configured
    assert any(name == "tureen.http" and message.startswith("GET ") for name, _, message in configured["records"])
    # The tureen logger at WARNING: info and debug stay in the library.
    assert narrowed["records"] == [] and all(level >= logging.WARNING for level in narrowed["crossed"]), narrowed
    # tureen.http at DEBUG: its lines come, and only those reach the handler.
    assert {name for name, _, _ in one_category["records"]} == {"tureen.http"}, one_category
    assert logging.DEBUG in one_category["crossed"]
    # logging.disable: nothing crosses at all.
    assert disabled["records"] == [] and disabled["crossed"] == [], disabled


def test_set_level_sets_the_tureen_loggers_level(tmp_path: Path, rest_server: RestServer) -> None:
    quiet, debug, off = following(tmp_path, rest_server, [
        "logging.basicConfig(level=logging.WARNING, handlers=[Kept()])",
        "tureen.log.set_level('debug')",
        "tureen.log.set_level('off')",
    ])
    assert quiet["records"] == [], quiet
    assert any(name == "tureen.http" for name, _, _ in debug["records"]), debug
    assert off["records"] == [] and off["crossed"] == [], off


def test_c8o_level_names_are_taken(tmp_path: Path, rest_server: RestServer) -> None:
    """C8o's "trace", "fatal" and "none", as the nearest of Tureen's levels."""
    trace, fatal, none = following(tmp_path, rest_server, [
        "logging.basicConfig(level=logging.WARNING, handlers=[Kept()]); tureen.log.set_level('trace')",
        "tureen.log.set_level('FATAL')",
        "tureen.log.set_level('none')",
    ])
    assert any(name == "tureen.http" and level == "DEBUG" for name, level, _ in trace["records"]), trace
    assert logging.getLevelName(logging.DEBUG) in {level for _, level, _ in trace["records"]}
    assert fatal["records"] == [] and all(level >= logging.ERROR for level in fatal["crossed"]), fatal
    assert none["records"] == [] and none["crossed"] == [], none
    with pytest.raises(ValueError):
        tureen.log.set_level("verbose")
