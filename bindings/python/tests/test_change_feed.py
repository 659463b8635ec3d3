"""The change feed (``tureen_changes``, ``Store.changes``), end to end:
every write kind is a row per entry in seq order with its record id, kind
and origin (a sync's records as "sync", with the server's ids); a rollback
leaves none; the iterator pages and resumes from ``last_seq``; a position
older than what the feed keeps raises instead of skipping; another
process's writes are in the feed and heard by soup listeners with their
ids; a store written before the feed opens and gains it.
"""

from __future__ import annotations

import sqlite3
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from tureen import query

from conftest import run_python
from sync_support import close_unless_stuck, kinto_client

KEY = "e5" * 32
SPECS = [("k", "string"), ("id", "string")]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    with tureen.Store.open(tmp_path / "feed.db", raw_key=KEY) as s:
        s.register_soup("a", SPECS)
        s.register_soup("b", SPECS)
        yield s


def row(seq: int, soup: str, entry: int, record: Any, kind: str, origin: str = "app") -> Dict[str, Any]:
    return {"seq": seq, "soup": soup, "entryId": entry, "recordId": record, "kind": kind, "origin": origin}


def test_every_write_is_a_row_per_entry_in_commit_order(store: tureen.Store) -> None:
    store.upsert("a", [{"k": "1", "id": "r-1"}, {"k": "2", "id": 2}, {"k": "3"}])
    store.upsert("b", {"k": "b"})
    store.upsert("a", {"k": "1", "id": "r-1", "more": True}, external_id_path="k")
    store.remove("a", [2])
    store.remove_by_query(query.exact("a", "k", "3"))
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.upsert("b", {"k": "rolled back"})
            raise RuntimeError("no")
    store.clear_soup("b")
    feed = store.changes()
    assert list(feed) == [
        row(1, "a", 1, "r-1", "create"), row(2, "a", 2, 2, "create"), row(3, "a", 3, None, "create"),
        row(4, "b", 1, None, "create"), row(5, "a", 1, "r-1", "update"), row(6, "a", 2, 2, "delete"),
        row(7, "a", 3, None, "delete"), row(8, "b", 1, None, "delete"),
    ]
    assert feed.last_seq == 8
    store.drop_soup("a")
    assert list(store.changes(since=8)) == [row(9, "a", 1, "r-1", "delete")]


def test_the_iterator_pages_resumes_and_filters(store: tureen.Store) -> None:
    for n in range(25):
        store.upsert("a" if n % 5 else "b", {"k": str(n), "id": "r%d" % n})
    assert [c["seq"] for c in store.changes(page_size=4)] == list(range(1, 26))
    first = store.changes(limit=10, page_size=3)
    assert [c["seq"] for c in first] == list(range(1, 11)) and first.last_seq == 10
    rest = store.changes(since=first.last_seq)
    assert [c["seq"] for c in rest] == list(range(11, 26)) and rest.last_seq == 25

    only_b = store.changes(soup="b", page_size=2)
    assert [c["recordId"] for c in only_b] == ["r0", "r5", "r10", "r15", "r20"]
    assert only_b.last_seq == 25  # past the other soups' changes too
    stopped = store.changes(soup="a", page_size=2)
    assert [next(stopped)["seq"] for _ in range(3)] == [2, 3, 4] and stopped.last_seq == 4

    now = store.changes(since="now")
    assert list(now) == [] and now.last_seq == 25
    store.upsert("a", {"k": "later"})
    assert [c["entryId"] for c in store.changes(since=now.last_seq)] == [21]


def test_a_position_no_longer_kept_raises(tmp_path: Path) -> None:
    with tureen.Store.open(tmp_path / "kept.db", raw_key=KEY, changes_keep_count=3) as s:
        s.register_soup("a", SPECS)
        s.upsert("a", [{"k": str(n)} for n in range(5)])
        with pytest.raises(tureen.NotFoundError, match="no longer kept"):
            s.changes(since=0)
        with pytest.raises(tureen.NotFoundError):
            s.changes(since=1)
        assert [c["seq"] for c in s.changes(since=2)] == [3, 4, 5]
        with pytest.raises(tureen.InvalidError, match="past the newest"):
            s.changes(since=6)
        with pytest.raises(TypeError, match="store.events"):
            s.changes("a")  # type: ignore[arg-type]
        with pytest.raises(tureen.InvalidError):
            s.changes(page_size=0)
    time.sleep(0.02)
    with tureen.Store.open(tmp_path / "kept.db", raw_key=KEY, changes_keep_ms=10, changes_keep_count=0) as s:
        s.upsert("a", {"k": "young", "id": "y"})  # its commit drops what is older than 10 ms
        with pytest.raises(tureen.NotFoundError):
            s.changes(since=4)
        assert list(s.changes(since=5)) == [row(6, "a", 6, "y", "create")]
    with pytest.raises(tureen.InvalidError, match="changes_keep_ms"):
        tureen.Store.open(tmp_path / "kept.db", raw_key=KEY, changes_keep_ms=-1)


