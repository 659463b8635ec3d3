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
