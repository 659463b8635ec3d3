"""A process SIGKILLed while it moves a large blob through Kinto's attachment
plugin, then a fresh process resumes the sync: nothing is lost, nothing is
half-written, and no record on either side points at a missing blob.

Kinto (memory backend, kinto-attachment) stores the files in a directory
served by a file server of the test's own that can stall a download half way;
a logging proxy in front of Kinto can stall chosen requests. A stall is the
evidence that the transfer is under way (bounded waits), and the kill lands
while the child waits on it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

import pytest

import tureen
from conftest import KINTO_AUTH, child_env
from hostile import HostileServer, KintoProxy, Reply, Seen, Writer
from servers import KintoServer, wait_until
from sync_support import photo
from test_blobs_kinto import open_device

RAW_KEY = bytes(range(32))
SIZE = 24 << 20  # large enough that a download commits pieces before the stall
WAIT = 60.0  # bound on every wait for the child


class FileServer:
    """Serves the plugin's files, honouring ``Range: bytes=N-`` (206) like
    a web server does, and notes each GET's Range header in ``ranges``;
    with ``stall`` set, a download sends half the file (with the whole
    Content-Length), sets ``stalled`` and waits for ``release`` (or the end
    of the test)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.stall = False
        self.stalled = threading.Event()
        self.release = threading.Event()
        self.ranges: List[Tuple[Optional[str], int]] = []  # (Range asked, bytes sent)
        self.server = HostileServer(self._respond).start()

    def _respond(self, r: Seen) -> Union[Reply, Writer]:
        path = (self.root / r.path.lstrip("/")).resolve()
        if r.method != "GET" or self.root.resolve() not in path.parents or not path.is_file():
            return Reply(404, b"not found", {})
        data = path.read_bytes()
        asked = re.match(r"^bytes=(\d+)-$", r.header("Range") or "")
        if not self.stall and asked and 0 < int(asked.group(1)) < len(data):
            start = int(asked.group(1))
            self.ranges.append((r.header("Range"), len(data) - start))
            return Reply(206, data[start:], {"Content-Type": "application/octet-stream",
                                             "Content-Range": "bytes %d-%d/%d" % (start, len(data) - 1, len(data))})
        self.ranges.append((r.header("Range"), len(data) // 2 if self.stall else len(data)))
        if not self.stall:
            return Reply(200, data, {"Content-Type": "application/octet-stream"})

        def write(h: BaseHTTPRequestHandler) -> None:
            h.send_response(200)
            h.send_header("Content-Type", "application/octet-stream")
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data[: len(data) // 2])
            h.wfile.flush()
            self.stalled.set()
            self.release.wait(WAIT)

        return write


class Deployment:
    def __init__(self, kinto: KintoServer, proxy: KintoProxy, files: FileServer) -> None:
        self.kinto = kinto
        self.proxy = proxy
        self.files = files

    def target(self) -> Dict[str, Any]:
        suffix = uuid.uuid4().hex[:12]
        return {"type": "kinto", "url": self.proxy.url, "bucket": "b" + suffix, "collection": "c" + suffix,
                "auth": dict(KINTO_AUTH), "create": True, "attachments_url": self.files.server.url + "/"}

    def records(self, target: Dict[str, Any], collection: str) -> Dict[str, Dict[str, Any]]:
        """What Kinto itself holds (not through the proxy)."""
        r = self.kinto.request("GET", "/buckets/%s/collections/%s/records" % (target["bucket"], collection),
                               auth=KINTO_AUTH)
        if r.status in (403, 404):
            return {}
        assert r.status == 200, r.body[:300]
        return {rec["id"]: rec for rec in r.json()["data"]}


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    root = tmp_path_factory.mktemp("killed-transfers")
    (root / "files").mkdir()
    files = FileServer(root / "files")
    kinto = KintoServer("memory", root / "kinto", settings={
        "kinto.includes": "kinto.plugins.flush kinto_attachment",
        "kinto.attachment.base_path": str(root / "files"),
        "kinto.attachment.base_url": files.server.url + "/",
        "kinto.attachment.extensions": "any",
    })
    proxy: Optional[KintoProxy] = None
    try:
        kinto.start()
        proxy = KintoProxy(kinto.url)
        proxy.start()
        yield Deployment(kinto, proxy, files)
    finally:
        files.release.set()
        if proxy is not None:
            proxy.stop()
        kinto.stop()
        files.server.stop()


@pytest.fixture(autouse=True)
def calm(deployment: Deployment) -> Iterator[None]:
    yield
    deployment.files.release.set()
    deployment.files.stall = False
    deployment.files.stalled.clear()
    deployment.files.release.clear()
    deployment.proxy.intercept = lambda r: None


SYNC = r"""
import json, sys, tureen
path, key, way, target = sys.argv[1], bytes.fromhex(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
with tureen.Store.open(path, raw_key=key) as s:
    s.register_soup("notes", [{"path": "id", "type": "string"}])
    state = s.sync_up(target, "notes") if way == "up" else s.sync_down(target, "notes")
    print(json.dumps({"status": state["status"], "blobs": state["blobs"]}), flush=True)
"""


def sync_in_child(path: Path, way: str, target: Dict[str, Any]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SYNC, str(path), RAW_KEY.hex(), way, json.dumps(target)],
                            env=child_env(), stdout=subprocess.PIPE, text=True)


def killed_while(p: subprocess.Popen, started: Callable[[], bool]) -> None:
    """SIGKILLs the child once `started` holds (failing if it never does)."""
    try:
        assert wait_until(lambda: started() or p.poll() is not None, WAIT), "the transfer never started"
        assert p.poll() is None, "the child ended before it was killed"
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait(30)


def resumed(path: Path, way: str, target: Dict[str, Any]) -> Dict[str, Any]:
    p = sync_in_child(path, way, target)
    out, _ = p.communicate(timeout=300)
    assert p.returncode == 0, out
    return json.loads(out.strip().splitlines()[-1])


def every_reference_resolves(s: tureen.Store) -> int:
    """Each blob an entry refers to is here, whole; returns how many."""
    n = 0
    for note in s.query(tureen.query.all("notes"), 0):
        for value in note.values():
            if isinstance(value, dict) and value.get("@type") == "blob":
                info = s.blob_info(value)
                assert info is not None and info["length"] == value["length"], note
                with s.blob_open(value) as f:
                    while f.read(1 << 20):  # read whole: the digest is checked at the end
                        pass
                n += 1
    return n


def server_references_resolve(d: Deployment, target: Dict[str, Any]) -> int:
    """Each blob a record on the server refers to has its attachment there,
    with the blob's hash and size; returns how many records refer to one."""
    blobs = d.records(target, target["collection"] + "-blobs")
    n = 0
    for rec in d.records(target, target["collection"]).values():
        ref = rec.get("photo")
        if ref:
            a = blobs[ref["digest"][len("sha256-"):]]["attachment"]
            assert a["hash"] == ref["digest"][len("sha256-"):] and a["size"] == ref["length"], a
            n += 1
    return n


def stall_writes(d: Deployment, target: Dict[str, Any], of: str) -> threading.Event:
    """Holds every write of the blob's file (`of` "blob") or of a record
    (`of` "record": a record of the collection, or a /batch) unanswered and
    not forwarded; the event is set when one arrives."""
    seen = threading.Event()
    records = "/collections/%s/records" % target["collection"]

    def wanted(r: Seen) -> bool:
        if r.method not in ("POST", "PUT", "PATCH"):
            return False
        if of == "blob":
            return r.path.endswith("/attachment")
        return r.path.endswith("/batch") or records in r.path

    def intercept(r: Seen) -> Optional[Writer]:
        if not wanted(r):
            return None
        seen.set()
        return lambda h: d.files.release.wait(WAIT)

    d.proxy.intercept = intercept
    return seen


def device_with_photo(tmp_path: Path, data: bytes) -> Dict[str, Any]:
    with open_device(tmp_path, "desk") as s:
        ref = s.blob_put(data, "image/jpeg")
        s.local_upsert("notes", {"id": "n1", "photo": ref})
    return dict(ref)


@pytest.mark.parametrize("stalled_at", ["blob", "record"])
def test_killed_during_upload_resumes(deployment: Deployment, tmp_path: Path, stalled_at: str) -> None:
    """Killed while the blob's upload waits for its answer (Kinto never got
    it), or after the blob went up and before the record did."""
    d, target, data = deployment, deployment.target(), photo(SIZE, "kill-up-" + stalled_at)
    ref = device_with_photo(tmp_path, data)
    seen = stall_writes(d, target, stalled_at)
    killed_while(sync_in_child(tmp_path / "desk.tureen", "up", target), seen.is_set)
    d.files.release.set()
    d.proxy.intercept = lambda r: None

    # Nothing on the server refers to a blob it lacks; the device lost nothing.
    assert d.records(target, target["collection"]) == {}
    uploaded = d.records(target, target["collection"] + "-blobs")
    assert len(uploaded) == (1 if stalled_at == "record" else 0)
    with open_device(tmp_path, "desk") as s:
        s.check()
        assert every_reference_resolves(s) == 1 and s.blob_get(ref) == data

    state = resumed(tmp_path / "desk.tureen", "up", target)
    # Sent once: a blob already on the server is not uploaded again.
    assert state == {"status": "DONE", "blobs": 0 if stalled_at == "record" else 1}
    assert server_references_resolve(d, target) == 1
    with open_device(tmp_path, "home") as home:
        assert home.sync_down(target, "notes")["status"] == "DONE"
        assert every_reference_resolves(home) == 1 and home.blob_get(ref) == data


def photo_shared_and_empty_home(tmp_path: Path, target: Dict[str, Any],
                                data: bytes) -> Tuple[Dict[str, Any], Path, Callable[[], int]]:
    """desk sends `data` up to `target`; home is a store with nothing yet.
    Returns the reference, home's path, and how many bytes home's files
    hold (the database, its log and its blob files: a download's pieces
    land in the last)."""
    ref = device_with_photo(tmp_path, data)
    with open_device(tmp_path, "desk") as s:
        assert s.sync_up(target, "notes")["blobs"] == 1
    home = tmp_path / "home.tureen"
    with open_device(tmp_path, "home"):
        pass

    def store_bytes() -> int:
        blobs = Path(str(home) + ".blobs")
        files = [str(home), str(home) + "-wal"] + ([str(p) for p in blobs.iterdir()] if blobs.exists() else [])
        return sum(os.path.getsize(p) for p in files if os.path.exists(p))

    return ref, home, store_bytes


def test_killed_during_download_resumes(deployment: Deployment, tmp_path: Path) -> None:
    d, target, data = deployment, deployment.target(), photo(SIZE, "kill-down")
    ref, home, store_bytes = photo_shared_and_empty_home(tmp_path, target, data)

    # The download has started and more than 10 MiB of it are in its file
    # (the writer writes whole chunks of 64 KiB as they fill a batch of
    # 1 MiB). The stall comes at half of SIZE (12 MiB).
    d.files.stall = True
    before = store_bytes()
    killed_while(sync_in_child(home, "down", target),
                 lambda: d.files.stalled.is_set() and store_bytes() > before + (10 << 20))
    d.files.release.set()
    d.files.stall = False

    with tureen.Store.open(str(home), raw_key=RAW_KEY) as s:
        s.check()
        # Eager: the record waits for its blob; the half blob is unreadable.
        assert s.count(tureen.query.all("notes")) == 0 and s.blob_info(ref) is None
        with pytest.raises(tureen.NotFoundError):
            s.blob_get(ref)

    # The next run takes over the whole chunks the killed one wrote and
    # asks the file server only for the rest.
    d.files.ranges.clear()
    state = resumed(home, "down", target)
    assert state == {"status": "DONE", "blobs": 1}
    assert_asked_for_the_rest(d.files.ranges)
    with tureen.Store.open(str(home), raw_key=RAW_KEY) as s:
        s.check()
        assert every_reference_resolves(s) == 1 and s.blob_get(ref) == data
        # Nothing of the killed download was left behind.
        assert s.collect_blobs(0) == 0
        assert s.blob_get(ref) == data


def assert_asked_for_the_rest(ranges: List[Tuple[Optional[str], int]]) -> None:
    """One request, for the bytes after at least the 10 MiB that were in
    the file when the download was killed (at most the 12 MiB sent before
    the stall), from a chunk's start: the rest of the blob."""
    assert len(ranges) == 1
    header, length = ranges[0]
    assert header is not None and re.fullmatch(r"bytes=\d+-", header), header
    start = int(header[len("bytes="):-1])
    assert header == "bytes=%d-" % start and length == SIZE - start
    assert (10 << 20) <= start <= SIZE // 2 and start % (64 << 10) == 0


FORKED = r"""
import json, os, sys, tureen
key, scratch, first, home, target = bytes.fromhex(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]), sys.argv[4], json.loads(sys.argv[5])
# A download here first, so that this process has named itself as a
# writer's owner before it forks.
with tureen.Store.open(scratch, raw_key=key) as s:
    s.register_soup("notes", [{"path": "id", "type": "string"}])
    assert s.sync_down(first, "notes")["blobs"] == 1
print("ready", flush=True)
sys.stdin.readline()
pid = os.fork()
if pid == 0:
    with tureen.Store.open(home, raw_key=key) as s:
        s.register_soup("notes", [{"path": "id", "type": "string"}])
        s.sync_down(target, "notes")
    os._exit(0)
print(pid, flush=True)
os.waitpid(pid, 0)  # reaped: a zombie still counts as alive
print("reaped", flush=True)
sys.stdin.readline()  # lives on until the test is done
"""


def test_a_download_killed_in_a_forked_child_is_taken_over_while_its_parent_lives(
        deployment: Deployment, tmp_path: Path) -> None:
    """A process that downloaded a blob forks; its child's download of
    another blob is SIGKILLed after committing pieces, while the parent
    lives on. The child named itself, not its parent, as the owner of what
    it staged: a third process takes the pieces over and asks for the rest.
    (Named as the live parent, they would look in use and be fetched
    again from the first byte.)"""
    d, data = deployment, photo(SIZE, "kill-down-forked")
    first, target = d.target(), d.target()
    with open_device(tmp_path, "desk") as s:
        s.local_upsert("notes", {"id": "n0", "photo": s.blob_put(photo(64 << 10, "small"), "image/jpeg")})
        assert s.sync_up(first, "notes")["blobs"] == 1
    ref, home, store_bytes = photo_shared_and_empty_home(tmp_path, target, data)

    parent = subprocess.Popen([sys.executable, "-c", FORKED, RAW_KEY.hex(), str(tmp_path / "scratch.tureen"),
                               json.dumps(first), str(home), json.dumps(target)],
                              env=child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert parent.stdin is not None and parent.stdout is not None
    try:
        assert parent.stdout.readline().strip() == "ready"
        d.files.stall = True
        before = store_bytes()
        parent.stdin.write("go\n")
        parent.stdin.flush()
        child = int(parent.stdout.readline())
        try:
            # As in the test above: past 10 MiB in the file.
            assert wait_until(lambda: d.files.stalled.is_set() and store_bytes() > before + (10 << 20), WAIT), \
                "the child's download never got under way"
        finally:
            os.kill(child, signal.SIGKILL)
        assert parent.stdout.readline().strip() == "reaped"
        d.files.release.set()
        d.files.stall = False

        d.files.ranges.clear()
        assert resumed(home, "down", target) == {"status": "DONE", "blobs": 1}
        assert parent.poll() is None, "the parent must live through the resumed run"
        assert_asked_for_the_rest(d.files.ranges)
    finally:
        parent.kill()
        parent.wait(30)
    with tureen.Store.open(str(home), raw_key=RAW_KEY) as s:
        s.check()
        assert every_reference_resolves(s) == 1 and s.blob_get(ref) == data
        assert s.collect_blobs(0) == 0