class Recorder:
    """Collects what a listener receives, and waits for it with a bound."""

    def __init__(self) -> None:
        self.events: List[Any] = []
        self.cond = threading.Condition()

    def __call__(self, event: Any) -> None:
        with self.cond:
            self.events.append(event)
            self.cond.notify_all()

    def wait(self, n: int, timeout: float = 5.0) -> List[Any]:
        with self.cond:
            assert self.cond.wait_for(lambda: len(self.events) >= n, timeout), (n, self.events)
            return list(self.events)


def test_another_process_is_in_the_feed_and_heard_with_its_ids(store: tureen.Store, tmp_path: Path) -> None:
    store.upsert("b", {"k": "mine"})
    got = Recorder()
    with store.listen(None, got):
        code = textwrap.dedent(
            """
            import sys, tureen
            with tureen.Store.open(sys.argv[1], raw_key=sys.argv[2]) as s:
                s.upsert("a", [{"k": "x", "id": "px"}, {"k": "y", "id": "py"}])
            """
        )
        done = run_python(code, [str(tmp_path / "feed.db"), KEY])
        assert done.returncode == 0, done.stderr
        heard = got.wait(1)[0]
        assert heard == {"soup": "a", "created": [1, 2], "updated": [], "deleted": [], "origin": "external",
                         "cleared": False}
        code = textwrap.dedent(
            """
            import sys, tureen
            with tureen.Store.open(sys.argv[1], raw_key=sys.argv[2]) as s, s.transaction():
                s.remove("a", [1])
                s.upsert("a", {"_soupEntryId": 2, "k": "y2", "id": "py"})
            """
        )
        done = run_python(code, [str(tmp_path / "feed.db"), KEY])
        assert done.returncode == 0, done.stderr
        assert got.wait(2)[1] == {"soup": "a", "created": [], "updated": [2], "deleted": [1], "origin": "external",
                                  "cleared": False}
    assert list(store.changes(since=1)) == [
        row(2, "a", 1, "px", "create"), row(3, "a", 2, "py", "create"),
        row(4, "a", 1, "px", "delete"), row(5, "a", 2, "py", "update"),
    ]


