"""Records by their own id and merge saves: Store.local_read and
local_delete_records find records by the sync's id field ($fh.sync's
doRead/doDelete(uid), RhoConnect's find by object id), Store.local_merge keeps
the members an update does not name (SmartSync's StoreCache.save); both send
their siblings' events, and a sync up to Kinto sends what they marked."""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from sync_support import FLAGS, WAIT, entries, kinto_client

RAW = "4d" * 32
SOUP = "notes"
TASKS = "tasks"
CLEAN = {name: False for name in FLAGS}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    with tureen.Store.open(tmp_path / "records.db", raw_key=RAW) as s:
        s.register_soup(SOUP, [("id", "string"), ("n", "integer")])
        s.register_soup(TASKS, [("uid", "string")])
        s.upsert(SOUP, [{"id": "r1", "n": 1, "title": "one", **CLEAN}, {"id": "r2", "n": 2, "title": "two", **CLEAN}])
        yield s


class LocalEvents:
    """The local_update_applied events, as (soup, recordId, operation)."""

    def __init__(self, store: tureen.Store) -> None:
        self.events: "queue.Queue[Dict[str, Any]]" = queue.Queue()
        self.listener = store.sync_listen(self.events.put, ["local_update_applied"])

    def next(self, n: int) -> List[Any]:
        """The next ``n`` events, then checks no other follows at once."""
        got = [self.events.get(timeout=WAIT) for _ in range(n)]
        with pytest.raises(queue.Empty):
            self.events.get(timeout=0.3)
        return [(e["soup"], e["recordId"], e["operation"]) for e in got]


# ---------------------------------------------------------------------------
# local_read


def test_local_read_finds_records_by_their_own_id(store: tureen.Store) -> None:
    found = store.local_read(SOUP, ["r2", "missing", "r1"])
    assert [e["id"] for e in found] == ["r2", "r1"]  # in the order asked for, a missing id skipped
    assert [e["title"] for e in found] == ["two", "one"]
    assert all(isinstance(e["_soupEntryId"], int) for e in found)
    assert found == store.retrieve(SOUP, [found[0]["_soupEntryId"], found[1]["_soupEntryId"]])
    # Another id field; a number for an integer index, and for a string one.
    assert [e["id"] for e in store.local_read(SOUP, [2], id_field="n")] == ["r2"]
    store.upsert(SOUP, {"id": "7", "n": 70, **CLEAN})
    assert [e["n"] for e in store.local_read(SOUP, [7])] == [70]
    assert store.local_read(SOUP, []) == []
    bare = store.local_read(SOUP, ["r1"], sync_fields=False)
    assert bare == [{"id": "r1", "n": 1, "title": "one", "_soupEntryId": found[1]["_soupEntryId"],
                     "_soupLastModifiedDate": found[1]["_soupLastModifiedDate"]}]


def test_local_read_shows_a_record_deleted_here(store: tureen.Store) -> None:
    store.local_delete_records(SOUP, ["r1"])
    (entry,) = store.local_read(SOUP, ["r1"])
    assert entry["__locally_deleted__"] is True and entry["__local__"] is True


def test_local_read_refusals(store: tureen.Store) -> None:
    with pytest.raises(tureen.InvalidError, match="title"):
        store.local_read(SOUP, ["one"], id_field="title")  # not an index
    with pytest.raises(tureen.InvalidError):
        store.local_read(SOUP, [{"id": "r1"}])  # type: ignore[list-item]
    with pytest.raises(tureen.InvalidError):
        store.local_read(SOUP, [None])  # type: ignore[list-item]
    with pytest.raises(tureen.NotFoundError):
        store.local_read("nosuch", ["r1"])
    with pytest.raises(TypeError):
        store.local_read(SOUP, "r1")


