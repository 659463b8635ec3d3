"""tureen.Store: opening, keys, options, closing, size, remove."""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pytest

import tureen
from tureen import _library

from conftest import child_env, run_python

RAW = "0123456789abcdef" * 4  # 64 hex digits
OTHER_RAW = "f" * 64


def c_open(path: Path, options_json: bytes) -> "tuple[int, str]":
    """tureen_store_open called directly: (status, message); closes on success."""
    handle = _library.StoreHandle()
    rc = _library.lib.tureen_store_open(str(path).encode(), options_json, ctypes.byref(handle))
    message = _library.errmsg()
    if rc == 0:
        assert handle, "TUREEN_OK without a handle"
        assert _library.lib.tureen_store_close(handle) == 0
    else:
        assert not handle, "*out must be NULL on error"
    return rc, message


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------------
# open / close / reopen


def test_open_close_reopen(store_path: Path) -> None:
    store = tureen.Store.open(store_path, key="secret")
    assert store_path.exists()
    assert not store.closed and store.path == str(store_path)
    assert "open" in repr(store) and str(store_path) in repr(store)
    store.close()
    assert store.closed and "closed" in repr(store)
    store.close()  # idempotent

    again = tureen.Store.open(str(store_path), "secret")
    assert again.size() > 0
    again.close()


def test_context_manager_closes(store_path: Path) -> None:
    with tureen.Store.open(store_path, key="secret") as store:
        assert isinstance(store, tureen.Store)
        assert store.size() > 0
    assert store.closed
    # The library agrees it is closed: removing an open store would be MISUSE.
    tureen.remove_store(store_path)
    assert not store_path.exists()


def test_context_manager_closes_on_exception(store_path: Path) -> None:
    with pytest.raises(ValueError):
        with tureen.Store.open(store_path, key="secret") as store:
            raise ValueError("boom")
    assert store.closed
    tureen.remove_store(store_path)


def test_same_file_twice_in_one_process(store_path: Path) -> None:
    with tureen.Store.open(store_path, raw_key=RAW) as a:
        with tureen.Store.open(store_path, raw_key=RAW) as b:
            assert a.size() == b.size() > 0


def test_create_false(store_path: Path) -> None:
    with pytest.raises(tureen.NotFoundError) as info:
        tureen.Store.open(store_path, key="k", create=False)
    assert str(store_path) in info.value.message
    assert not store_path.exists()
    tureen.Store.open(store_path, key="k").close()
    tureen.Store.open(store_path, key="k", create=False).close()


def test_pathlike_bytes_and_unicode_paths(tmp_path: Path) -> None:
    path = tmp_path / "dür 🔑 it's.db"
    with tureen.Store.open(path, raw_key=RAW) as store:
        assert store.path == str(path)
    assert os.listdir(tmp_path) == [path.name]
    tureen.Store.open(os.fsencode(path), raw_key=RAW).close()
    tureen.remove_store(path)
    assert not path.exists()


def test_nul_in_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(tureen.InvalidError):
        tureen.Store.open(str(tmp_path / "a\x00b.db"), key="k")
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------
# keys


def test_wrong_key_then_right_key(store_path: Path) -> None:
    tureen.Store.open(store_path, key="right").close()
    before = digest(store_path)
    with pytest.raises(tureen.BadKeyError) as info:
        tureen.Store.open(store_path, key="wrong")
    assert info.value.code == 4
    assert "key" in info.value.message
    assert str(store_path) in info.value.message
    assert digest(store_path) == before, "a wrong-key open changed the file"
    with tureen.Store.open(store_path, key="right") as store:
        assert store.size() > 0


def test_no_key_is_invalid_and_creates_nothing(store_path: Path) -> None:
    with pytest.raises(tureen.InvalidError) as info:
        tureen.Store.open(store_path)
    assert "key" in info.value.message
    rc, message = c_open(store_path, b"{}")
    assert rc == 2 and "key" in message
    assert not store_path.exists(), "a store was created without a key"