def test_a_store_written_before_the_feed_opens_and_gains_it(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with tureen.Store.open(path, unencrypted=True) as s:
        s.register_soup("a", SPECS)
        s.upsert("a", {"k": "before"})
    # What a Tureen without the feed leaves: no table, no sequence.
    db = sqlite3.connect(str(path))
    db.execute("DROP TABLE tureen_changes")
    db.execute("DELETE FROM sqlite_sequence WHERE name = 'tureen_changes'")
    db.commit()
    db.close()
    with tureen.Store.open(path, unencrypted=True) as s:
        assert list(s.changes()) == []
        s.upsert("a", {"k": "after", "id": "new"})
        assert list(s.changes()) == [row(1, "a", 2, "new", "create")]
        assert s.count(query.all("a")) == 2


def test_a_sync_writes_are_in_the_feed_with_the_server_ids(
    tmp_path: Path, kinto_collection: Dict[str, Any]
) -> None:
    other = kinto_client(kinto_collection)
    with other.batch() as batch:
        for rid in ("k1", "k2", "k3"):
            batch.create_record(id=rid, data={"id": rid, "name": rid.upper()})
    s = tureen.Store.open(tmp_path / "sync.db", raw_key=KEY)
    try:
        s.register_soup("contacts", [("id", "string"), ("name", "string")])
        state = s.sync_down(dict(kinto_collection, type="kinto"), "contacts")
        assert state["status"] == "DONE"
        synced = list(s.changes(soup="contacts"))
        assert sorted(c["recordId"] for c in synced) == ["k1", "k2", "k3"]
        assert {(c["kind"], c["origin"]) for c in synced} == {("create", "sync")}
        s.local_upsert("contacts", {"id": "k4", "name": "local"})
        assert [(c["recordId"], c["kind"], c["origin"]) for c in s.changes(since=synced[-1]["seq"], soup="contacts")] \
            == [("k4", "create", "app")]
    finally:
        close_unless_stuck(s)


def test_rekey_and_compact_keep_the_feed_and_its_sequence(store: tureen.Store) -> None:
    store.upsert("a", [{"k": "1"}, {"k": "2"}])
    store.remove("a", [1, 1, 99])  # an id twice counts once; an unknown one is no change
    store.rekey(raw_key="f6" * 32)
    store.upsert("a", {"k": "3"})
    store.compact()
    store.upsert("a", {"k": "4"})
    assert [(c["seq"], c["entryId"], c["kind"]) for c in store.changes()] == [
        (1, 1, "create"), (2, 2, "create"), (3, 1, "delete"), (4, 3, "create"), (5, 4, "create"),
    ]


def test_a_failed_call_inside_a_transaction_leaves_no_row(store: tureen.Store) -> None:
    with store.transaction():
        store.upsert("a", {"k": "kept"})
        with pytest.raises(tureen.InvalidError):
            store.upsert("a", [{"k": "undone"}, {"k": "bad", "_soupEntryId": "x"}])
        store.upsert("b", {"k": "kept too"})
        assert [c["seq"] for c in store.changes()] == [1, 2]  # the thread reads its own calls' rows
    assert [(c["soup"], c["entryId"]) for c in store.changes()] == [("a", 1), ("b", 1)]


def test_a_bulk_write_is_a_row_per_entry_in_entry_order(store: tureen.Store) -> None:
    # Hundreds of entries in one commit, as the feed writes them many rows to
    # a statement: each entry one row, in entry id order, numbered without a
    # gap, with its own record id (string, integer or none) and kind.
    def record(i: int) -> Any:
        return ["r-%d" % i, i, None][i % 3]

    store.upsert("a", [dict({"k": str(i)}, **({} if record(i) is None else {"id": record(i)})) for i in range(1, 201)])
    with store.transaction():
        store.upsert("a", [{"_soupEntryId": i, "k": str(i), "id": "u-%d" % i} for i in range(70, 0, -1)])
        store.upsert("a", [{"k": "new %d" % i} for i in range(65)])
        store.remove("a", [6, 5, 500])  # 500 is no entry: no row
    assert list(store.changes()) == (
        [row(i, "a", i, record(i), "create") for i in range(1, 201)]
        + [row(200 + i, "a", i, "u-%d" % i, "update") for i in range(1, 71)]
        + [row(270 + i, "a", 200 + i, None, "create") for i in range(1, 66)]
        + [row(336, "a", 5, "u-5", "delete"), row(337, "a", 6, "u-6", "delete")]
    )


def test_a_record_id_is_the_one_the_entry_holds_when_its_call_ends(store: tureen.Store) -> None:
    # The writer hands each entry's record id to the feed: only a top-level
    # string or integer "id" is one, and the row has what the entry holds
    # when the call ends, whichever way the call wrote it last.
    odd = [{"id": [1]}, {"id": {"x": 1}}, {"id": 1.5}, {"id": True}, {"id": None}, {"k": "x", "v": {"id": "deep"}}]
    store.upsert("a", [dict(e, k=str(i)) for i, e in enumerate(odd)])
    # Plain text both times, the second found by its external id.
    store.upsert("b", [{"k": "1", "id": "first"}, {"k": "1", "id": "second"}], external_id_path="k")
    # Plain, then parsed (it names its entry).
    store.upsert("b", [{"k": "2", "id": 7}, {"_soupEntryId": 2, "k": "2", "id": 8}])
    store.upsert("b", {"_soupEntryId": 1, "k": "1"})  # no id any more
    assert [(c["soup"], c["entryId"], c["recordId"], c["kind"]) for c in store.changes()] == (
        [("a", i, None, "create") for i in range(1, 7)]
        + [("b", 1, "second", "create"), ("b", 2, 8, "create"), ("b", 1, None, "update")]
    )
