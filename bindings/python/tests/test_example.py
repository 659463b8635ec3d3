"""examples/python/quickstart.py runs and does what it says."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO, run_python


def test_quickstart(tmp_path: Path) -> None:
    store = tmp_path / "qs.db"
    script = (REPO / "examples" / "python" / "quickstart.py").read_text()
    result = run_python(script, ["quickstart.py", str(store)], cwd=str(REPO))
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
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
    assert "4 recipes" in out
    assert "removed" in result.stdout
    assert not store.exists()
