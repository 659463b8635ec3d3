"""Errors raised through the Python binding name the Python calls that fix
them (store.alter_soup), never the C functions a Python caller never made
(tureen_soup_alter)."""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Callable, Iterator, Set

import pytest

import tureen
from tureen import _library

from conftest import REPO

C_NAME = re.compile(r"\btureen_[a-z_]+\b")
# The words of the header a message may name: its functions and structs.
HEADER_NAMES = set(_library.PROTOTYPES) | {"tureen_store", "tureen_listener", "tureen_callbacks",
                                           "tureen_auth_callbacks"}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    with tureen.Store.open(tmp_path / "m.db", unencrypted=True) as s:
        s.register_soup("notes", [("id", "string")])
        yield s


def message_of(call: Callable[[], object]) -> tureen.Error:
    with pytest.raises(tureen.Error) as info:
        call()
    return info.value


def c_names(error: tureen.Error) -> Set[str]:
    return set(C_NAME.findall(error.message)) & HEADER_NAMES


def test_register_with_other_specs_names_alter_soup(store: tureen.Store) -> None:
    error = message_of(lambda: store.register_soup("notes", [("title", "string")]))
    assert isinstance(error, tureen.InvalidError)
    assert "store.alter_soup" in error.message
    assert c_names(error) == set()


def test_named_sync_messages_name_python_calls(store: tureen.Store) -> None:
    # Nothing to send: the sync up runs without reaching the (absent) server.
    target = tureen.kinto_target("http://127.0.0.1:1/v1", "b", "c")
    assert store.sync_up(target, "notes", name="up")["status"] == "DONE"
    assert store.sync_up(target, "notes", name="up")["status"] == "DONE"  # given again: runs again

    other_mode = message_of(lambda: store.sync_up(target, "notes", name="up", merge_mode=tureen.LEAVE_IF_CHANGED))
    other_direction = message_of(lambda: store.sync_down(target, "notes", name="up"))
    start = message_of(lambda: store.sync_update("up", options={"start": False}))

    assert "store.sync_update" in other_mode.message
    assert "store.sync_delete" in other_direction.message
    assert "store.sync_down" in start.message and "store.sync_up" in start.message
    for error in (other_mode, other_direction, start):
        assert isinstance(error, tureen.InvalidError)
        assert c_names(error) == set()


def test_engine_soup_message_names_clear_cache(store: tureen.Store) -> None:
    error = message_of(lambda: store.upsert(tureen.CACHE_SOUP, [{"a": 1}]))
    assert isinstance(error, tureen.InvalidError)
    assert "store.clear_cache" in error.message
    assert c_names(error) == set()


def test_every_header_function_has_a_python_name() -> None:
    from tureen._python_names import PYTHON_CALLS

    # tureen_free has none: the binding frees what the library hands it.
    assert sorted(set(_library.PROTOTYPES) - set(PYTHON_CALLS)) == ["tureen_free"]
    assert all(not C_NAME.search(name) for name in PYTHON_CALLS.values())


def test_every_name_in_a_library_message_has_a_python_name() -> None:
    from tureen._python_names import PYTHON_CALLS

    sources = REPO / "Sources"
    if not sources.is_dir():
        pytest.skip("no library sources here (an installed package)")
    named: Set[str] = set()
    for path in sources.rglob("*.swift"):
        for line in path.read_text(encoding="utf-8").splitlines():
            if "@_cdecl" in line or line.lstrip().startswith("//"):
                continue
            for literal in re.findall(r'"((?:[^"\\]|\\.)*)"', line):
                named |= set(C_NAME.findall(literal)) & HEADER_NAMES
    assert {"tureen_soup_alter", "tureen_resync", "tureen_sync_update"} <= named
    assert sorted(named - set(PYTHON_CALLS)) == []


def test_interrupted_query_names_store_interrupt(tmp_path: Path) -> None:
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"
    with tureen.Store.open(tmp_path / "q.db", unencrypted=True, query_timeout_ms=0) as s:
        timer = threading.Timer(0.3, s.interrupt)
        timer.start()
        try:
            error = message_of(lambda: s.count(tureen.query.smart(endless)))
        finally:
            timer.cancel()
    assert isinstance(error, tureen.CancelledError)
    assert "store.interrupt" in error.message
    assert c_names(error) == set()
