"""`make wheel` as a user meets it: a platform wheel with the library inside,
built without writing into the source tree, installed into a fresh venv and
used there with no environment variables (no TUREEN_LIB, no PYTHONPATH), the
`tureen` command included."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def _tree_state() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--ignored", "bindings/python"], cwd=REPO,
                          capture_output=True, text=True, timeout=60).stdout


def test_the_wheel_installs_and_runs_in_a_fresh_venv(tmp_path: Path) -> None:
    before = _tree_state()
    built = subprocess.run(["make", "--no-print-directory", "-s", "wheel"], cwd=REPO, capture_output=True,
                           text=True, timeout=900)
    assert built.returncode == 0, built.stdout + built.stderr
    assert _tree_state() == before  # nothing written into bindings/python
    [wheel] = list((REPO / "build" / "wheel").glob("tureen-*.whl"))
    assert wheel.name.endswith("-py3-none-linux_x86_64.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    clean = {k: v for k, v in os.environ.items()
             if k not in ("TUREEN_LIB", "PYTHONPATH", "LD_LIBRARY_PATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "--no-index", "--no-deps", str(wheel)],
                          env=clean, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    code = (
        "import tureen\n"
        "print(tureen.LIBRARY_PATH)\n"
        "with tureen.Store.open('w.tureen', key='pw', kdf_iter=1000) as s:\n"
        "    s.register_soup('notes', [('title', 'string')])\n"
        "    s.upsert('notes', {'title': 'hello'})\n"
        "    print(s.count(tureen.query.all('notes')))\n"
    )
    run = subprocess.run([str(venv / "bin" / "python"), "-c", code], cwd=tmp_path, env=clean,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    where, count = run.stdout.split()
    assert where.startswith(str(venv)) and where.endswith("/tureen/libtureen.so") and count == "1"
    cli = subprocess.run([str(venv / "bin" / "tureen"), "w.tureen", "--kdf-iter", "1000", "soups"], cwd=tmp_path,
                         env=dict(clean, TUREEN_KEY="pw"), capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0 and "notes" in cli.stdout, cli.stderr