def test_local_read_and_delete_refuse_an_id_held_twice(store: tureen.Store) -> None:
    store.register_soup("loose", [("code", "string")])
    store.upsert("loose", [{"code": "x", **CLEAN}, {"code": "x", **CLEAN}])
    with pytest.raises(tureen.ConstraintError):
        store.local_read("loose", ["x"], id_field="code")
    with pytest.raises(tureen.ConstraintError):
        store.local_delete_records("loose", ["x"], id_field="code")
    assert all(e["__locally_deleted__"] is False for e in entries(store, "loose"))


# ---------------------------------------------------------------------------
# local_delete_records


def test_local_delete_records_marks_as_local_delete_does(store: tureen.Store) -> None:
    events = LocalEvents(store)
    store.local_delete_records(SOUP, ["r1", "r1"])  # given twice, counted once
    (entry,) = store.local_read(SOUP, ["r1"])
    assert {name: entry[name] for name in FLAGS} == {
        "__local__": True,
        "__locally_created__": False,
        "__locally_updated__": False,
        "__locally_deleted__": True,
    }
    assert events.next(1) == [(SOUP, "r1", "delete")]
    # A record created here and never sent is removed at once.
    store.local_upsert(SOUP, {"id": "fresh"})
    assert events.next(1) == [(SOUP, "fresh", "create")]
    store.local_delete_records(SOUP, ["fresh"])
    assert store.local_read(SOUP, ["fresh"]) == []
    assert events.next(1) == [(SOUP, "fresh", "delete")]


def test_local_delete_records_by_another_id_field(store: tureen.Store) -> None:
    store.upsert(TASKS, {"uid": "u1", "title": "t", **CLEAN})
    events = LocalEvents(store)
    store.local_delete_records(TASKS, ["u1"], id_field="uid")
    assert store.local_read(TASKS, ["u1"], id_field="uid")[0]["__locally_deleted__"] is True
    assert events.next(1) == [(TASKS, "u1", "delete")]  # the record named by its uid


def test_local_delete_records_of_an_unknown_id_changes_nothing(store: tureen.Store) -> None:
    with pytest.raises(tureen.NotFoundError, match="nope"):
        store.local_delete_records(SOUP, ["r2", "nope"])
    assert all(e["__locally_deleted__"] is False for e in entries(store, SOUP))
    with pytest.raises(tureen.InvalidError):
        store.local_delete_records(SOUP, ["x"], id_field="title")
    with pytest.raises(tureen.InvalidError):
        store.local_delete_records("syncs_soup", ["x"], id_field="name")


def test_soup_listeners_hear_both(store: tureen.Store) -> None:
    heard: "queue.Queue[Dict[str, Any]]" = queue.Queue()
    with store.listen(SOUP, heard.put):
        store.local_delete_records(SOUP, ["r1"])
        deleted = heard.get(timeout=WAIT)
        store.local_merge(SOUP, {"id": "r2", "title": "deux"})
        merged = heard.get(timeout=WAIT)
    r1, r2 = (e["_soupEntryId"] for e in store.local_read(SOUP, ["r1", "r2"]))
    assert deleted["updated"] == [r1] and merged["updated"] == [r2]


# ---------------------------------------------------------------------------
# local_merge


def test_local_merge_keeps_the_members_not_given(store: tureen.Store) -> None:
    store.upsert(SOUP, {"id": "m1", "n": 1, "title": "one", "extra": {"a": 1}, "gone": 5,
                        "__last_error__": "refused", **CLEAN})
    events = LocalEvents(store)
    merged = store.local_merge(SOUP, {"id": "m1", "title": "ONE", "extra": {"b": 2}, "gone": None})
    assert isinstance(merged, dict)
    assert (merged["n"], merged["title"], merged["extra"], merged["gone"]) == (1, "ONE", {"b": 2}, None)
    assert {name: merged[name] for name in FLAGS} == {
        "__local__": True,
        "__locally_created__": False,
        "__locally_updated__": True,
        "__locally_deleted__": False,
    }
    assert "__last_error__" not in merged
    assert store.local_read(SOUP, ["m1"]) == [merged]  # what it answers is what is stored
    assert events.next(1) == [(SOUP, "m1", "update")]

    # local_upsert, by contrast, replaces the entry: what is not given is dropped.
    replaced = store.local_upsert(SOUP, {"id": "m1", "title": "only"})
    assert "n" not in replaced and "extra" not in replaced


