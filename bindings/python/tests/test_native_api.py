"""Small conveniences a Python user expects: one entry by id, the local
changes waiting for a sync, and removing a store by a name that means one
thing."""

from __future__ import annotations

from pathlib import Path

import pytest

import tureen


def test_get_pending_and_remove_store(tmp_path: Path) -> None:
    path = tmp_path / "n.db"
    with tureen.Store.open(path, raw_key="c1" * 32) as s:
        s.register_soup("notes", [("id", "string")])
        clean = s.upsert("notes", {"id": "a", "text": "synced"})
        mine = s.local_upsert("notes", [{"text": "new"}, {"text": "newer"}])
        assert s.get("notes", clean["_soupEntryId"])["text"] == "synced"
        assert s.get("notes", 999) is None
        assert [e["text"] for e in s.pending("notes")] == ["new", "newer"]
        s.local_delete("notes", [mine[0]["_soupEntryId"]])  # never sent: gone at once
        assert [e["text"] for e in s.pending("notes")] == ["newer"]
        with pytest.raises(tureen.NotFoundError):
            s.pending("nope")
        with pytest.raises(tureen.MisuseError):
            tureen.remove_store(path)  # still open
    tureen.remove_store(path)
    assert not path.exists()
    with pytest.raises(tureen.NotFoundError):
        tureen.remove_store(path)


def test_smart_sql_rows_read_by_column_name(tmp_path: Path) -> None:
    with tureen.Store.open(tmp_path / "r.db", raw_key="c2" * 32) as s:
        s.register_soup("notes", [("title", "string"), ("stars", "integer")])
        s.upsert("notes", [{"title": "tea", "stars": 5}, {"title": "rice", "stars": 3},
                           {"title": "tea", "stars": 4}])
        sql = ("select {notes:title} as Title, count(*), max({notes:stars}) best, {notes:_soup}"
               " from {notes} group by {notes:title} order by {notes:title}")
        rows = s.query(tureen.query.smart(sql))
        first = rows[0]
        assert isinstance(first, tureen.Row)
        assert first.keys() == ["Title", "count(*)", "best", "_soup"]
        # By name (any case, as sqlite3.Row), by index, and still a list.
        assert first["title"] == first["TITLE"] == first[0] == "rice"
        assert first["count(*)"] == 1 and first["best"] == 3
        assert first["_soup"]["title"] == "rice"
        assert rows[1][:3] == ["tea", 2, 5] and rows[1] == list(rows[1])
        assert dict(rows[1].items())["best"] == 5 and rows[1].get("nope", 7) == 7
        with pytest.raises(KeyError, match="no such column"):
            first["nope"]
        # iter_query names its rows too, and so does a selectPaths query.
        assert [r["Title"] for r in s.iter_query(tureen.query.smart(sql))] == ["rice", "tea"]
        spec = dict(tureen.query.all("notes", order_path="stars"), selectPaths=["title", "stars"])
        assert [(r["title"], r["stars"]) for r in s.iter_query(spec)] == [("rice", 3), ("tea", 4), ("tea", 5)]
        # select * cannot be named: by index only, and a clear KeyError.
        star = s.query(tureen.query.smart("select * from {notes}"))[0]
        assert star.keys() == []
        with pytest.raises(KeyError, match="no names"):
            star["title"]


def test_reads_without_sync_fields(tmp_path: Path) -> None:
    with tureen.Store.open(tmp_path / "f.db", raw_key="c3" * 32) as s:
        s.register_soup("notes", [("id", "string")])
        mine = s.local_upsert("notes", {"id": "n1", "text": "hi"})
        eid = mine["_soupEntryId"]
        assert mine["__locally_created__"] is True  # stored with its flags
        plain = {k: v for k, v in mine.items() if k not in tureen.SYNC_FIELDS}
        assert "__local__" in mine and "_soupEntryId" in plain
        assert s.get("notes", eid, sync_fields=False) == plain
        assert s.retrieve("notes", [eid], sync_fields=False) == [plain]
        assert s.query(tureen.query.all("notes"), sync_fields=False) == [plain]
        assert list(s.iter_query(tureen.query.all("notes"), sync_fields=False)) == [plain]
        assert s.pending("notes", sync_fields=False) == [plain]
        row = s.query(tureen.query.smart("select {notes:_soup}, {notes:id} from {notes}"), sync_fields=False)[0]
        assert row == [plain, "n1"] and row["id"] == "n1"
        assert tureen.without_sync_fields(mine) == plain
        # The default keeps them: sync needs them, and so may the app.
        assert s.get("notes", eid) == mine


def test_status_codes_are_an_int_enum(tmp_path: Path) -> None:
    assert tureen.Status.KEY == 4 and tureen.Status.KEY.c_name == "TUREEN_E_KEY"
    assert tureen.Status(0).c_name == "TUREEN_OK"
    with tureen.Store.open(tmp_path / "k.db", key="right"):
        pass
    with pytest.raises(tureen.BadKeyError) as info:
        tureen.Store.open(tmp_path / "k.db", key="wrong")
    assert info.value.code is tureen.Status.KEY and info.value.status is tureen.Status.KEY
    assert repr(info.value.code) == "<Status.KEY: 4>"


def test_store_remove_means_entries_only(tmp_path: Path) -> None:
    # Store.remove used to delete a store file when called on the class and
    # entries when called on a store; now it is the entries' call only.
    path = tmp_path / "x.db"
    with tureen.Store.open(path, raw_key="c4" * 32) as s:
        s.register_soup("notes", [("id", "string")])
        ids = [e["_soupEntryId"] for e in s.upsert("notes", [{"id": "a"}, {"id": "b"}])]
        s.remove("notes", ids[:1])
        assert [e["id"] for e in s.query(tureen.query.all("notes"))] == ["b"]
    with pytest.raises(TypeError):
        tureen.Store.remove(path)  # type: ignore[call-arg]
    assert path.exists()


def test_typed_dicts_name_what_the_library_returns(tmp_path: Path) -> None:
    # The TypedDicts are the contract mypy users rely on: every member the
    # library returns must be declared (and nothing invented).
    from tureen import sync

    def serve(request: dict) -> dict:
        return {"records": [{"id": "r1", "last_modified": 1, "v": 1}], "cursor": None}

    with tureen.Store.open(tmp_path / "t.db", raw_key="c5" * 32) as s:
        s.register_soup("notes", [("id", "string")])
        s.register_target("t", fetch=serve)
        state = s.sync_down(sync.callback_target("t"), "notes", name="down")
        assert set(state) == set(sync.SyncState.__annotations__)
    # (tureen.Conflict is checked against a real conflict in test_conflicts.)
