"""Finding the library the way an installed package must: a copy of the
package outside the repository (so the repository's build is not found),
with TUREEN_LIB unset, loads the library that `make install` put in a
prefix, through LD_LIBRARY_PATH; and says where it looked when there is
none."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO

CODE = "import tureen; print(tureen.LIBRARY_PATH); print(tureen.version())"


def _env(**extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("TUREEN_LIB", "PYTHONPATH", "LD_LIBRARY_PATH")}
    env.update(extra)
    return env


def test_an_installed_library_is_found_without_tureen_lib(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    done = subprocess.run(["make", "--no-print-directory", "-s", "install", "PREFIX=%s" % prefix],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    site = tmp_path / "site"
    shutil.copytree(REPO / "bindings" / "python" / "tureen", site / "tureen",
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    run = subprocess.run([sys.executable, "-c", CODE], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         env=_env(PYTHONPATH=str(site), LD_LIBRARY_PATH=str(prefix / "lib")))
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == str(prefix / "lib" / "libtureen.so")
    # Nowhere to find it: the error lists every place it looked.
    missing = subprocess.run([sys.executable, "-c", CODE], cwd=tmp_path, capture_output=True, text=True,
                             timeout=60, env=_env(PYTHONPATH=str(site)))
    assert missing.returncode != 0
    assert "LibraryNotFoundError" in missing.stderr and "package directory" in missing.stderr
    assert "make install" in missing.stderr
