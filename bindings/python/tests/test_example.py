"""examples/python/quickstart.py runs and does what it says."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO, run_python


def test_quickstart(tmp_path: Path) -> None:
    store = tmp_path / "qs.db"
    script = (REPO / "examples" / "python" / "quickstart.py").read_text()
    result = run_python(script, ["quickstart.py", str(store)], cwd=str(REPO))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "refused the wrong key" in result.stdout
    assert "removed" in result.stdout
    assert not store.exists()
