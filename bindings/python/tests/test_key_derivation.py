"""A passphrase's key is derived once per open by Tureen (PBKDF2-HMAC-SHA1,
as SQLCipher does) and handed to SQLCipher as a raw key with the file's
salt. The file must stay exactly what SQLCipher makes of that passphrase:
the sqlcipher shell opens it with the passphrase, and only with it."""

from __future__ import annotations

import shutil
import subprocess
import threading
from pathlib import Path
from typing import List, Optional

import pytest

import tureen
from tureen import query

PASSPHRASE = "correct horse ü battery 'staple'"

pytestmark = pytest.mark.skipif(shutil.which("sqlcipher") is None, reason="the sqlcipher shell is not installed")


def shell(path: Path, passphrase: str, kdf_iter: int, sql: str) -> subprocess.CompletedProcess:
    quoted = passphrase.replace("'", "''")
    script = "PRAGMA key = '%s';\nPRAGMA kdf_iter = %d;\nPRAGMA cipher_page_size = 4096;\n%s\n" % (quoted, kdf_iter, sql)
    return subprocess.run(["sqlcipher", str(path)], input=script, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("kdf_iter", [None, 1000])
def test_the_shell_opens_a_new_store_with_its_passphrase(tmp_path: Path, kdf_iter: Optional[int]) -> None:
    path = tmp_path / "derived.db"
    with tureen.Store.open(path, key=PASSPHRASE, kdf_iter=kdf_iter) as store:
        store.register_soup("notes", [("title", "string")])
        store.upsert("notes", [{"title": "t%d" % i} for i in range(50)])
    rounds = kdf_iter or 256000
    ok = shell(path, PASSPHRASE, rounds, "SELECT name FROM tureen_soups;")
    assert ok.returncode == 0 and ok.stdout.strip() == "notes", ok.stderr
    wrong = shell(path, PASSPHRASE + "x", rounds, "SELECT name FROM tureen_soups;")
    assert "notes" not in wrong.stdout
    if kdf_iter is not None:  # the round count is part of the key
        other = shell(path, PASSPHRASE, kdf_iter + 1, "SELECT name FROM tureen_soups;")
        assert "notes" not in other.stdout


def test_a_store_written_by_the_shell_side_reopens_and_reads_everywhere(tmp_path: Path) -> None:
    """Reopened, the store derives from the salt on disk; every reader
    connection (several threads reading at once) uses the same key."""
    path = tmp_path / "reopen.db"
    with tureen.Store.open(path, key=PASSPHRASE, kdf_iter=1000) as store:
        store.register_soup("notes", [("title", "string")])
        store.upsert("notes", [{"title": "t%d" % i} for i in range(200)])
    written = shell(path, PASSPHRASE, 1000, "UPDATE tureen_meta SET value = value WHERE key = 'format_version';")
    assert written.returncode == 0, written.stderr

    with tureen.Store.open(path, key=PASSPHRASE, kdf_iter=1000) as store:
        counts: List[int] = []
        errors: List[BaseException] = []

        def read() -> None:
            try:
                for _ in range(20):
                    counts.append(store.count(query.all("notes")))
            except BaseException as exc:  # noqa: B902 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=read) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors and counts == [200] * 120
    with pytest.raises(tureen.BadKeyError):
        tureen.Store.open(path, key=PASSPHRASE, kdf_iter=1001)


def test_the_readme_recipe_for_the_sqlcipher_shell(tmp_path: Path) -> None:
    """README's "With Debian's sqlcipher shell" runs as written (with this
    store's file and passphrase) and shows the soup and its entry."""
    readme = (Path(__file__).resolve().parents[3] / "README.md").read_text()
    section = readme.split("### With Debian's `sqlcipher` shell", 1)[1]
    recipe = section.split("```sh\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "app.tureen"
    with tureen.Store.open(path, key="a phrase, with 'quotes'") as store:
        store.register_soup("notes", [("title", "string")])
        store.upsert("notes", {"title": "tea"})
    script = recipe.replace("app.tureen", str(path)).replace("'the passphrase'", "'a phrase, with ''quotes'''")
    ran = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["1|notes", '1|{"title":"tea"}'], ran.stdout + ran.stderr
    wrong = subprocess.run(["bash", "-c", script.replace("with ''quotes''", "without")],
                           capture_output=True, text=True, timeout=120)
    assert "notes" not in wrong.stdout and "encrypted" in wrong.stderr
    # Read only, as it says: a write is refused and the entry stays.
    write = subprocess.run(["bash", "-c", script.replace("SELECT id, soup FROM TABLE_1;", "DELETE FROM TABLE_1;")],
                           capture_output=True, text=True, timeout=120)
    assert "readonly" in write.stderr.replace(" ", "") or "read-only" in write.stderr, write.stderr
    with tureen.Store.open(path, key="a phrase, with 'quotes'") as store:
        assert store.count(query.all("notes")) == 1
