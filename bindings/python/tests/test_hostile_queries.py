"""Queries written to hurt the host: patterns SQLite's matcher backtracks on,
SQL that asks for more memory than a query may have, Smart SQL that forges
the library's JSON, and reads of Tureen's own tables. Each query either
answers or fails with a clear error, within a bounded wait, and the store
goes on working.
"""

from __future__ import annotations

import queue
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


# ---------------------------------------------------------------------------
# memory

GROUPS = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 20000000) "
          "SELECT x, count(*) FROM c GROUP BY x ORDER BY 2 DESC LIMIT 1")


@pytest.mark.parametrize("sql", [
    "SELECT length(randomblob(900000000))",  # one value of 900 MB
    "SELECT length(randomblob(300000000) || randomblob(300000000) || randomblob(300000000))",
], ids=["one value", "concatenated"])
def test_a_query_that_asks_for_more_than_query_memory_mb_fails(store: tureen.Store, sql: str) -> None:
    # No option given: the library's default of 512 MiB holds.
    with pytest.raises(tureen.QueryError) as info:
        run_bounded(store, lambda: store.query(query.smart(sql)), timeout=BOUND)
    assert "query_memory_mb (512 MiB)" in str(info.value)
    assert store.query(query.smart("SELECT length(randomblob(1000))")) == [[1000]]


def test_a_grouping_that_grows_fails_at_a_smaller_query_memory_mb(tmp_path: Path) -> None:
    # 20 million groups in SQLite's sorter: about 1.4 GB without a budget.
    with tureen.Store.open(tmp_path / "m.db", raw_key=KEY, query_memory_mb=64) as s:
        for call in (s.query, s.count):
            with pytest.raises(tureen.QueryError) as info:
                run_bounded(s, lambda: call(query.smart(GROUPS)), timeout=60)
            assert "query_memory_mb (64 MiB)" in str(info.value)
        assert s.count(query.smart("SELECT 1")) == 1


def test_a_smart_sql_page_of_large_rows_is_held_to_query_memory_mb(tmp_path: Path) -> None:
    # SQLite holds one 4 MB row at a time; the page of them, as hex, grows.
    rows = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 100) "
            "SELECT randomblob(4000000) FROM c")
    with tureen.Store.open(tmp_path / "p.db", raw_key=KEY, query_memory_mb=32) as s:
        with pytest.raises(tureen.QueryError, match="query_memory_mb"):
            run_bounded(s, lambda: s.query(query.smart(rows, page_size=100)), timeout=BOUND)
        assert len(s.query(query.smart(rows, page_size=3))) == 3  # 24 MB of hex fits


def test_a_page_of_large_entries_is_held_to_query_memory_mb(tmp_path: Path) -> None:
    # SQLite reads one 1 MB entry at a time; a page of forty of them is 40 MB
    # in the library and again in the host, however large pageSize says.
    with tureen.Store.open(tmp_path / "e.db", raw_key=KEY, query_memory_mb=32) as s:
        s.register_soup("big", [{"path": "n", "type": "integer"}])
        s.upsert("big", [{"n": i, "text": "x" * 1_000_000} for i in range(40)])
        for spec in (query.all("big", page_size=40), query.range("big", "n", 0, 39, page_size=1000)):
            with pytest.raises(tureen.QueryError, match=r"query_memory_mb \(32 MiB\)"):
                run_bounded(s, lambda: s.query(spec), timeout=BOUND)
        page = s.query(query.range("big", "n", 0, 39, page_size=20))  # 20 MB fits
        assert [e["n"] for e in page] == list(range(20))
        assert s.count(query.all("big")) == 40  # a count returns no page


def test_a_retrieve_asking_for_one_entry_many_times_is_held_to_query_memory_mb(tmp_path: Path) -> None:
    # 1,000 copies of one 100 KB entry: a 6 KB list of ids names 100 MB.
    with tureen.Store.open(tmp_path / "r.db", raw_key=KEY, query_memory_mb=2) as s:
        s.register_soup("big", [{"path": "n", "type": "integer"}])
        entry_id = s.upsert("big", {"n": 1, "text": "x" * 100_000})["_soupEntryId"]
        with pytest.raises(tureen.QueryError, match=r"retrieve .*query_memory_mb \(2 MiB\)"):
            run_bounded(s, lambda: s.retrieve("big", [entry_id] * 1000), timeout=BOUND)
        assert [e["n"] for e in s.retrieve("big", [entry_id] * 10)] == [1] * 10  # 1 MB fits
        s.upsert("big", {"n": 2, "text": "y"})
        assert s.count(query.all("big")) == 2


