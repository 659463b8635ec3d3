"""Queries written to hurt the host: patterns SQLite's matcher backtracks on,
SQL that asks for more memory than a query may have, Smart SQL that forges
the library's JSON, and reads of Tureen's own tables. Each query either
answers or fails with a clear error, within a bounded wait, and the store
goes on working.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Iterator, List

import pytest

import tureen
from tureen import query

from sync_support import run_bounded

KEY = "c3" * 32
SOUP = "words"
BOUND = 10.0  # seconds any one call may take here before the test fails

# Text of 4,000,000 "a"s against a pattern of 2,000 "a"s and a "b": every
# start in the text is tried, about 8e9 character comparisons, whoever
# matches. Built by SQL so that no value crosses the binding.
A_RUN = "replace(hex(zeroblob({n})), '0', 'a')"
LONG_MATCH = ("SELECT " + A_RUN.format(n=2_000_000) + " LIKE '%' || " + A_RUN.format(n=1000) + " || 'b'")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    s = tureen.Store.open(tmp_path / "q.db", raw_key=KEY)
    s.register_soup(SOUP, [("text", "string")])
    s.upsert(SOUP, [{"text": "a" * 800}, {"text": "a" * 799 + "b"}, {"text": "b"}])
    try:
        yield s
    finally:
        s.close()


# ---------------------------------------------------------------------------
# LIKE and GLOB


def test_a_like_pattern_sqlite_backtracks_on_answers_at_once(store: tureen.Store) -> None:
    # SQLite 3.15's matcher tried every split of the 800 "a"s among the
    # wildcards: 13 s for four of them, inside one step nothing could stop.
    def texts(pattern: str) -> List[int]:
        rows = run_bounded(store, lambda: store.query(query.like(SOUP, "text", pattern)), timeout=BOUND)
        return sorted(len(r["text"]) for r in rows)

    assert texts("%a%a%a%a%a%c") == []
    assert texts("%a%a%a%a%a%b") == [800]
    assert texts("%A%a%A%a%") == [800, 800]  # LIKE ignores ASCII case
    assert texts("b") == [1]


def test_a_glob_pattern_sqlite_backtracks_on_answers_at_once(store: tureen.Store) -> None:
    a400 = A_RUN.format(n=200)
    sql = f"SELECT {a400} GLOB '*a*a*a*a*a*b', {a400} || 'b' GLOB '*a*a*a*a*a*b', 'x]' GLOB '*[]]'"
    assert run_bounded(store, lambda: store.query(query.smart(sql)), timeout=BOUND) == [[0, 1, 1]]


def test_a_long_match_stops_at_query_timeout_ms(tmp_path: Path) -> None:
    with tureen.Store.open(tmp_path / "t.db", raw_key=KEY, query_timeout_ms=300) as s:
        started = time.monotonic()
        with pytest.raises(tureen.QueryError) as info:
            run_bounded(s, lambda: s.query(query.smart(LONG_MATCH)), timeout=BOUND)
        assert "query_timeout_ms" in str(info.value) and time.monotonic() - started < 5
        assert s.query(query.smart("SELECT 'ab' LIKE 'a_'")) == [[1]]


def test_interrupt_stops_a_long_match(store: tureen.Store) -> None:
    errors: List[BaseException] = []

    def run() -> None:
        try:
            store.query(query.smart(LONG_MATCH))
        except BaseException as e:  # noqa: B902 - checked below
            errors.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    time.sleep(0.5)
    interrupted = time.monotonic()
    store.interrupt()
    t.join(BOUND)
    assert not t.is_alive() and time.monotonic() - interrupted < 5
    assert len(errors) == 1 and isinstance(errors[0], tureen.CancelledError)
