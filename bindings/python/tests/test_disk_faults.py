"""A full disk and a file size limit (issue 47 item 4), on the release
library: a device process writes into a store on a small tmpfs the test
mounts, or under RLIMIT_FSIZE, until the disk refuses. Upserts, a sync down
and a blob import each end in TUREEN_E_IO; once there is room again (the
tmpfs grown, a process without the limit), the store opens, passes its
integrity check, holds every write it acknowledged, and goes on: the sync
down completes on resync, the blob goes in.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from conftest import KINTO_AUTH, run_python
from servers import KintoServer
from sync_support import entries, is_clean, kinto_client

KEY = "d1" * 32
SOUP = "docs"
ROOM = 1 << 20  # the tmpfs's size, and the file size limit: 1 MiB
RECORDS = 300  # of 4 KiB each on the server: more than ROOM
BLOB = 3 << 20

# A device that fills the disk: opens the store (under RLIMIT_FSIZE when
# asked, SIGXFSZ ignored so that a write past it fails with EFBIG instead of
# killing the process, as in a shell's `ulimit -f`), does one kind of write
# until the disk refuses, and prints what was acknowledged and the status
# it failed with. Every loop is bounded.
DEVICE = r"""
import json, resource, signal, sys
import tureen

plan = json.loads(sys.argv[1])
if plan["fsize"]:
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (plan["fsize"], plan["fsize"]))
store = tureen.Store.open(plan["path"], raw_key=plan["key"])
out = {"acked": [], "code": None}
try:
    store.register_soup(plan["soup"], [("id", "string")])
    if plan["op"] == "upsert":
        for i in range(2000):
            rid = "u%04d" % i
            store.upsert(plan["soup"], {"id": rid, "pad": "%04d" % i * 1000})
            out["acked"].append(rid)
    elif plan["op"] == "transaction":
        # The disk fills inside a transaction the app opened: SQLite rolls
        # the whole of it back. The app goes on writing, then rolls back.
        try:
            with store.transaction():
                store.upsert(plan["soup"], {"id": "first", "pad": "x"})
                for i in range(2000):
                    try:
                        store.upsert(plan["soup"], {"id": "t%04d" % i, "pad": "%05d" % i * 8000})
                    except tureen.Error as e:
                        out["code"] = int(e.code)
                        break
                try:
                    store.upsert(plan["soup"], {"id": "later", "pad": "y"})
                    out["acked"].append("later")
                except tureen.Error as e:
                    out["later"] = int(e.code)
                raise KeyError("the app rolls its transaction back")
        except KeyError:
            pass
        store.close()
        print(json.dumps(out), flush=True)
        sys.exit(0)
    elif plan["op"] == "sync_down":
        out["acked"].append(store.sync_down(plan["target"], plan["soup"], name="down")["status"])
    else:
        out["acked"].append(store.blob_put(plan["file"])["digest"])  # tureen_blob_import
except tureen.Error as e:
    out["code"] = int(e.code)
try:
    store.close()
except tureen.Error as e:
    out["close"] = int(e.code)
print(json.dumps(out), flush=True)
"""


@pytest.fixture(scope="module")
def kinto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KintoServer]:
    """Kinto in memory, pages of 50 records: a sync down commits several
    before the disk is full."""
    server = KintoServer("memory", tmp_path_factory.mktemp("kinto-disk"), settings={"kinto.paginate_by": "50"})
    server.start()
    try:
        yield server
    finally:
        server.stop()


class Disk:
    """Where the store lives, and how the fault is lifted."""

    def __init__(self, kind: str, root: Path) -> None:
        self.kind = kind
        self.root = root
        self.fsize = ROOM if kind == "fsize" else 0

    def grow(self) -> None:
        """Room again: the tmpfs grows; a process without the limit needs nothing."""
        if self.kind == "tmpfs":
            subprocess.run(["mount", "-o", "remount,size=64m", str(self.root)], check=True)


@pytest.fixture(params=["tmpfs", "fsize"])
def disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Disk]:
    root = tmp_path / "disk"
    root.mkdir()
    if request.param == "fsize":
        yield Disk("fsize", root)
        return
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%d" % ROOM, "tureen-full", str(root)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here: " + done.stderr.strip())
    try:
        yield Disk("tmpfs", root)
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False)


def fill_disk(disk: Disk, op: str, **extra: Any) -> Dict[str, Any]:
    plan = dict(path=str(disk.root / "device.db"), key=KEY, soup=SOUP, op=op, fsize=disk.fsize, **extra)
    done = run_python(DEVICE, [json.dumps(plan)], timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result: Dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert result["code"] == int(tureen.Status.IO), result
    return result


def reopened(disk: Disk) -> tureen.Store:
    store = tureen.Store.open(disk.root / "device.db", raw_key=KEY)
    store.check()
    return store


def test_upserts_until_the_disk_is_full(disk: Disk) -> None:
    result = fill_disk(disk, "upsert")
    acked: List[str] = result["acked"]
    assert 0 < len(acked) < 2000
    disk.grow()
    with reopened(disk) as store:
        assert [e["id"] for e in entries(store, SOUP)] == acked
        store.upsert(SOUP, {"id": "after", "pad": "x" * 4000})
        assert len(entries(store, SOUP)) == len(acked) + 1
        store.check()


def test_a_sync_down_that_fills_the_disk_completes_on_resync(disk: Disk, kinto: KintoServer) -> None:
    suffix = uuid.uuid4().hex[:12]
    target: Dict[str, Any] = {"type": "kinto", "url": kinto.url, "bucket": "b" + suffix, "collection": "c" + suffix,
                              "auth": dict(KINTO_AUTH)}
    kinto.create_collection(target["bucket"], target["collection"], KINTO_AUTH)
    with kinto_client(target).batch() as batch:
        for i in range(RECORDS):
            batch.create_record(id="s%03d" % i, data={"pad": "%03d" % i * 1365})
    fill_disk(disk, "sync_down", target=target)
    disk.grow()
    with reopened(disk) as store:
        kept = entries(store, SOUP)
        assert len(kept) < RECORDS and all(is_clean(e) for e in kept)
        assert store.resync("down")["status"] == "DONE"
        server = {r["id"]: r["pad"] for r in kinto_client(target).get_records()}
        local = {e["id"]: e["pad"] for e in entries(store, SOUP)}
        assert local == server and len(local) == RECORDS
        assert all(is_clean(e) for e in entries(store, SOUP))
        store.check()


def test_a_blob_import_on_a_full_disk(disk: Disk, tmp_path: Path) -> None:
    source = tmp_path / "photo.bin"
    data = os.urandom(BLOB)
    source.write_bytes(data)
    fill_disk(disk, "blob", file=str(source))
    disk.grow()
    with reopened(disk) as store:
        ref = store.blob_put(source)
        assert ref["length"] == BLOB
        assert store.blob_get(ref) == data
        store.check()


def test_a_full_disk_inside_an_apps_transaction(disk: Disk) -> None:
    """The disk fills while an app's transaction spills its pages: SQLite
    rolls the whole transaction back, not just the failing call. A later
    call on that thread used to run on its own and commit at once, though
    the app then rolled back what it took for its transaction: it now
    fails (TUREEN_E_IO) until the transaction ends, and nothing of it stays."""
    result = fill_disk(disk, "transaction")
    assert result["acked"] == [] and result.get("later") == int(tureen.Status.IO), result
    disk.grow()
    with reopened(disk) as store:
        assert entries(store, SOUP) == []
        store.upsert(SOUP, {"id": "after"})
        assert [e["id"] for e in entries(store, SOUP)] == ["after"]
