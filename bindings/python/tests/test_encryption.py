"""What lands on disk: encrypted stores, foreign files, a host's own SQLite."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

import tureen

from conftest import PLAINTEXT_MARKERS, assert_no_plaintext, run_python


def sqlite_can_read(path: Path) -> bool:
    """Whether Python's own (plain) SQLite can read the file's schema."""
    connection = sqlite3.connect(str(path))
    try:
        connection.execute("select * from sqlite_master").fetchall()
        return True
    except sqlite3.DatabaseError:
        return False
    finally:
        connection.close()


def assert_encrypted(path: Path) -> None:
    data = path.read_bytes()
    assert len(data) > 0
    assert not data.startswith(b"SQLite format 3")
    assert_no_plaintext(path)
    with pytest.raises(sqlite3.DatabaseError):
        connection = sqlite3.connect(str(path))
        try:
            connection.execute("select * from sqlite_master").fetchall()
        finally:
            connection.close()


def test_encrypted_store_on_disk(store_path: Path) -> None:
    with tureen.Store.open(store_path, key="secret"):
        # While open, neither the file nor its write-ahead log is plaintext.
        assert_no_plaintext(store_path)
    assert_encrypted(store_path)


def test_raw_key_store_on_disk(store_path: Path) -> None:
    tureen.Store.open(store_path, raw_key="ab" * 32).close()
    assert_encrypted(store_path)


def test_unencrypted_store_is_plain_sqlite(store_path: Path) -> None:
    """The control: the markers the tests look for are there without a key."""
    tureen.Store.open(store_path, unencrypted=True).close()
    data = store_path.read_bytes()
    assert data.startswith(b"SQLite format 3\x00")
    for marker in PLAINTEXT_MARKERS:
        assert marker in data
    assert sqlite_can_read(store_path)
    connection = sqlite3.connect(str(store_path))
    try:
        rows = connection.execute("select * from tureen_meta").fetchall()
    finally:
        connection.close()
    assert any(row[0] == "format_version" for row in rows)
    # And with the markers present, the encryption check does fail.
    with pytest.raises(AssertionError):
        assert_encrypted(store_path)


def test_encrypted_store_opened_unencrypted(store_path: Path) -> None:
    tureen.Store.open(store_path, key="secret").close()
    with pytest.raises(tureen.BadKeyError) as info:
        tureen.Store.open(store_path, unencrypted=True)
    assert "encrypted" in info.value.message
    assert_encrypted(store_path)


# ---------------------------------------------------------------------------
# Files that are not Tureen stores


def test_plain_sqlite_file_with_key(tmp_path: Path) -> None:
    path = tmp_path / "plain.db"
    connection = sqlite3.connect(str(path))
    connection.execute("create table notes (body text)")
    connection.execute("insert into notes values ('hello')")
    connection.commit()
    connection.close()
    before = path.read_bytes()
    with pytest.raises(tureen.BadKeyError) as info:
        tureen.Store.open(path, key="k")
    assert "unencrypted" in info.value.message
    assert str(path) in info.value.message
    assert path.read_bytes() == before


def test_random_file_with_key(tmp_path: Path) -> None:
    path = tmp_path / "random.db"
    path.write_bytes(os.urandom(4096))
    before = path.read_bytes()
    with pytest.raises(tureen.BadKeyError) as info:
        tureen.Store.open(path, key="k")
    assert str(path) in info.value.message
    assert path.read_bytes() == before


def test_text_file_with_key(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("x" * 1000)
    with pytest.raises(tureen.BadKeyError) as info:
        tureen.Store.open(path, key="k")
    assert "not a whole number of pages" in info.value.message
    assert "1000" in info.value.message
    assert path.read_text() == "x" * 1000


def test_other_application_database_unencrypted(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    connection = sqlite3.connect(str(path))
    connection.execute("create table t (x)")
    connection.commit()
    connection.close()
    with pytest.raises(tureen.BadKeyError):
        tureen.Store.open(path, unencrypted=True)


# ---------------------------------------------------------------------------
# The host process has its own SQLite loaded first

_CHILD_PYTHON_SQLITE = r"""
import sqlite3, sys
sqlite3.connect(":memory:").execute("select 1").fetchall()
import tureen
with tureen.Store.open(sys.argv[1], key="host-key") as store:
    assert store.size() > 0
print("OK", sqlite3.sqlite_version)
"""

_CHILD_GLOBAL_SQLITE = r"""
import ctypes, sys
ctypes.CDLL("libsqlite3.so.0", mode=ctypes.RTLD_GLOBAL)
import tureen
try:
    with tureen.Store.open(sys.argv[1], key="host-key") as store:
        assert store.size() > 0
except tureen.InternalError as e:
    print("REFUSED", e.message)
    sys.exit(3)
print("OK")
"""


def test_python_sqlite3_loaded_first(store_path: Path) -> None:
    result = run_python(_CHILD_PYTHON_SQLITE, [str(store_path)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("OK")
    assert_encrypted(store_path)
    tureen.Store.open(store_path, key="host-key").close()


def test_system_sqlite_in_global_scope(store_path: Path) -> None:
    result = run_python(_CHILD_GLOBAL_SQLITE, [str(store_path)])
    output = result.stdout + result.stderr
    if result.returncode == 3:
        # A clear refusal is allowed; plaintext is not.
        assert result.stdout.startswith("REFUSED") and result.stdout.strip() != "REFUSED"
        if store_path.exists() and store_path.stat().st_size:
            assert_encrypted(store_path)
        return
    assert result.returncode == 0, output
    assert result.stdout.startswith("OK")
    assert_encrypted(store_path)
    tureen.Store.open(store_path, key="host-key").close()