def test_one_entry_larger_than_query_memory_mb_is_still_retrieved(tmp_path: Path) -> None:
    # A query may not read a 3 MB entry under 1 MiB; retrieve always returns
    # the first entry of its answer, so every entry stays readable.
    with tureen.Store.open(tmp_path / "o.db", raw_key=KEY, query_memory_mb=1) as s:
        s.register_soup("big", [{"path": "n", "type": "integer"}])
        big = s.upsert("big", {"n": 1, "text": "x" * 3_000_000})["_soupEntryId"]
        small = s.upsert("big", {"n": 2})["_soupEntryId"]
        assert [e["n"] for e in s.retrieve("big", [big + 100, big])] == [1]
        assert s.get("big", big) is not None
        with pytest.raises(tureen.QueryError, match=r"query_memory_mb \(1 MiB\)"):
            s.retrieve("big", [small, big])
        with pytest.raises(tureen.QueryError, match=r"query_memory_mb \(1 MiB\)"):
            s.retrieve("big", [big, big])
        # Writes answer with what they were given, whatever its size: the
        # budget is for answers a short input can inflate.
        written = s.local_upsert("big", [{"n": 3, "text": "z" * 600_000}, {"n": 4, "text": "z" * 600_000}])
        assert [e["n"] for e in written] == [3, 4]


def test_a_live_query_past_query_memory_mb_recovers_when_entries_are_removed(tmp_path: Path) -> None:
    # The failed page named no entries, so a removal (which can only shrink
    # a page) was taken for a change that could not touch it.
    pages: "queue.Queue[object]" = queue.Queue()
    with tureen.Store.open(tmp_path / "l.db", raw_key=KEY, query_memory_mb=16) as s:
        s.register_soup("big", [{"path": "n", "type": "integer"}])
        s.upsert("big", [{"n": i, "text": "x" * 1_000_000} for i in range(24)])  # 24 MB: past 16 MiB
        listener = s.live_query(query.all("big", page_size=100), pages.put)
        try:
            first = pages.get(timeout=BOUND)
            assert isinstance(first, dict) and "query_memory_mb (16 MiB)" in first["error"]
            s.remove("big", [e["_soupEntryId"] for e in s.query(query.range("big", "n", 0, 11, page_size=12))])
            page = pages.get(timeout=BOUND)
            assert isinstance(page, list) and sorted(e["n"] for e in page) == list(range(12, 24))
        finally:
            listener.remove()


