"""examples/python/quickstart.py runs and does what it says."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO, run_python
from servers import KintoServer


def test_quickstart(tmp_path: Path) -> None:
    store = tmp_path / "qs.db"
    script = (REPO / "examples" / "python" / "quickstart.py").read_text()
    result = run_python(script, [str(store)], cwd=str(REPO))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "opened  %s" % store in out  # the path given, not a default
    assert "refused the wrong key" in out
    assert "soups: ['recipes']" in out
    assert "updated by external id: Gazpacho andaluz (id 3)" in out
    assert "inserted by external id: Ramen (id 6)" in out
    assert "exact minutes=15: ['Miso soup']" in out
    assert "(5 entries, pages of 2)" in out
    listed = [line.split("min", 1)[1].strip() for line in out.splitlines() if " min  " in line]
    assert listed == ["Pot-au-feu", "Pho", "Borscht", "Ramen", "Gazpacho andaluz"]
    assert "('tags', 'full_text')" in out
    assert "like tags %cold%: ['Gazpacho andaluz']" in out
    assert "match tags 'japanese OR spanish': ['Gazpacho andaluz', 'Miso soup']" in out
    assert "smart sql, under an hour: [['Miso soup', 15], ['Gazpacho andaluz', 25]]" in out
    assert "the quickest: Miso soup, 15 minutes" in out
    assert "attached sha256-" in out
    assert "read back: b'pretend these are the bytes of a JPEG'" in out
    # The recipe with the photo survives the rekey with the other four.
    assert "5 recipes" in out
    assert "removed" in result.stdout
    assert not store.exists()


def test_sync_quickstart(tmp_path: Path, kinto: KintoServer) -> None:
    """examples/python/sync_quickstart.py against a real Kinto: both devices
    end with the same records, after a merge and a resolved conflict."""
    script = (REPO / "examples" / "python" / "sync_quickstart.py").read_text()
    result = run_python(script, [kinto.url, str(tmp_path)], cwd=str(REPO))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "office      sync up (60 new items)       DONE: synced 60, conflicts 0, 6 requests" in out
    assert "till        sync down                    DONE: synced 60" in out
    assert "till        item-01 on the server now: {'id': 'item-01', 'name': 'item 1', 'price': 199, 'stock': 7}" in out
    assert "till        resync up (price clash)      FAILED: synced 0, conflicts 1" in out
    assert "conflict on item-02: base price 102, theirs 250, yours 240; conflicting: ['price']" in out
    assert out.rstrip().endswith("both devices agree")


def test_progress_example(tmp_path: Path, kinto: KintoServer) -> None:
    """examples/python/progress.py: the bar goes on from where the stopped
    sync left off, and knows the total."""
    script = (REPO / "examples" / "python" / "progress.py").read_text()
    result = run_python(script, [kinto.url, str(tmp_path)], cwd=str(REPO))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "stopped at 300 of 600 records (STOPPED)" in out
    assert "resumed to 600 of 600 records (DONE)" in out
    assert "600 records here" in out
