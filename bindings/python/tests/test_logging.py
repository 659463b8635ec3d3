"""The library's log: one line per HTTP request and per sync page or batch,
routed to Python's logging; TUREEN_LOG turns it on without code; nothing
logged ever holds a key, a token or a password."""

from __future__ import annotations

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
        tureen.log.set_level("off")


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
    tureen.log.set_level("warning")
    try:
        with caplog.at_level(logging.DEBUG, logger="tureen"):
            with tureen.Store.open(tmp_path / "w.db", raw_key=SECRET_KEY):
                pass
        assert not [r for r in caplog.records if r.name.startswith("tureen.")]  # "opened" is info
    finally:
        tureen.log.set_level("off")
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
