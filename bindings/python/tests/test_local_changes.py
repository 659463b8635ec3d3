"""Local changes: Store.local_upsert / local_delete set SmartSync's flags, and a
sync up to Kinto creates, updates and deletes what they marked."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

import tureen
from sync_support import FLAGS, entries, kinto_client, kinto_fields

RAW = "6b" * 32  # a raw key: no KDF, fast to open
SOUP = "notes"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    with tureen.Store.open(tmp_path / "local.db", raw_key=RAW) as s:
        s.register_soup(SOUP, [("id", "string"), ("title", "string")])
        yield s


def flags(entry: Dict[str, Any]) -> Dict[str, Any]:
    return {name: entry.get(name) for name in FLAGS}


# ---------------------------------------------------------------------------
# flags, without a server


def test_new_entry_gets_a_client_id_and_created_flags(store: tureen.Store) -> None:
    stored = store.local_upsert(SOUP, {"title": "tea"})
    assert isinstance(stored, dict)
    assert stored["title"] == "tea" and isinstance(stored["_soupEntryId"], int)
    assert flags(stored) == {
        "__local__": True,
        "__locally_created__": True,
        "__locally_updated__": False,
        "__locally_deleted__": False,
    }
    uuid.UUID(stored["id"])  # a random UUID
    # Several in one call: a list back, each with its own id.
    many = store.local_upsert(SOUP, [{"title": "a"}, {"title": "b", "id": "mine-1"}])
    assert isinstance(many, list) and len(many) == 2
    assert many[1]["id"] == "mine-1"  # an id given is kept
    assert len({stored["id"], many[0]["id"], many[1]["id"]}) == 3
    assert all(e["__locally_created__"] is True for e in many)
    assert [e["_soupEntryId"] for e in entries(store, SOUP)] == [
        stored["_soupEntryId"],
        many[0]["_soupEntryId"],
        many[1]["_soupEntryId"],
    ]


def test_update_of_a_clean_entry_marks_it_updated(store: tureen.Store) -> None:
    # As sync down stores it: all flags false.
    clean = store.upsert(
        SOUP,
        {"id": "r1", "title": "old", **{name: False for name in FLAGS}},
    )
    by_id = store.local_upsert(SOUP, {"id": "r1", "title": "new"})
    assert by_id["_soupEntryId"] == clean["_soupEntryId"]  # matched on "id", not inserted
    assert by_id["title"] == "new"
    assert flags(by_id) == {
        "__local__": True,
        "__locally_created__": False,
        "__locally_updated__": True,
        "__locally_deleted__": False,
    }
    by_entry_id = store.local_upsert(
        SOUP, {"_soupEntryId": clean["_soupEntryId"], "id": "r1", "title": "newer"}
    )
    assert by_entry_id["_soupEntryId"] == clean["_soupEntryId"]
    assert by_entry_id["__locally_updated__"] is True
    assert len(entries(store, SOUP)) == 1


def test_created_then_updated_stays_created(store: tureen.Store) -> None:
    created = store.local_upsert(SOUP, {"title": "draft"})
    again = store.local_upsert(SOUP, {"id": created["id"], "title": "final"})
    assert again["_soupEntryId"] == created["_soupEntryId"]
    assert again["__locally_created__"] is True and again["__locally_updated__"] is False
    assert again["title"] == "final"


def test_id_field(store: tureen.Store) -> None:
    store.register_soup("items", [("uid", "string")])
    first = store.local_upsert("items", {"uid": "u1", "n": 1}, id_field="uid")
    second = store.local_upsert("items", {"uid": "u1", "n": 2}, id_field="uid")
    assert second["_soupEntryId"] == first["_soupEntryId"]
    generated = store.local_upsert("items", {"n": 3}, id_field="uid")
    uuid.UUID(generated["uid"])
    assert "id" not in generated


def test_local_delete(store: tureen.Store) -> None:
    clean = store.upsert(SOUP, {"id": "r1", "title": "kept", **{name: False for name in FLAGS}})
    created = store.local_upsert(SOUP, {"title": "never synced"})
    store.local_delete(SOUP, [clean["_soupEntryId"], created["_soupEntryId"]])
    left = entries(store, SOUP)
    # Created locally and never synced: gone at once. Synced: marked, kept
    # until a sync up deletes it on the server.
    assert [e["_soupEntryId"] for e in left] == [clean["_soupEntryId"]]
    assert left[0]["__local__"] is True and left[0]["__locally_deleted__"] is True
    assert left[0]["title"] == "kept"


def test_local_delete_of_an_id_given_twice_deletes_it_once(store: tureen.Store) -> None:
    # Removed at its first mention, a never-synced entry failed the call as
    # unknown at its second; each mention of a synced one wrote it again.
    clean = store.upsert(SOUP, {"id": "r1", "title": "kept", **{name: False for name in FLAGS}})
    created = store.local_upsert(SOUP, {"title": "never synced"})
    store.local_delete(SOUP, [created["_soupEntryId"], clean["_soupEntryId"]] * 3)
    (left,) = entries(store, SOUP)
    assert left["_soupEntryId"] == clean["_soupEntryId"] and left["__locally_deleted__"] is True


def test_local_delete_unknown_id_changes_nothing(store: tureen.Store) -> None:
    a = store.upsert(SOUP, {"id": "a", **{name: False for name in FLAGS}})
    with pytest.raises(tureen.NotFoundError):
        store.local_delete(SOUP, [a["_soupEntryId"], 999999])
    assert entries(store, SOUP)[0]["__locally_deleted__"] is False
    with pytest.raises(tureen.NotFoundError):
        store.local_delete("no_such_soup", [a["_soupEntryId"]])
    with pytest.raises(TypeError):
        store.local_delete(SOUP, a["_soupEntryId"])  # type: ignore[arg-type]


def test_local_upsert_answers_each_write_as_it_stored_it(store: tureen.Store) -> None:
    # A record named 200 times, then once with 100 kB: each write is
    # answered as it stored it, not the last one 201 times (20 MB; a batch
    # of a million small writes would have asked for 100 GB).
    first = store.local_upsert(SOUP, {"id": "r"})
    batch = [{"id": "r", "n": i} for i in range(200)] + [{"id": "r", "text": "x" * 100_000}]
    stored = store.local_upsert(SOUP, batch)
    assert isinstance(stored, list) and len(stored) == 201
    assert all(e["_soupEntryId"] == first["_soupEntryId"] for e in stored)
    assert [e.get("n") for e in stored[:200]] == list(range(200))
    assert all("text" not in e for e in stored[:200])
    assert stored[-1]["text"] == "x" * 100_000
    (kept,) = entries(store, SOUP)
    assert kept["text"] == "x" * 100_000 and "n" not in kept


def test_local_upsert_errors(store: tureen.Store) -> None:
    with pytest.raises(tureen.NotFoundError):
        store.local_upsert("no_such_soup", {"title": "x"})
    with pytest.raises(tureen.InvalidError):
        store.local_upsert(SOUP, [{"title": "ok"}, 3])  # type: ignore[list-item]
    assert entries(store, SOUP) == []  # an array is one transaction
    with pytest.raises(TypeError):
        store.local_upsert(SOUP, "not entries")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        store.local_upsert(SOUP, {"x": float("nan")})


# ---------------------------------------------------------------------------
# then sync up


def test_local_changes_reach_kinto(store: tureen.Store, kinto_collection: Dict[str, Any]) -> None:
    target = dict(kinto_collection, type="kinto")
    other = kinto_client(kinto_collection)
    for i in range(3):
        other.create_record(id="s%d" % i, data={"title": "server %d" % i})
    down = store.sync_down(target, SOUP)
    assert down["status"] == "DONE"
    by_id = {e["id"]: e for e in entries(store, SOUP)}
    assert set(by_id) == {"s0", "s1", "s2"}

    created = store.local_upsert(SOUP, {"title": "made offline"})
    store.local_upsert(SOUP, {"id": "s1", "title": "edited offline"})
    store.local_delete(SOUP, [by_id["s2"]["_soupEntryId"]])

    up = store.sync_up(target, SOUP)
    assert up["status"] == "DONE" and up["type"] == "syncUp"
    assert up["synced"] == 3 and up["failed"] == 0 and up["conflicts"] == 0
    assert up["failedIds"] == [] and up["conflictIds"] == []

    server = {r["id"]: r for r in other.get_records()}
    assert set(server) == {"s0", "s1", created["id"]}
    assert server[created["id"]]["title"] == "made offline"
    assert server["s1"]["title"] == "edited offline"
    for record in server.values():
        # Nothing of Tureen's own bookkeeping reaches the server.
        assert not any(k.startswith("__") or k.startswith("_soup") for k in record), record

    local = {e["id"]: e for e in entries(store, SOUP)}
    assert set(local) == {"s0", "s1", created["id"]}  # the deleted one is gone locally too
    for entry in local.values():
        assert flags(entry) == {name: False for name in FLAGS}, entry
        assert "__last_error__" not in entry or entry["__last_error__"] in (None, "")
        assert kinto_fields(entry) == kinto_fields(server[entry["id"]])

    # Nothing left to send: a resync of the sync up sends nothing.
    again = store.resync(up["_soupEntryId"])
    assert again["status"] == "DONE" and again["synced"] == 0
