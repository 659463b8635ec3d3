"""Store.rekey, including a rekey killed at every stage."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

import tureen

from conftest import assert_no_plaintext, child_env
from test_encryption import assert_encrypted, sqlite_can_read


def opens_with(path: Path, **keying: object) -> bool:
    """Whether the store opens with these keying arguments (and is usable)."""
    try:
        store = tureen.Store.open(path, **keying)  # type: ignore[arg-type]
    except tureen.BadKeyError:
        return False
    with store:
        assert store.size() > 0
    return True


def test_rekey_to_new_key(store_path: Path) -> None:
    with tureen.Store.open(store_path, key="old") as store:
        store.rekey(key="new")
        assert store.size() > 0  # the handle stays open and usable
        assert not store.closed
    assert opens_with(store_path, key="new")
    with pytest.raises(tureen.BadKeyError):
        tureen.Store.open(store_path, key="old")
    assert_encrypted(store_path)


def test_rekey_raw_and_kdf_iter(store_path: Path) -> None:
    raw = "5a" * 32
    with tureen.Store.open(store_path, key="old") as store:
        store.rekey(raw_key=raw)
    assert opens_with(store_path, raw_key=raw)
    assert not opens_with(store_path, key="old")
    with tureen.Store.open(store_path, raw_key=raw) as store:
        store.rekey(key="slow", kdf_iter=2000)
    assert opens_with(store_path, key="slow", kdf_iter=2000)
    assert not opens_with(store_path, key="slow")
    assert not opens_with(store_path, raw_key=raw)


def test_rekey_to_unencrypted_and_back(store_path: Path) -> None:
    with tureen.Store.open(store_path, key="old") as store:
        store.rekey(unencrypted=True)
    assert store_path.read_bytes().startswith(b"SQLite format 3\x00")
    assert sqlite_can_read(store_path)
    assert opens_with(store_path, unencrypted=True)
    assert not opens_with(store_path, key="old")

    with tureen.Store.open(store_path, unencrypted=True) as store:
        store.rekey(key="again")
        assert store.size() > 0
    assert_encrypted(store_path)
    assert opens_with(store_path, key="again")
    with pytest.raises(tureen.BadKeyError):
        tureen.Store.open(store_path, unencrypted=True)


def test_rekey_with_second_handle_is_misuse(store_path: Path) -> None:
    with tureen.Store.open(store_path, key="old") as first:
        with tureen.Store.open(store_path, key="old") as second:
            with pytest.raises(tureen.MisuseError) as info:
                first.rekey(key="new")
            assert str(store_path) in info.value.message
            assert second.size() > 0
        assert first.size() > 0  # still open, still the old key
    assert opens_with(store_path, key="old")
    assert not opens_with(store_path, key="new")


@pytest.mark.parametrize(
    "keying",
    [{}, {"key": "a", "raw_key": "ab" * 32}, {"raw_key": "xyz"}, {"key": ""}, {"key": "a", "kdf_iter": 0}],
)
def test_bad_rekey_keeps_old_key(store_path: Path, keying: Dict[str, object]) -> None:
    with tureen.Store.open(store_path, key="old", kdf_iter=1000) as store:
        with pytest.raises(tureen.InvalidError):
            store.rekey(**keying)  # type: ignore[arg-type]
        assert store.size() > 0
    assert opens_with(store_path, key="old", kdf_iter=1000)


def test_rekey_leaves_no_copy_behind(store_path: Path) -> None:
    with tureen.Store.open(store_path, raw_key="11" * 32) as store:
        store.rekey(raw_key="22" * 32)
    assert sorted(os.listdir(store_path.parent)) == [store_path.name]


# ---------------------------------------------------------------------------
# A rekey killed with SIGKILL

_REKEY_CHILD = r"""
import sys
import tureen
path, old, new = sys.argv[1:4]
store = tureen.Store.open(path, key=old)
print("ready", flush=True)
sys.stdin.readline()
store.rekey(key=new)
print("done", flush=True)
store.close()
"""


def _which_key_opens(path: Path, keys: Tuple[str, str]) -> List[str]:
    """Tries every key at once (each open costs a key derivation); returns
    those that opened the store, checking each opened store is usable."""
    results: Dict[str, Optional[BaseException]] = {}

    def attempt(key: str) -> None:
        try:
            with tureen.Store.open(path, key=key) as store:
                assert store.size() > 0
            results[key] = None
        except BaseException as e:  # noqa: B902 - reported below
            results[key] = e

    threads = [threading.Thread(target=attempt, args=(k,)) for k in keys]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for key, error in results.items():
        if error is not None and not isinstance(error, tureen.BadKeyError):
            raise AssertionError("opening with %r: %r" % (key, error))
    return [k for k in keys if results[k] is None]


def _killed_rekey(path: Path, old: str, new: str, delay: Optional[float]) -> None:
    """Runs a child that rekeys ``path`` from ``old`` to ``new`` and SIGKILLs
    it ``delay`` seconds after the rekey starts (None: once it has finished,
    before it closes the store)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _REKEY_CHILD, str(path), old, new],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=child_env(),
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        line = proc.stdout.readline()
        assert line.strip() == "ready", line + proc.stderr.read()  # type: ignore[union-attr]
        proc.stdin.write("go\n")
        proc.stdin.flush()
        if delay is None:
            assert proc.stdout.readline().strip() == "done"
        else:
            time.sleep(delay)
        proc.kill()
    finally:
        proc.kill()
        proc.communicate(timeout=30)