def test_several_keys_are_invalid(store_path: Path) -> None:
    with pytest.raises(tureen.InvalidError):
        tureen.Store.open(store_path, key="k", raw_key=RAW)
    with pytest.raises(tureen.InvalidError):
        tureen.Store.open(store_path, key="k", unencrypted=True)
    assert not store_path.exists()


def test_raw_key(store_path: Path) -> None:
    tureen.Store.open(store_path, raw_key=RAW).close()
    tureen.Store.open(store_path, raw_key=RAW.upper()).close()  # hex is hex
    tureen.Store.open(store_path, raw_key=bytes.fromhex(RAW)).close()  # 32 bytes
    with pytest.raises(tureen.BadKeyError):
        tureen.Store.open(store_path, raw_key=OTHER_RAW)
    with pytest.raises(tureen.BadKeyError):
        tureen.Store.open(store_path, key=RAW)  # a passphrase is not a raw key


@pytest.mark.parametrize(
    "raw_key",
    [RAW[:63], RAW + "0", "g" * 64, "0x" + RAW[:62], "", " " + RAW[:63], RAW[:62] + "é"],
)
def test_invalid_raw_key(store_path: Path, raw_key: str) -> None:
    with pytest.raises(tureen.InvalidError) as info:
        tureen.Store.open(store_path, raw_key=raw_key)
    assert "raw_key" in info.value.message
    assert not store_path.exists()


def test_unknown_option_is_invalid(store_path: Path) -> None:
    rc, message = c_open(store_path, b'{"key":"a","kdf_itr":5}')
    assert rc == 2
    assert "kdf_itr" in message
    assert not store_path.exists()


@pytest.mark.parametrize(
    "options",
    [
        {"key": ""},
        {"key": 5},
        {"key": "k", "kdf_iter": 0},
        {"key": "k", "kdf_iter": "5"},
        {"key": "k", "busy_timeout_ms": -1},
        {"key": "k", "create": "no"},
        {"unencrypted": False},
    ],
)
def test_bad_option_values_are_invalid(store_path: Path, options: dict) -> None:
    rc, message = c_open(store_path, json.dumps(options).encode())
    assert rc == 2, message
    assert not store_path.exists()


@pytest.mark.parametrize("options_json", [b"[]", b"", b"{", b'{"key": "\xff"}', b'"key"'])
def test_malformed_options_are_invalid(store_path: Path, options_json: bytes) -> None:
    rc, _ = c_open(store_path, options_json)
    assert rc == 2


def test_kdf_iter_is_part_of_the_key(store_path: Path) -> None:
    tureen.Store.open(store_path, key="k", kdf_iter=1000).close()
    tureen.Store.open(store_path, key="k", kdf_iter=1000).close()
    with pytest.raises(tureen.BadKeyError):
        tureen.Store.open(store_path, key="k")  # default count: another key
    with pytest.raises(tureen.InvalidError):
        tureen.Store.open(store_path, key="k", kdf_iter=0)


def test_busy_timeout_option(store_path: Path) -> None:
    tureen.Store.open(store_path, raw_key=RAW, busy_timeout_ms=0).close()
    with pytest.raises(tureen.InvalidError):
        tureen.Store.open(store_path, raw_key=RAW, busy_timeout_ms=-5)


def test_key_with_json_special_and_unicode_characters(store_path: Path) -> None:
    key = 'clé 🔑 "quoted" \\ back\\slash \n\t and , } more'
    tureen.Store.open(store_path, key=key, kdf_iter=1000).close()
    # The binding writes ASCII JSON (\u escapes); the library must decode it to
    # the same key as raw UTF-8 JSON.
    raw_json = json.dumps({"key": key, "kdf_iter": 1000}, ensure_ascii=False).encode("utf-8")
    assert c_open(store_path, raw_json) == (0, "")
    for near in ("clé 🔑", key[:-1], key + " "):
        with pytest.raises(tureen.BadKeyError):
            tureen.Store.open(store_path, key=near, kdf_iter=1000)