def test_local_merge_by_entry_id_in_a_batch_and_creates(store: tureen.Store) -> None:
    (r1,) = store.local_read(SOUP, ["r1"])
    events = LocalEvents(store)
    merged = store.local_merge(SOUP, [{"_soupEntryId": r1["_soupEntryId"], "n": 11}, {"title": "new"}])
    assert isinstance(merged, list) and len(merged) == 2
    assert (merged[0]["id"], merged[0]["n"], merged[0]["title"]) == ("r1", 11, "one")
    assert merged[1]["__locally_created__"] is True and isinstance(merged[1]["id"], str)  # a client id
    assert events.next(2) == [(SOUP, "r1", "update"), (SOUP, merged[1]["id"], "create")]
    # A record created here and merged stays created, by another id field too.
    store.local_merge(TASKS, {"uid": "u2", "title": "draft", "due": 3}, id_field="uid")
    again = store.local_merge(TASKS, {"uid": "u2", "title": "final"}, id_field="uid")
    assert (again["due"], again["title"]) == (3, "final")
    assert again["__locally_created__"] is True and again["__locally_updated__"] is False


def test_local_merge_writes_nothing_when_an_entry_fails(store: tureen.Store) -> None:
    with pytest.raises(tureen.InvalidError):
        store.local_merge(SOUP, [{"id": "r1", "n": 99}, 7])  # type: ignore[list-item]
    assert store.local_read(SOUP, ["r1"])[0]["n"] == 1
    with pytest.raises(tureen.NotFoundError):
        store.local_merge("nosuch", {"id": "x"})


def test_local_merge_revives_a_record_deleted_here(store: tureen.Store) -> None:
    store.local_delete_records(SOUP, ["r2"])
    revived = store.local_merge(SOUP, {"id": "r2", "title": "back"})
    assert (revived["n"], revived["title"], revived["__locally_deleted__"]) == (2, "back", False)


def test_merge_and_delete_by_id_reach_kinto(store: tureen.Store, kinto_collection: Dict[str, Any]) -> None:
    target = dict(kinto_collection, type="kinto")
    other = kinto_client(kinto_collection)
    other.create_record(id="s1", data={"title": "server", "n": 1, "tags": ["a"]})
    other.create_record(id="s2", data={"title": "doomed", "n": 2})
    store.clear_soup(SOUP)
    assert store.sync_down(target, SOUP)["status"] == "DONE"

    store.local_merge(SOUP, {"id": "s1", "title": "edited offline"})
    store.local_delete_records(SOUP, ["s2"])
    up = store.sync_up(target, SOUP)
    assert up["status"] == "DONE" and up["synced"] == 2 and up["failed"] == 0

    server = {r["id"]: r for r in other.get_records()}
    assert set(server) == {"s1"}
    assert (server["s1"]["title"], server["s1"]["n"], server["s1"]["tags"]) == ("edited offline", 1, ["a"])
    assert [e["id"] for e in entries(store, SOUP)] == ["s1"]


def test_local_read_beside_a_writer(store: tureen.Store) -> None:
    # Reads run beside writes: many threads reading while one merges.
    stop = threading.Event()
    failures: List[BaseException] = []

    def read() -> None:
        try:
            while not stop.is_set():
                (entry,) = store.local_read(SOUP, ["r1"])
                assert entry["title"] == "one" and isinstance(entry["n"], int)
        except BaseException as exc:  # reported below
            failures.append(exc)

    readers = [threading.Thread(target=read) for _ in range(3)]
    for t in readers:
        t.start()
    for i in range(50):
        store.local_merge(SOUP, {"id": "r1", "n": i})
    stop.set()
    for t in readers:
        t.join(WAIT)
    assert failures == []
    assert store.local_read(SOUP, ["r1"])[0]["n"] == 49