def test_query_memory_mb_zero_lifts_the_limit_and_bad_values_are_refused(tmp_path: Path) -> None:
    with tureen.Store.open(tmp_path / "z.db", raw_key=KEY, query_memory_mb=0) as s:
        assert s.query(query.smart("SELECT length(randomblob(600000000))")) == [[600000000]]
    for bad in (-1, 1 << 31, "64"):
        with pytest.raises(tureen.InvalidError, match="query_memory_mb"):
            tureen.Store.open(tmp_path / "z.db", raw_key=KEY, query_memory_mb=bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Smart SQL that forges the library's JSON

BREAKOUT = "'1]],[[\"FORGED'"


@pytest.mark.parametrize("name", ['"tureen_entry"', "`TUREEN_entry`", "[tureen_entry]", '"tureen_path_value"'])
def test_a_quoted_internal_function_is_refused(store: tureen.Store, name: str) -> None:
    sql = f"SELECT {name}({BREAKOUT}, 1, 1)"
    with pytest.raises(tureen.QueryError, match="internal"):
        store.query(query.smart(sql))


@pytest.mark.parametrize("forged", [
    f"CAST(substr({{{SOUP}:_soup}}, 1, 16) || {BREAKOUT} AS BLOB)",  # the tag, copied, then rows of its own
    f"CAST(substr({{{SOUP}:_soup}}, 1, 16) || '\"a' || x'00' || 'b\"' AS BLOB)",  # a NUL
    f"CAST(substr({{{SOUP}:_soup}}, 1, 16) || x'22ff22' AS BLOB)",  # invalid UTF-8
], ids=["breakout", "nul", "utf8"])
def test_a_copied_tag_does_not_make_sql_bytes_json(store: tureen.Store, forged: str) -> None:
    rows = store.query(query.smart(f"SELECT {forged}, 7 FROM {{{SOUP}}} WHERE {{{SOUP}:text}} = 'b'"))
    assert len(rows) == 1 and len(rows[0]) == 2 and rows[0][1] == 7
    assert isinstance(rows[0][0], str) and "FORGED" not in str(rows)  # a BLOB's hex, as any BLOB


def test_a_table_shadowing_a_soup_cannot_forge_its_entries(store: tureen.Store) -> None:
    sql = (f"WITH {{{SOUP}}}(soup, id, lastModified) AS "
           f"(SELECT {BREAKOUT}, 1, 1 UNION ALL SELECT '{{\"ok\":1}}', 2, 2) "
           f"SELECT {{{SOUP}:_soup}} FROM {{{SOUP}}} ORDER BY 1")
    rows = store.query(query.smart(sql))
    assert len(rows) == 2 and all(len(r) == 1 for r in rows)
    values = [r[0] for r in rows]
    # The text that is no JSON object comes back as any BLOB, in hex; the one
    # that is, as the object it is.
    assert sum(isinstance(v, str) for v in values) == 1
    assert {"ok": 1, "_soupEntryId": 2, "_soupLastModifiedDate": 2} in values
    # Real entries still come back as objects.
    entries = store.query(query.smart(f"SELECT {{{SOUP}:_soup}} FROM {{{SOUP}}} WHERE {{{SOUP}:text}} = 'b'"))
    assert entries[0][0]["text"] == "b"


# ---------------------------------------------------------------------------
# Tureen's own tables, NULs, and soups SQLite cannot write


@pytest.mark.parametrize("sql", [
    "SELECT count(*) FROM 'tureen_soups'",  # a string as a table name; no column read
    "SELECT count(*) FROM sqlite_master",
    "SELECT count(*) FROM (SELECT 1 FROM main.sqlite_master)",
    'SELECT count(*) FROM "tureen_soups"',
    "SELECT name FROM 'tureen_soups'",
    "SELECT rowid FROM sqlite_master",
    "SELECT max(rowid) FROM sqlite_master",
], ids=["string name", "sqlite_master", "subquery", "quoted", "column", "rowid", "max rowid"])
def test_smart_sql_cannot_read_tureens_or_sqlites_own_tables(store: tureen.Store, sql: str) -> None:
    for call in (store.query, store.count):
        with pytest.raises(tureen.QueryError):
            call(query.smart(sql))
    assert store.query(query.smart(f"SELECT count(*) FROM {{{SOUP}}}")) == [[3]]


def test_smart_sql_with_a_nul_is_refused_not_cut_short(store: tureen.Store) -> None:
    # SQLite would stop at the NUL and run "SELECT 1" alone.
    with pytest.raises(tureen.QueryError, match="NUL"):
        store.query(query.smart(f"SELECT 1\0 UNION SELECT {{{SOUP}:text}} FROM {{{SOUP}}}"))


def test_a_soup_with_more_index_specs_than_sqlite_can_bind_is_refused(store: tureen.Store) -> None:
    # 1000 specs registered, then every upsert failed with "too many SQL variables".
    many = [(f"p{i}", "string") for i in range(901)]
    with pytest.raises(tureen.InvalidError, match="at most 900"):
        store.register_soup("wide", many)
    assert not store.soup_exists("wide")
    with pytest.raises(tureen.InvalidError, match="at most 900"):
        store.alter_soup(SOUP, many, reindex=True)
    assert store.count(query.all(SOUP)) == 3
    store.register_soup("wide", many[:900])
    store.upsert("wide", [{f"p{i}": "v" for i in range(900)}])
    assert store.count(query.exact("wide", "p899", "v")) == 1
