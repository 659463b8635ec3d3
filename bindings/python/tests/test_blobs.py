"""Blobs kept in the store: round trips at every size through every path,
sharing, damage detected, the collection race, a process killed during an
import, and bytes never in plaintext on disk. Sync with Kinto's attachment
plugin is in test_blobs_kinto.py."""

from __future__ import annotations

import hashlib
import io
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, List

import pytest

import tureen
from conftest import child_env, run_python

RAW_KEY = bytes(range(32))


def digest_of(data: bytes) -> str:
    return "sha256-" + hashlib.sha256(data).hexdigest()


def pattern(n: int, seed: int = 7) -> bytes:
    """n bytes that differ from chunk to chunk (a repeated block would hide
    chunks written in the wrong place)."""
    block = hashlib.sha256(b"%d" % seed).digest() * 2048  # 64 KiB
    out = bytearray()
    i = 0
    while len(out) < n:
        out += hashlib.sha256(b"%d-%d" % (seed, i)).digest() + block[: 65536 - 32]
        i += 1
    return bytes(out[:n])


@pytest.fixture
def store(tmp_path: Path):
    s = tureen.Store.open(str(tmp_path / "blobs.tureen"), raw_key=RAW_KEY)
    s.register_soup("photos", [{"path": "name", "type": "string"}])
    try:
        yield s
    finally:
        s.close()