def test_key_with_nul_character(store_path: Path) -> None:
    # JSON can carry U+0000; the whole key counts, not a C string prefix.
    tureen.Store.open(store_path, key="a\x00b", kdf_iter=1000).close()
    with pytest.raises(tureen.BadKeyError):
        tureen.Store.open(store_path, key="a", kdf_iter=1000)
    tureen.Store.open(store_path, key="a\x00b", kdf_iter=1000).close()


def test_key_type_is_checked(store_path: Path) -> None:
    with pytest.raises(tureen.InvalidError):
        tureen.Store.open(store_path, key=12345)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# file-system errors


def test_missing_directory_is_disk_error(tmp_path: Path) -> None:
    path = tmp_path / "no-such-dir" / "store.db"
    with pytest.raises(tureen.DiskError) as info:
        tureen.Store.open(path, key="k")
    assert info.value.code == 6
    assert str(path) in info.value.message
    assert not path.parent.exists()


_READ_ONLY_CHILD = r"""
import sys
try:
    import tureen
except ImportError as e:
    print("IMPORT", e); sys.exit(77)
path = sys.argv[1]
try:
    tureen.Store.open(path, key="k")
except tureen.DiskError as e:
    print("DISK", e.message); sys.exit(0)
except tureen.Error as e:
    print("OTHER", type(e).__name__, e.message); sys.exit(1)
print("OPENED"); sys.exit(1)
"""


def test_read_only_directory_is_disk_error() -> None:
    # tmp_path is private to root; use a directory anyone can reach.
    base = tempfile.mkdtemp(prefix="tureen-ro-")
    os.chmod(base, 0o555)
    path = os.path.join(base, "store.db")
    try:
        if os.geteuid() != 0:
            with pytest.raises(tureen.DiskError) as info:
                tureen.Store.open(path, key="k")
            assert path in info.value.message
            return
        # root writes anywhere: run the open as "nobody" in a child process.
        ran = None
        for python in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
            if not python:
                continue
            try:
                ran = run_python(
                    _READ_ONLY_CHILD, [path], executable=python, cwd="/",
                    user=65534, group=65534, timeout=30,
                )
            except PermissionError:
                continue
            if ran.returncode == 77:
                continue
            break
        if ran is None or ran.returncode == 77:
            pytest.skip(
                "running as root, for whom chmod does not block writes, and no "
                "Python readable by 'nobody' can import tureen to test as another user"
            )
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert ran.stdout.startswith("DISK") and path in ran.stdout, ran.stdout
        assert not os.path.exists(path)
    finally:
        os.chmod(base, 0o755)
        shutil.rmtree(base)


# ---------------------------------------------------------------------------
# misuse


def test_closed_store_methods_raise_misuse(store_path: Path) -> None:
    store = tureen.Store.open(store_path, raw_key=RAW)
    store.close()
    with pytest.raises(tureen.MisuseError):
        store.size()
    with pytest.raises(tureen.MisuseError):
        store.rekey(key="new")
    store.close()  # still nothing
    tureen.Store.open(store_path, raw_key=RAW).close()  # key unchanged


def test_library_rejects_closed_and_null_handles(store_path: Path) -> None:
    lib = _library.lib
    handle = _library.StoreHandle()
    assert lib.tureen_store_open(
        str(store_path).encode(), b'{"raw_key": "%s"}' % RAW.encode(), ctypes.byref(handle)
    ) == 0
    assert lib.tureen_store_close(handle) == 0
    size = ctypes.c_int64()
    assert lib.tureen_store_size(handle, ctypes.byref(size)) == 1
    assert lib.tureen_store_close(handle) == 1
    assert lib.tureen_store_close(None) == 1
    assert lib.tureen_store_size(None, ctypes.byref(size)) == 1
    assert lib.tureen_store_remove(None) == 1
    assert lib.tureen_store_open(str(store_path).encode(), b"{}", None) == 1
    assert _library.errmsg() != ""