def _leftovers(path: Path) -> "set[str]":
    """Files beside the closed store other than the store, its WAL and shm,
    and a rollback journal that is not hot (empty
    or zeroed header: SQLite itself ignores and keeps such a file)."""
    extra = set()
    for name in os.listdir(path.parent):
        if name in (path.name, path.name + "-wal", path.name + "-shm"):
            continue
        if name == path.name + "-journal":
            head = (path.parent / name).read_bytes()[:1]
            if head in (b"", b"\0"):
                continue
        extra.add(name)
    return extra


def test_open_removes_all_rekey_leftovers(store_path: Path) -> None:
    tureen.Store.open(store_path, raw_key="11" * 32).close()
    # What a rekey killed while checking its copy leaves (observed: an empty
    # -wal and a 32 KiB -shm beside the copy).
    for suffix, data in (
        ("-tureen-rekey", b"\0" * 4096),
        ("-tureen-rekey-journal", b""),
        ("-tureen-rekey-wal", b""),
        ("-tureen-rekey-shm", b"\0" * 32768),
    ):
        Path(str(store_path) + suffix).write_bytes(data)
    tureen.Store.open(store_path, raw_key="11" * 32).close()
    assert sorted(os.listdir(store_path.parent)) == [store_path.name]


def test_rekey_killed_at_any_moment(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    keys = ("old", "new")
    with tureen.Store.open(path, key="old") as store:
        started = time.monotonic()
        store.rekey(key="new")
        duration = time.monotonic() - started
    current = "new"

    # ~12 kill times spread over the rekey (and a little past it), plus one
    # kill right after the rekey returned.
    span = min(max(duration * 1.2, 0.3), 1.0)
    delays: List[Optional[float]] = [span * i / 11 for i in range(12)]
    delays.append(None)
    outcomes: List[str] = []
    for delay in delays:
        target = keys[1] if current == keys[0] else keys[0]
        _killed_rekey(path, current, target, delay)

        opened = _which_key_opens(path, keys)
        assert len(opened) == 1, "after a kill at %s s, keys that open: %s" % (delay, opened)
        outcomes.append("unchanged" if opened[0] == current else "changed")
        current = opened[0]

        # Reopening works, and the unfinished copy is gone.
        with tureen.Store.open(path, key=current) as store:
            assert store.size() > 0
        assert _leftovers(path) == set(), "after a kill at %s s" % delay
        assert_no_plaintext(path)

    assert outcomes[0] == "unchanged", outcomes  # killed as the rekey began
    assert outcomes[-1] == "changed", outcomes  # killed after it returned


def test_rekey_with_stray_companions_of_an_old_copy(store_path: Path) -> None:
    """Leftovers of an earlier killed rekey must not leak into the next copy."""
    with tureen.Store.open(store_path, raw_key="11" * 32) as store:
        Path(str(store_path) + "-tureen-rekey-wal").write_bytes(b"")
        Path(str(store_path) + "-tureen-rekey-shm").write_bytes(os.urandom(32768))
        store.rekey(raw_key="22" * 32)
        assert store.size() > 0
    assert opens_with(store_path, raw_key="22" * 32)
    assert not opens_with(store_path, raw_key="11" * 32)
    assert sorted(os.listdir(store_path.parent)) == [store_path.name]


def test_rekey_leaves_blob_files_as_they_are(store_path: Path) -> None:
    """The blob key lives inside the store, re-encrypted with it: a rekey
    (to a new key, to none, and back) rewrites no blob file, and every blob
    still reads."""
    data = os.urandom(3 << 20)
    blob_dir = Path(str(store_path) + ".blobs")
    with tureen.Store.open(store_path, key="old") as store:
        ref = store.blob_put(data)
        before = {p.name: (p.stat().st_ino, p.read_bytes()) for p in blob_dir.iterdir()}
        store.rekey(key="new")
        assert store.blob_get(ref) == data
        store.rekey(unencrypted=True)
        assert store.blob_get(ref) == data
    with tureen.Store.open(store_path, unencrypted=True) as store:
        assert store.blob_get(ref) == data
        store.rekey(raw_key="33" * 32)
    with tureen.Store.open(store_path, raw_key="33" * 32) as store:
        assert store.blob_get(ref) == data
    assert {p.name: (p.stat().st_ino, p.read_bytes()) for p in blob_dir.iterdir()} == before


def test_rekey_after_the_working_directory_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store opened by a relative path is rekeyed where it was opened,
    though the process has moved to another directory since: the copy used
    to be made, and renamed, relative to the new one."""
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    home.mkdir()
    elsewhere.mkdir()
    monkeypatch.chdir(home)
    with tureen.Store.open("s.db", key="old") as store:
        store.register_soup("items", [("id", "string")])
        entry = store.upsert("items", {"id": "a"})
        os.chdir(elsewhere)
        store.rekey(key="new")
        got = store.get("items", entry["_soupEntryId"])
        assert got is not None and got["id"] == "a"
    assert sorted(os.listdir(elsewhere)) == []
    assert opens_with(home / "s.db", key="new")
    with pytest.raises(tureen.BadKeyError):
        tureen.Store.open(home / "s.db", key="old")