@pytest.mark.parametrize("size", [0, 1, 1 << 20, (1 << 20) + 3, 5 * 256 * 1024])
def test_round_trip_every_way(store, tmp_path: Path, size: int) -> None:
    data = pattern(size, seed=size)
    ref = store.blob_put(data, "image/jpeg")
    assert ref == {"@type": "blob", "digest": digest_of(data), "length": size, "content_type": "image/jpeg"}
    assert store.blob_get(ref) == data
    with store.blob_open(ref["digest"]) as f:
        assert f.length == size and f.read() == data
        f.seek(size // 2)
        assert f.read(100) == data[size // 2: size // 2 + 100]
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    assert store.blob_put(src)["digest"] == ref["digest"]
    assert store.blob_put(io.BytesIO(data))["digest"] == ref["digest"]
    out = tmp_path / "out.bin"
    store.blob_export(ref, out)
    assert out.read_bytes() == data
    assert store.blob_info(ref)["length"] == size


def test_only_regular_files_are_imported(store, tmp_path: Path) -> None:
    """A FIFO with no writer (and a device, which never ends) is refused at
    once: opening the FIFO used to wait for a writer for ever, and close
    with it."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    outcome: List[Any] = []

    def put(source: str) -> None:
        try:
            outcome.append(store.blob_put(source))
        except tureen.Error as e:
            outcome.append(e)

    for source in (str(fifo), "/dev/zero"):
        worker = threading.Thread(target=put, args=(source,), daemon=True)
        worker.start()
        worker.join(10)
        if worker.is_alive():  # release the importer before failing
            with open(fifo, "wb"):
                pass
            worker.join(10)
            pytest.fail("importing %s did not return" % source)
        error = outcome.pop()
        assert isinstance(error, tureen.DiskError) and "not a regular file" in str(error), error


def test_export_takes_names_up_to_the_file_systems_limit(store, tmp_path: Path) -> None:
    """The temporary file beside the one exported is named apart from it:
    a name built on the exported one's failed past about 232 bytes."""
    ref = store.blob_put(b"a long name")
    (tmp_path / "out").mkdir()
    target = tmp_path / "out" / ("n" * 255)
    store.blob_export(ref, target)
    assert target.read_bytes() == b"a long name"
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["n" * 255]  # no temporary file left


def test_the_same_bytes_are_stored_once(store) -> None:
    data = pattern(2 << 20)
    store.blob_put(data)
    store.compact()
    before = store.size()
    for _ in range(3):
        store.blob_put(io.BytesIO(data), "application/pdf")
    store.compact()
    assert store.size() - before < 64 * 1024, (before, store.size())


def test_entries_refer_only_to_blobs_that_exist(store) -> None:
    ref = store.blob_put(b"photo bytes", "image/png")
    absent = dict(ref, digest=digest_of(b"never stored"))
    with pytest.raises(tureen.NotFoundError, match="no blob sha256-"):
        store.upsert("photos", {"name": "a", "shots": [{"img": absent}]})
    with pytest.raises(tureen.InvalidError, match="length"):
        store.upsert("photos", {"name": "a", "img": dict(ref, length=3)})
    with pytest.raises(tureen.InvalidError, match="not a blob digest"):
        store.upsert("photos", {"name": "a", "img": dict(ref, digest="sha256-XYZ")})
    assert store.count(tureen.query.all("photos")) == 0
    store.upsert("photos", {"name": "a", "deep": {"list": [1, {"img": ref}]}})


def upsert_text(store: tureen.Store, soup: str, text: str) -> None:
    """Upserts JSON text as a C caller writes it (Python's own upsert writes
    no \\u escapes for ASCII)."""
    from tureen._library import check, lib

    with store._use() as handle:
        check(lib.tureen_upsert(handle, soup.encode(), text.encode(), None, None))


@pytest.mark.parametrize("shape", ["one", "batch"])
def test_a_reference_spelled_with_escapes_is_a_reference(store, shape: str) -> None:
    """A caller's JSON may spell a digest with \\u escapes. The entry names
    the blob all the same: the blob must exist, and collection keeps it.
    Stored as given, the text held no "sha256-" for collection, which reads
    stored text by its bytes, to find: the blob was taken from its entry."""
    ref = store.blob_put(b"named with escapes", "text/plain")
    hexd = ref["digest"][len("sha256-"):]

    def text(name: str, hex_digits: str) -> str:
        one = ('{"name":"%s","img":{"@type":"blob","digest":"sha256\\u002d%s","length":%d,"content_type":"text/plain"}}'
               % (name, hex_digits, ref["length"]))
        return "[%s]" % one if shape == "batch" else one

    with pytest.raises(tureen.NotFoundError, match="no blob sha256-"):
        upsert_text(store, "photos", text("absent", digest_of(b"never stored")[len("sha256-"):]))
    upsert_text(store, "photos", text("e", hexd))
    assert store.count(tureen.query.all("photos")) == 1
    assert store.collect_blobs(0) == 0
    entry = store.query(tureen.query.exact("photos", "name", "e"))[0]
    assert entry["img"]["digest"] == ref["digest"]
    assert store.blob_get(entry["img"]) == b"named with escapes"


def test_collection_keeps_blobs_named_with_escapes_in_older_stores(tmp_path: Path) -> None:
    """Before upsert and sync down wrote such text out again, a store kept
    an entry's text as the caller or server spelled it, \\u escapes in a
    digest included. Collection, which reads stored text by its bytes, took
    the blobs such entries name. The store here is made unencrypted so that
    Python's sqlite3 can write what the older library stored."""
    path = str(tmp_path / "older.tureen")
    with tureen.Store.open(path, unencrypted=True) as s:
        s.register_soup("photos", [{"path": "name", "type": "string"}])
        dash = s.blob_put(b"named with an escaped dash", "text/plain")
        digit = s.blob_put(b"named with an escaped hex digit", "text/plain")
        s.upsert("photos", [{"name": "dash", "img": dash}, {"name": "digit", "img": digit}])
        s.blob_put(b"named by no entry", "text/plain")
    db = sqlite3.connect(path)
    try:
        table = "TABLE_%d" % db.execute("SELECT id FROM tureen_soups WHERE name = 'photos'").fetchone()[0]
        for digest, spelled in [
            (dash["digest"], dash["digest"].replace("sha256-", "sha256\\u002d")),
            (digit["digest"], with_last_digit_escaped(digit["digest"])),
        ]:
            update = "UPDATE %s SET soup = replace(soup, ?, ?) WHERE instr(soup, ?) > 0" % table
            assert db.execute(update, (digest, spelled, digest)).rowcount == 1
        db.commit()
        assert db.execute("SELECT count(*) FROM %s WHERE instr(soup, 'sha256-') > 0" % table).fetchone()[0] == 1
    finally:
        db.close()
    with tureen.Store.open(path, unencrypted=True) as s:
        assert s.collect_blobs(0) == 1  # only the blob no entry names
        by_name = {e["name"]: e for e in s.query(tureen.query.all("photos"))}
        assert by_name["dash"]["img"]["digest"] == dash["digest"]
        assert s.blob_get(by_name["dash"]["img"]) == b"named with an escaped dash"
        assert s.blob_get(by_name["digit"]["img"]) == b"named with an escaped hex digit"


def with_last_digit_escaped(digest: str) -> str:
    """The digest with its last hex digit spelled as a \\u escape."""
    return digest[:-1] + "\\u%04x" % ord(digest[-1])


def test_bad_digests_and_unknown_blobs(store) -> None:
    with pytest.raises(tureen.InvalidError):
        store.blob_get("md5-abc")
    with pytest.raises(tureen.InvalidError):
        store.blob_get("sha256-" + "A" * 64)  # uppercase is not how digests are written
    with pytest.raises(tureen.NotFoundError):
        store.blob_get(digest_of(b"nothing"))
    assert store.blob_info(digest_of(b"nothing")) is None
    with pytest.raises(tureen.NotFoundError):
        store.blob_put("/nonexistent/file")
    with pytest.raises(tureen.InvalidError):
        store.collect_blobs(-1)


def test_streams_go_stale_when_the_store_closes(tmp_path: Path) -> None:
    s = tureen.Store.open(str(tmp_path / "s.tureen"), raw_key=RAW_KEY)
    ref = s.blob_put(b"x" * 1000)
    f = s.blob_open(ref)
    s.close()
    with pytest.raises(tureen.MisuseError):
        f.read()
    f.close()


def test_collection_keeps_referenced_and_young_blobs(store) -> None:
    kept = store.blob_put(b"referenced")
    store.upsert("photos", {"name": "k", "img": kept})
    young = store.blob_put(b"unreferenced but young")
    assert store.collect_blobs() == 0  # the grace period covers `young`
    assert store.collect_blobs(0) == 1
    assert store.blob_info(young) is None and store.blob_get(kept) == b"referenced"
    store.remove_by_query(tureen.query.all("photos"))
    assert store.collect_blobs(0) == 1
    assert store.blob_info(kept) is None


def test_collection_never_removes_a_blob_an_entry_refers_to(store) -> None:
    """Couchbase Lite once deleted live blobs: a blob saved, compaction
    started, the document referring to it saved meanwhile. Here a writer
    puts blobs and upserts their entries while another thread collects in
    a loop with no grace period, so only the reference scan keeps blobs
    alive. Each pair is one transaction (put then upsert separately would
    let a waiting collector in between them: that is what the grace period
    is for, tested above)."""
    stop = threading.Event()
    collections = [0]
    failures: list = []

    def collect() -> None:
        while not stop.is_set():
            try:
                store.collect_blobs(0)
                collections[0] += 1
            except Exception as e:  # pragma: no cover - reported below
                failures.append(e)
                return

    t = threading.Thread(target=collect)
    t.start()
    try:
        for i in range(60):
            with store.transaction():
                ref = store.blob_put(pattern(300 * 1024, seed=1000 + i), "image/jpeg")
                store.upsert("photos", {"name": "p%d" % i, "img": ref})
    finally:
        stop.set()
        t.join(60)
    assert not failures and collections[0] > 0
    entries = store.query(tureen.query.all("photos", page_size=100), 0)
    assert len(entries) == 60
    for e in entries:
        data = store.blob_get(e["img"])
        assert digest_of(data) == e["img"]["digest"]


def test_a_blob_collected_while_it_is_written_fails_its_writer_and_leaves_nothing(store) -> None:
    """Collection with no grace period removes a blob still being written
    (the header says not to run it so): the writer's next commit fails
    with BusyError instead of adding pieces nothing keeps, and no byte of
    it is left in the store."""
    total = 20 << 20

    class CollectedMidway(io.RawIOBase):
        """Reads `total` bytes; past 9 MiB (one commit of 8 MiB made)
        collects the blobs once."""

        def __init__(self) -> None:
            self.sent = 0
            self.collected = -1

        def readable(self) -> bool:
            return True

        def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
            if self.sent > (9 << 20) and self.collected < 0:
                self.collected = store.collect_blobs(0)
            n = min(len(b), total - self.sent)
            b[:n] = b"\x5a" * n
            self.sent += n
            return n

    source = CollectedMidway()
    with pytest.raises(tureen.BusyError, match="removed by blob collection"):
        store.blob_put(source)
    assert source.collected == 1
    assert store.collect_blobs(0) == 0
    assert store.blob_get(store.blob_put(b"after")) == b"after"
    path = Path(store.path)
    store.close()
    # No piece of it stayed: the one file is the small blob's.
    assert len(blob_files(path)) == 1


def test_local_upserts_refer_only_to_blobs_that_exist(store) -> None:
    store.register_soup("notes", [{"path": "id", "type": "string"}])
    absent = {"@type": "blob", "digest": digest_of(b"nowhere"), "length": 7, "content_type": "text/plain"}
    with pytest.raises(tureen.NotFoundError, match="entry 0: no blob"):
        store.local_upsert("notes", {"id": "n1", "att": absent})
    assert store.count(tureen.query.all("notes")) == 0
    ref = store.blob_put(b"present")
    store.local_upsert("notes", {"id": "n1", "att": ref})


def test_blob_tables_made_in_a_rolled_back_transaction_are_made_again(tmp_path: Path) -> None:
    with tureen.Store.open(str(tmp_path / "t.tureen"), raw_key=RAW_KEY) as s:
        with pytest.raises(RuntimeError):
            with s.transaction():
                s.blob_put(b"first blob of the store, rolled back")
                raise RuntimeError("roll back")
        ref = s.blob_put(b"after the rollback")
        assert s.blob_get(ref) == b"after the rollback"


def test_a_collected_blob_cannot_be_referred_to_afterwards(store) -> None:
    ref = store.blob_put(b"put, then collected with no grace")
    assert store.collect_blobs(0) == 1
    with pytest.raises(tureen.NotFoundError):
        store.upsert("photos", {"name": "late", "img": ref})


def test_bytes_never_appear_in_plaintext(tmp_path: Path) -> None:
    path = tmp_path / "p.tureen"
    marker = b"PLAINTEXT-BLOB-MARKER-" * 5000
    with tureen.Store.open(str(path), raw_key=RAW_KEY) as s:
        s.blob_put(marker)
        s.blob_put(io.BytesIO(marker + b"2"))
        for p in [path, Path(str(path) + "-wal")] + blob_files(path):
            assert b"PLAINTEXT-BLOB-MARKER" not in (p.read_bytes() if p.exists() else b"")
    assert b"PLAINTEXT-BLOB-MARKER" not in path.read_bytes()
    assert [p.name for p in tmp_path.iterdir() if "tureen-" in p.name] == []


def sqlcipher(path: Path, sql: str) -> str:
    """Runs `sql` on the store with the sqlcipher shell; its output."""
    script = "PRAGMA key = \"x'%s'\";\nPRAGMA cipher_page_size = 4096;\n%s\n" % (RAW_KEY.hex(), sql)
    r = subprocess.run(["sqlcipher", str(path)], input=script, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "Error" not in r.stderr, r.stderr
    return r.stdout


def blob_files(path: Path) -> List[Path]:
    """The files in the store's blob directory."""
    d = Path(str(path) + ".blobs")
    return sorted(d.iterdir()) if d.exists() else []


def sealed_size(n: int) -> int:
    """The size of the file of a blob of n bytes: the header ("TRB\\x01",
    chunk size, key id "b1", salt), then 64 KiB chunks, each with its tag,
    the last holding the rest."""
    return 4 + 4 + 1 + 2 + 32 + n + (n // 65536 + 1) * 16


def test_a_blob_is_one_sealed_file_beside_the_store(tmp_path: Path) -> None:
    """A blob's bytes go to a file of their own, encrypted and written once:
    not through the store's write-ahead log, and stored once however often
    they are put."""
    path = tmp_path / "f.tureen"
    data = pattern(3 << 20, seed=9)
    with tureen.Store.open(str(path), raw_key=RAW_KEY) as s:
        ref = s.blob_put(data)
        assert s.blob_put(data) == ref
        assert s.blob_put(write_file(tmp_path / "same.bin", data)) == ref
        files = blob_files(path)
        assert [f.name for f in files] == ["1"] and files[0].stat().st_size == sealed_size(len(data))
        wal = Path(str(path) + "-wal")
        assert path.stat().st_size + (wal.stat().st_size if wal.exists() else 0) < len(data) // 4
        assert s.size() >= len(data)
        assert data[1000:1064] not in files[0].read_bytes()
        assert s.blob_get(ref) == data
        assert (os.stat(path.parent / (path.name + ".blobs")).st_mode & 0o777) == 0o700
    tureen.remove_store(str(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["same.bin"]


def test_blob_files_stay_beside_the_store_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store opened by a relative path finds its blobs beside its file
    after the host changes directory, and one opened through a link finds
    those of the file it names; removing the link leaves them."""
    real_dir, elsewhere = tmp_path / "real", tmp_path / "elsewhere"
    real_dir.mkdir()
    elsewhere.mkdir()
    real = real_dir / "rel.tureen"
    monkeypatch.chdir(real_dir)
    big, small = pattern(3 << 20, seed=5), b"a small one"
    with tureen.Store.open("rel.tureen", raw_key=RAW_KEY) as s:
        os.chdir(elsewhere)
        refs = [s.blob_put(big), s.blob_put(small)]
        os.chdir(tmp_path)
        assert [s.blob_get(r) for r in refs] == [big, small]
        assert s.collect_blobs(0) == 2
        assert [f.name for f in blob_files(real)] == []
        refs = [s.blob_put(big), s.blob_put(small)]
    assert [f.name for f in blob_files(real)] == ["3", "4"]
    assert list(elsewhere.iterdir()) == []
    link = tmp_path / "link.tureen"
    link.symlink_to(real)
    with tureen.Store.open(str(link), raw_key=RAW_KEY) as s:
        assert [s.blob_get(r) for r in refs] == [big, small]
        refs.append(s.blob_put(b"put through the link"))
    tureen.remove_store(str(link))
    with tureen.Store.open(str(real), raw_key=RAW_KEY) as s:
        assert [s.blob_get(r) for r in refs] == [big, small, b"put through the link"]


def write_file(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def damaged_store(tmp_path: Path, n: int) -> Any:
    """A store holding a blob of n bytes and a small one; their references
    and the first one's file."""
    path = tmp_path / "d.tureen"
    data = pattern(n, seed=3)
    with tureen.Store.open(str(path), raw_key=RAW_KEY) as s:
        ref = s.blob_put(data)
        other = s.blob_put(b"small and sound")
    return path, ref, other, blob_files(path)[0]


def assert_corrupt_every_way(path: Path, ref: Any, other: Any, out: Path, message: str) -> None:
    """Every way of reading `ref` fails with `message` and exports nothing;
    `other` (if any) still reads."""
    with tureen.Store.open(str(path), raw_key=RAW_KEY) as s:
        with pytest.raises(tureen.CorruptError, match=message):
            s.blob_get(ref)
        with pytest.raises(tureen.CorruptError, match=message):
            s.blob_export(ref, out)
        assert not out.exists()
        with s.blob_open(ref) as f:
            with pytest.raises(tureen.CorruptError, match=message):
                f.read()
        if other is not None:
            assert s.blob_get(other) == b"small and sound"


@pytest.mark.parametrize("where, message", [("middle", "chunk 4 of 10 does not authenticate"),
                                            ("last tag", "chunk 9 of 10 does not authenticate"),
                                            ("header", "header is not that of blob 1")])
def test_a_changed_byte_of_a_blob_file_is_corrupt(tmp_path: Path, where: str, message: str) -> None:
    """A byte changed anywhere fails authentication: never wrong bytes."""
    path, ref, other, file = damaged_store(tmp_path, 600 * 1024)
    raw = bytearray(file.read_bytes())
    raw[{"middle": len(raw) // 2, "last tag": len(raw) - 1, "header": 5}[where]] ^= 0x01
    file.write_bytes(bytes(raw))
    assert_corrupt_every_way(path, ref, other, tmp_path / "out.bin", message)


def test_a_changed_chunk_past_the_first_mib_is_named(tmp_path: Path) -> None:
    """An export opens 16 chunks per read: the chunk it names is still the
    one changed, in a later read than the first."""
    path, ref, other, file = damaged_store(tmp_path, 1600 * 1024 + 5)
    raw = bytearray(file.read_bytes())
    raw[sealed_size(20 * 64 * 1024) + 100] ^= 0x01
    file.write_bytes(bytes(raw))
    assert_corrupt_every_way(path, ref, other, tmp_path / "out.bin", "chunk 20 of 26 does not authenticate")


@pytest.mark.parametrize("change, size", [("cut", sealed_size(600 * 1024) - 1000), ("grown", sealed_size(600 * 1024) + 10)])
def test_a_blob_file_of_the_wrong_size_is_corrupt(tmp_path: Path, change: str, size: int) -> None:
    path, ref, other, file = damaged_store(tmp_path, 600 * 1024)
    raw = file.read_bytes()
    file.write_bytes(raw[:size] if change == "cut" else raw + b"\0" * 10)
    assert_corrupt_every_way(path, ref, other, tmp_path / "out.bin", "holds %d bytes instead of %d" % (size, len(raw)))


@pytest.mark.parametrize("length", [(1 << 63) - 1, (1 << 62) + 1])
def test_a_length_no_file_can_hold_is_corrupt(tmp_path: Path, length: int) -> None:
    """A blob's length changed in its row (with the key, or in a store that
    is not encrypted, whose rows nothing authenticates) to one no file can
    hold is damage: opening or reading it raises CorruptError in a process
    that goes on, never an overflow that ends it."""
    path, ref, other, _ = damaged_store(tmp_path, 100 * 1024)
    sqlcipher(path, "UPDATE tureen_blobs SET length = %d WHERE digest = '%s';" % (length, ref["digest"]))
    code = (
        "import sys, tureen\n"
        "s = tureen.Store.open(sys.argv[1], raw_key=bytes(range(32)))\n"
        "for read in (lambda: s.blob_get(sys.argv[2]), lambda: s.blob_open(sys.argv[2]).read(65536)):\n"
        "    try:\n"
        "        read()\n"
        "        print('read')\n"
        "    except tureen.Error as e:\n"
        "        print(type(e).__name__, e.code)\n"
        "print(s.blob_get(sys.argv[3]) == b'small and sound')\n"
    )
    r = run_python(code, [str(path), ref["digest"], other["digest"]])
    assert (r.returncode, r.stdout.split("\n")) == (0, ["CorruptError 5", "CorruptError 5", "True", ""]), r.stderr


def test_a_missing_or_swapped_blob_file_is_corrupt(tmp_path: Path) -> None:
    path, ref, other, file = damaged_store(tmp_path, 100 * 1024)
    moved = file.with_name("moved")
    file.rename(moved)
    assert_corrupt_every_way(path, ref, other, tmp_path / "out.bin", "file is missing")
    # Another blob's file under its name: its header names the other row.
    second = blob_files(path)[0]
    os.link(second, file)
    with tureen.Store.open(str(path), raw_key=RAW_KEY) as s:
        with pytest.raises(tureen.CorruptError, match="not that of blob 1"):
            s.blob_get(ref)


def test_collection_removes_blob_files_no_row_names(tmp_path: Path) -> None:
    """What a crash between a file and its row leaves (a file, never a row
    without one) goes at the next collection; other names are left alone."""
    path = tmp_path / "o.tureen"
    with tureen.Store.open(str(path), raw_key=RAW_KEY) as s:
        s.register_soup("photos", [{"path": "name", "type": "string"}])
        ref = s.blob_put(pattern(70000))
        s.upsert("photos", {"name": "kept", "img": ref})
        d = Path(str(path) + ".blobs")
        for name in ["7", "8.part", "9.take", "notes.txt", "07"]:
            (d / name).write_bytes(b"left by a crash")
        assert s.collect_blobs(0) == 0
        assert sorted(p.name for p in d.iterdir()) == ["07", "1", "notes.txt"]
        assert s.blob_get(ref) == pattern(70000)


# The tables a store written before blob files kept its blobs in.
OLDER_BLOB_TABLES = """
CREATE TABLE tureen_blobs (id INTEGER PRIMARY KEY AUTOINCREMENT, digest TEXT UNIQUE,
  length INTEGER NOT NULL, content_type TEXT NOT NULL, touched INTEGER NOT NULL);
CREATE TABLE tureen_blob_chunks (id INTEGER PRIMARY KEY, data BLOB NOT NULL);
"""


def store_with_older_blobs(path: Path, blobs: List[bytes]) -> List[Any]:
    """A store as versions before blob files left it: each blob a row of
    tureen_blobs and 256 KiB chunks keyed by id << 32 | position. Their
    references."""
    tureen.Store.open(str(path), raw_key=RAW_KEY).close()
    sql = [OLDER_BLOB_TABLES]
    refs = []
    for i, data in enumerate(blobs, 1):
        sql.append("INSERT INTO tureen_blobs VALUES (%d, '%s', %d, 'text/plain', %d);"
                   % (i, digest_of(data), len(data), int(time.time() * 1000)))
        for seq in range(0, len(data), 256 * 1024):
            sql.append("INSERT INTO tureen_blob_chunks VALUES (%d, X'%s');"
                       % (i << 32 | seq // (256 * 1024), data[seq:seq + 256 * 1024].hex()))
        refs.append({"@type": "blob", "digest": digest_of(data), "length": len(data), "content_type": "text/plain"})
    sqlcipher(path, "\n".join(sql))
    return refs


def test_blobs_a_store_kept_inside_itself_still_read(tmp_path: Path) -> None:
    """Blobs of a store written before blob files are read where they are,
    every way; new blobs of the same store go to files; collection removes
    an old one."""
    path = tmp_path / "old.tureen"
    olds = [pattern(600 * 1024, seed=1), b"", pattern(256 * 1024, seed=2)]
    refs = store_with_older_blobs(path, olds)
    with tureen.Store.open(str(path), raw_key=RAW_KEY) as s:
        s.register_soup("photos", [{"path": "name", "type": "string"}])
        for ref, data in zip(refs, olds):
            assert s.blob_get(ref) == data
            assert s.blob_info(ref["digest"]) == ref
            s.blob_export(ref, tmp_path / "out.bin")
            assert (tmp_path / "out.bin").read_bytes() == data
            with s.blob_open(ref) as f:
                f.seek(len(data) // 2)
                assert f.read() == data[len(data) // 2:]
            if data:
                s.upsert("photos", {"name": "n%d" % len(data), "img": ref})
        new = s.blob_put(b"new")
        assert [p.name for p in blob_files(path)] == ["4"]
        assert s.collect_blobs(0) == 2  # the old empty blob, the new one
        assert s.blob_get(refs[0]) == olds[0]
        with pytest.raises(tureen.NotFoundError):
            s.blob_get(refs[1])
        with pytest.raises(tureen.NotFoundError):
            s.blob_get(new)
    assert sqlcipher(path, "SELECT count(*) FROM tureen_blob_chunks;").split() == ["4"]


def test_damage_to_blobs_kept_inside_the_store_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "d.tureen"
    data = pattern(600 * 1024, seed=3)
    ref, other = store_with_older_blobs(path, [data, b"small and sound"])
    # Bytes changed with the key (a bug, a tool): the digest catches them.
    sqlcipher(path, "UPDATE tureen_blob_chunks SET data = zeroblob(length(data)) WHERE id = (1 << 32) + 2;")
    out = tmp_path / "out.bin"
    with tureen.Store.open(str(path), raw_key=RAW_KEY) as s:
        with pytest.raises(tureen.CorruptError, match="do not hash"):
            s.blob_get(ref)
        with pytest.raises(tureen.CorruptError):
            s.blob_export(ref, out)
        assert not out.exists()
        with s.blob_open(ref) as f:
            with pytest.raises(tureen.CorruptError):
                f.read()
        assert s.blob_get(other) == b"small and sound"
    # A chunk gone: detected as missing, not read as short.
    sqlcipher(path, "DELETE FROM tureen_blob_chunks WHERE id = 1 << 32;")
    with tureen.Store.open(str(path), raw_key=RAW_KEY) as s:
        with pytest.raises(tureen.CorruptError, match="missing"):
            s.blob_get(ref)


@pytest.mark.parametrize("change, length", [("data || zeroblob(10)", 256 * 1024 + 10),
                                            ("substr(data, 1, 1000)", 1000)])
def test_a_chunk_of_the_wrong_length_is_corrupt(tmp_path: Path, change: str, length: int) -> None:
    """A first chunk of a blob kept inside the store grown past a chunk's
    size or cut short, with the key: every way of reading says which chunk
    and how long, and exports nothing."""
    path = tmp_path / "l.tureen"
    data = pattern(600 * 1024, seed=5)
    ref, = store_with_older_blobs(path, [data])
    sqlcipher(path, "UPDATE tureen_blob_chunks SET data = %s WHERE id = (SELECT min(id) FROM tureen_blob_chunks);" % change)
    message = "chunk 0 holds %d bytes instead of %d" % (length, 256 * 1024)
    assert_corrupt_every_way(path, ref, None, tmp_path / "out.bin", message)


def test_damaged_pages_fail_authentication(tmp_path: Path) -> None:
    path = tmp_path / "pages.tureen"
    data = pattern(2 << 20, seed=4)
    ref, = store_with_older_blobs(path, [data])
    with tureen.Store.open(str(path), raw_key=RAW_KEY) as s:
        s.compact()  # everything in the main file
    raw = bytearray(path.read_bytes())
    for at in range(len(raw) // 4, 3 * len(raw) // 4, 4096 * 16):
        raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))
    with tureen.Store.open(str(path), raw_key=RAW_KEY) as s:
        with pytest.raises(tureen.CorruptError):
            s.blob_get(ref)


# A child that imports, exports and reads back a large file, printing how far
# its peak resident memory rose past what it had once the store was open.
# Resident memory, not an address-space limit: glibc reserves 64 MiB of
# address space for each malloc arena a new thread (the hashing thread) may
# get, untouched, so such a limit failed the round trip now and then with
# "out of memory" when threads happened to contend, while the memory used
# stayed near 20 MiB.
BIG_CHILD = r"""
import hashlib, sys, tureen
store, src, out, key = sys.argv[1], sys.argv[2], sys.argv[3], bytes.fromhex(sys.argv[4])
def peak():
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over exec, so a child of
    # a large test process would start at its parent's peak.
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmHWM:"))
s = tureen.Store.open(store, raw_key=key)
s.blob_put(b"warm up")
before = peak()
ref = s.blob_put(src)
s.blob_export(ref, out)
h = hashlib.sha256()
with s.blob_open(ref) as f:
    while True:
        piece = f.read(1 << 20)
        if not piece:
            break
        h.update(piece)
print(ref["digest"], h.hexdigest(), ref["length"], peak() - before)
"""

# How far the peak may rise for a 200 MiB round trip: about 20 MiB is what
# it takes; holding the file once would take 200.
BIG_RISE_BOUND = 96 << 20


def test_200_mib_round_trip_in_bounded_memory(tmp_path: Path) -> None:
    src = tmp_path / "big.bin"
    h = hashlib.sha256()
    with open(src, "wb") as f:
        for i in range(200):
            piece = hashlib.sha256(b"%d" % i).digest() * 32768  # 1 MiB
            f.write(piece)
            h.update(piece)
    out = tmp_path / "big.out"
    r = run_python(BIG_CHILD, [str(tmp_path / "big.tureen"), str(src), str(out), RAW_KEY.hex()], timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    digest, read_back, length, rise = r.stdout.split()
    assert digest == "sha256-" + h.hexdigest() and read_back == h.hexdigest() and int(length) == 200 << 20
    assert int(rise) <= BIG_RISE_BOUND, "the peak rose %.1f MiB" % (int(rise) / (1 << 20))
    assert out.stat().st_size == 200 << 20
    with open(out, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == h.hexdigest()


def test_the_memory_bound_of_the_big_test_would_catch_holding_the_file(tmp_path: Path) -> None:
    """The bound above is real: importing the file from memory exceeds it."""
    src = tmp_path / "big.bin"
    with open(src, "wb") as f:
        f.truncate(200 << 20)
    code = BIG_CHILD.replace("ref = s.blob_put(src)", "ref = s.blob_put(open(src, 'rb').read())")
    r = run_python(code, [str(tmp_path / "big.tureen"), str(src), str(tmp_path / "o"), RAW_KEY.hex()], timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert int(r.stdout.split()[3]) > BIG_RISE_BOUND


KILLED_IMPORT = r"""
import sys, tureen
s = tureen.Store.open(sys.argv[1], raw_key=bytes.fromhex(sys.argv[2]))
class Slow:
    def __init__(self):
        self.sent = 0
    def read(self, n):
        self.sent += 1
        if self.sent == 8:
            print("half", flush=True)
        return bytes([self.sent % 251]) * (1 << 20)  # endless: only a kill ends it
s.blob_put(Slow())
"""


def test_a_killed_import_leaves_nothing_readable(tmp_path: Path) -> None:
    path = tmp_path / "k.tureen"
    with tureen.Store.open(str(path), raw_key=RAW_KEY) as s:
        kept = s.blob_put(b"before the kill")
        s.register_soup("photos", [{"path": "name", "type": "string"}])
        s.upsert("photos", {"name": "kept", "img": kept})
    p = subprocess.Popen([sys.executable, "-c", KILLED_IMPORT, str(path), RAW_KEY.hex()], env=child_env(),
                         stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "half"
        time.sleep(0.3)  # some batches committed
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(30)
    with tureen.Store.open(str(path), raw_key=RAW_KEY) as s:
        s.check()
        assert s.blob_get(kept) == b"before the kill"
        size_before = s.size()
        assert s.collect_blobs(0) == 1  # the abandoned pieces, and nothing else
        s.compact()
        assert s.size() < size_before
        assert s.blob_get(kept) == b"before the kill"