def test_remove_open_store_is_misuse(store_path: Path) -> None:
    with tureen.Store.open(store_path, raw_key=RAW):
        with pytest.raises(tureen.MisuseError) as info:
            tureen.remove_store(store_path)
        assert str(store_path) in info.value.message
        assert store_path.exists()
    tureen.remove_store(store_path)
    assert not store_path.exists()


def test_remove_missing_is_not_found(tmp_path: Path) -> None:
    path = tmp_path / "absent.db"
    with pytest.raises(tureen.NotFoundError) as info:
        tureen.remove_store(path)
    assert str(path) in info.value.message


def test_remove_deletes_companions(store_path: Path) -> None:
    companions = [Path(str(store_path) + s) for s in ("-wal", "-shm", "-journal")]
    with tureen.Store.open(store_path, raw_key=RAW):
        # WAL mode: the -wal and -shm files exist while the store is open.
        assert companions[0].exists() and companions[1].exists()
        saved = {p: p.read_bytes() for p in companions[:2]}
    # Leave companions behind as a crashed process would.
    for p, data in saved.items():
        p.write_bytes(data)
    companions[2].write_bytes(b"\0" * 512)
    tureen.remove_store(store_path)
    assert not store_path.exists()
    assert [p for p in companions if p.exists()] == []
    assert os.listdir(store_path.parent) == []


def test_remove_missing_file_still_removes_strays(store_path: Path) -> None:
    strays = [Path(str(store_path) + s) for s in ("-wal", "-shm", "-journal")]
    for p in strays:
        p.write_bytes(b"x")
    with pytest.raises(tureen.NotFoundError):
        tureen.remove_store(store_path)
    assert [p for p in strays if p.exists()] == []


def test_garbage_collected_store_is_closed(store_path: Path) -> None:
    store = tureen.Store.open(store_path, raw_key=RAW)
    del store
    import gc

    gc.collect()
    tureen.remove_store(store_path)  # MisuseError if it were still open


def test_store_cannot_be_built_directly() -> None:
    with pytest.raises(TypeError):
        tureen.Store(None, "x")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# size


def test_size(store_path: Path) -> None:
    with tureen.Store.open(store_path, raw_key=RAW) as store:
        size = store.size()
        assert type(size) is int and size > 0
        wal = Path(str(store_path) + "-wal")
        on_disk = store_path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
        assert size == on_disk


def test_close_waits_for_a_call_in_progress(store_path: Path) -> None:
    import threading
    import time

    store = tureen.Store.open(store_path, key="old")
    outcome: list = []
    times: dict = {}

    def rekey() -> None:
        try:
            times["rekey_start"] = time.monotonic()
            store.rekey(key="new")  # key derivations: a few tenths of a second
            times["rekey_end"] = time.monotonic()
            outcome.append("ok")
        except BaseException as e:  # reported by the assertion below
            outcome.append(e)

    thread = threading.Thread(target=rekey)
    thread.start()
    time.sleep(0.05)
    times["close_start"] = time.monotonic()
    store.close()
    times["close_end"] = time.monotonic()
    thread.join()
    assert outcome == ["ok"]
    assert times["rekey_start"] < times["close_start"]
    if times["rekey_end"] > times["close_start"] + 0.1:
        # close() began while the rekey ran, and returned only after it.
        assert times["close_end"] >= times["rekey_end"] - 0.05, times
    assert store.closed
    with pytest.raises(tureen.MisuseError):
        store.size()
    tureen.Store.open(store_path, key="new").close()


def test_concurrent_calls_on_one_store(store_path: Path) -> None:
    import threading

    errors: list = []
    with tureen.Store.open(store_path, raw_key=RAW) as store:

        def work() -> None:
            try:
                for _ in range(200):
                    assert store.size() > 0
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=work) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []


# ---------------------------------------------------------------------------
# The write-ahead log, checkpointed on a thread of the store's own


def _batch(n: int) -> "list[dict]":
    return [{"k": "%d-%d" % (n, i), "text": "x" * 900} for i in range(1000)]


def test_the_log_stays_bounded_under_long_writes_and_goes_at_close(store_path: Path) -> None:
    """Checkpoints run beside the writer's commits, not inside them. The log
    may outgrow SQLite's usual 4 MB while they catch up, never past the
    32 MB where commits checkpoint themselves, and it is gone at close."""
    wal = Path(str(store_path) + "-wal")
    largest = 0
    with tureen.Store.open(store_path, raw_key=RAW) as s:
        s.register_soup("s", [("k", "string")])
        for n in range(120):  # about 120 MB through the log
            s.upsert("s", _batch(n))
            largest = max(largest, wal.stat().st_size)
    assert largest <= 40 << 20, largest
    assert not wal.exists()
    with tureen.Store.open(store_path, raw_key=RAW) as s:
        s.check()
        assert s.count(tureen.query.all("s")) == 120_000


def test_the_checkpoint_thread_copies_the_log_into_the_file_while_the_store_stays_open(
    store_path: Path,
) -> None:
    """About 6 MB through the log: past the 4 MB that wakes the thread, far
    below the 32 MB where commits checkpoint themselves. Only the thread can
    then move those pages into the store's file before close."""
    with tureen.Store.open(store_path, raw_key=RAW) as s:
        s.register_soup("s", [("k", "string")])
        before = store_path.stat().st_size
        for n in range(5):
            s.upsert("s", _batch(n))
        deadline = time.monotonic() + 30
        while store_path.stat().st_size < before + (4 << 20) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert store_path.stat().st_size >= before + (4 << 20), (before, store_path.stat().st_size)
        assert s.count(tureen.query.all("s")) == 5000


def test_the_checkpoint_thread_starts_only_for_a_store_that_writes_enough(store_path: Path) -> None:
    """A store that writes little (an inspection, a process forked to write
    one entry) never starts the thread; one that fills the log past 4 MB
    starts one, and close ends it."""
    def threads() -> int:
        return len(os.listdir("/proc/self/task"))

    before = threads()
    s = tureen.Store.open(store_path, raw_key=RAW)
    s.register_soup("s", [("k", "string")])
    s.upsert("s", _batch(0)[:10])
    assert threads() == before
    for n in range(8):
        s.upsert("s", _batch(n))
    assert threads() == before + 1
    s.close()
    assert threads() == before


def test_compact_and_rekey_beside_a_writer(store_path: Path) -> None:
    """SQLite refuses a truncating checkpoint (compact's) while another one
    runs, and a commit as large as VACUUM's wakes the background one: compact
    waits for it. Rekey waits for the connection it checkpoints on."""
    import threading

    store = tureen.Store.open(store_path, raw_key=RAW)
    store.register_soup("s", [("k", "string")])
    done = threading.Event()
    written: list = []
    failed: list = []

    def write() -> None:
        for n in range(300):
            if done.is_set():
                return
            try:
                store.upsert("s", _batch(n))
            except BaseException as e:  # reported by the assertion below
                failed.append(e)
                return
            written.append(n)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        for _ in range(5):
            store.compact()
        store.rekey(raw_key=OTHER_RAW)
        for _ in range(5):
            store.compact()
    finally:
        done.set()
        writer.join(120)
    assert not writer.is_alive() and failed == [], failed
    # Compact's checkpoint empties the log even right after a large commit
    # (its VACUUM's), which sets the background checkpoint going.
    wal = Path(str(store_path) + "-wal")
    for n in range(5):
        store.upsert("s", _batch(1000 + n))
        written.append(n)
        store.compact()
        assert wal.stat().st_size == 0
    store.close()
    with tureen.Store.open(store_path, raw_key=OTHER_RAW) as s:
        s.check()
        assert s.count(tureen.query.all("s")) == 1000 * len(written)
