"""A large blob up to and down from Kinto with the kinto-attachment plugin,
Tureen against curl moving the same file to and from the same server.

Starts Kinto (memory backend, kinto-attachment storing files on the local
file system) and a plain HTTP file server for those files, as
test_blobs_kinto.py does, writes a file of BENCH_BLOB_KINTO_MIB MiB, then,
BENCH_REPS times, sides alternating, each in a process of its own:

- up, Tureen: a fresh store holds the file as a blob (tureen_blob_put from
  the path, untimed) and one entry refers to it; timed: tureen_sync_up to a
  fresh collection (it asks whether the server has the blob, makes the
  companion collection, uploads the blob as a multipart POST streamed from
  the store, then sends the record).
- up, curl: ``curl -F attachment=@file`` POSTed to a record's /attachment
  in a fresh collection (the same endpoint Tureen uses).
- down, Tureen: timed: tureen_sync_down into a fresh store (the record, the
  companion record, then the file from the file server, hashed and sealed
  into the blob's file beside the store as it arrives, flushed with
  fdatasync before the record may refer to it).
- down, curl: ``curl -o file`` of the same file from the file server, a
  reference: curl leaves the bytes in the page cache.
- down, curl then fdatasync: the same download, and the time fdatasync(2)
  of the file it wrote then takes, added: the durable floor a store that
  must still hold the blob after a crash is measured against.

Each process's peak RSS comes from wait4; Tureen's includes the Python
interpreter (the report gives an idle one's).

Usage: python bench/blobs_kinto_bench.py   (make bench runs it)
Settings: BENCH_BLOB_KINTO_MIB (256), BENCH_REPS (3), BENCH_TMP (/tmp).
Exit status: 0 when everything ran (whether or not a bar was met), 1 on
any error.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bindings" / "python" / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bindings" / "python"))

from servers import AttachmentKinto, KintoServer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bars  # noqa: E402

AUTH = {"user": "alice", "password": "pw"}
RAW_KEY = bytes(range(32))
BAR = {"up": 1.2, "down": 1.3}  # Tureen's time / curl's (up), / curl's and fdatasync's (down), at most
SOUP = "files"


def child(mode: str, store_path: str, target_json: str, source: str) -> None:
    """Runs in a process of its own: one timed sync, its seconds printed."""
    import tureen

    target = json.loads(target_json)
    with tureen.Store.open(store_path, raw_key=RAW_KEY) as s:
        s.register_soup(SOUP, [{"path": "id", "type": "string"}])
        if mode == "idle":
            print(json.dumps({"secs": 0}))
            return
        if mode == "up":
            ref = s.blob_put(Path(source), "application/octet-stream")
            s.local_upsert(SOUP, {"id": "f1", "name": "source.bin", "file": ref})
            t0 = time.monotonic()
            state = s.sync_up(target, SOUP)
            secs = time.monotonic() - t0
        else:
            t0 = time.monotonic()
            state = s.sync_down(target, SOUP)
            secs = time.monotonic() - t0
        if state["status"] != "DONE" or state["blobs"] != 1:
            raise SystemExit("tureen: sync %s ended %s with %s blobs" % (mode, state["status"], state.get("blobs")))
        (entry,) = s.query(tureen.query.all(SOUP), 0)
        info = s.blob_info(entry["file"])
        if info is None or info["length"] != os.path.getsize(source):
            raise SystemExit("tureen: the blob is not stored whole after sync %s" % mode)
    print(json.dumps({"secs": secs}))


def run(cmd: List[str]) -> Tuple[str, float, float]:
    """Runs cmd; returns its stdout, wall seconds and peak RSS in MB."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE)
    assert p.stdout is not None
    out = p.stdout.read().decode()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    secs = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit("blobs_kinto_bench: %s failed (exit %d)" % (cmd[0], p.returncode))
    return out, secs, ru.ru_maxrss / 1024.0


def tureen_side(mode: str, store: Path, target: Dict[str, Any], source: Path) -> Tuple[float, float]:
    for suffix in ("", "-wal", "-shm"):
        Path(str(store) + suffix).unlink(missing_ok=True)
    out, _, peak = run([sys.executable, __file__, "--child", mode, str(store), json.dumps(target), str(source)])
    return float(json.loads(out.strip().splitlines()[-1])["secs"]), peak


def make_source(path: Path, mib: int) -> str:
    rng = random.Random(20261125)
    h = hashlib.sha256()
    with open(path, "wb") as f:
        for _ in range(mib):
            piece = rng.randbytes(1 << 20)
            h.update(piece)
            f.write(piece)
    return h.hexdigest()


def main() -> int:
    mib = int(os.environ.get("BENCH_BLOB_KINTO_MIB", "256"))
    reps = int(os.environ.get("BENCH_REPS", "3"))
    curl = "curl"
    with tempfile.TemporaryDirectory(prefix="blobs-kinto-bench-", dir=os.environ.get("BENCH_TMP") or None) as d:
        root = Path(d)
        source = root / "source.bin"
        print("writing the %d MiB source file" % mib, file=sys.stderr)
        hexdigest = make_source(source, mib)
        with AttachmentKinto(root) as server:
            return measure(server.kinto, server.files_url, root, source, hexdigest, mib, reps, curl)


def measure(kinto: KintoServer, files_url: str, root: Path, source: Path, hexdigest: str, mib: int, reps: int,
            curl: str) -> int:
    def fresh_target() -> Dict[str, Any]:
        suffix = uuid.uuid4().hex[:12]
        return {"type": "kinto", "url": kinto.url, "bucket": "b" + suffix, "collection": "c" + suffix,
                "auth": dict(AUTH), "create": True, "attachments_url": files_url}

    store = root / "device.tureen"
    _, idle_peak = tureen_side("idle", store, fresh_target(), source)
    curl_version = subprocess.run([curl, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    import tureen

    print("blobs_kinto_bench: a %d MiB blob through Kinto with kinto-attachment, Tureen against curl" % mib)
    print("  tureen_version       %s (%s)" % (tureen.version(), os.environ.get("TUREEN_LIB", "the binding's default")))
    print("  curl                 %s" % curl_version)
    print("  server               Kinto (memory backend, waitress, one process) with kinto_attachment, files on the")
    print("                       local file system, served by python -m http.server; all on 127.0.0.1")
    print("  up                   tureen: tureen_sync_up of one entry referring to the blob (stored beforehand,")
    print("                       untimed) into a fresh collection; curl: curl -F attachment=@file POST to")
    print("                       .../records/<id>/attachment of a fresh collection")
    print("  down                 tureen: tureen_sync_down (eager) into a fresh store; curl: curl -o of the file")
    print("  repetitions          %d per direction and side, sides alternating, median reported" % reps)
    print("  peak MB              ru_maxrss of each process from wait4; a Tureen process (Python + tureen) that opens a")
    print("                       store and does nothing peaks at %.1f MB" % idle_peak)
    print()
    sys.stdout.flush()

    times: Dict[str, List[float]] = {k: [] for k in ("up-tureen", "up-curl", "down-tureen", "down-curl",
                                                     "down-curl-fdatasync")}
    peaks: Dict[str, float] = {k: 0.0 for k in times}
    first_target: Dict[str, Any] = {}
    location = ""
    for rep in range(reps):
        target = fresh_target()
        secs, peak = tureen_side("up", store, target, source)
        _note(times, peaks, "up-tureen", secs, peak, rep, reps)
        if not first_target:
            first_target = target
            record = kinto.request("GET", "/buckets/%s/collections/%s-blobs/records/%s" % (
                target["bucket"], target["collection"], hexdigest), auth=AUTH)
            location = record.json()["data"]["attachment"]["location"]
        # curl: the same endpoint, in a collection of its own.
        bucket, coll = "curl" + uuid.uuid4().hex[:12], "blobs"
        kinto.create_collection(bucket, coll, AUTH)
        url = "%s/buckets/%s/collections/%s/records/%s/attachment" % (kinto.url, bucket, coll, hexdigest)
        out, secs, peak = run([curl, "-sS", "-f", "-u", "%s:%s" % (AUTH["user"], AUTH["password"]),
                               "-F", "attachment=@%s;type=application/octet-stream;filename=%s.bin" % (source, hexdigest),
                               url])
        if json.loads(out).get("hash") != hexdigest:
            raise SystemExit("curl: the server stored the upload with another hash: %s" % out[:300])
        _note(times, peaks, "up-curl", secs, peak, rep, reps)
    for rep in range(reps):
        secs, peak = tureen_side("down", store, first_target, source)
        _note(times, peaks, "down-tureen", secs, peak, rep, reps)
        fetched = root / "fetched.bin"
        _, secs, peak = run([curl, "-sS", "-f", "-o", str(fetched), location])
        if os.path.getsize(fetched) != mib << 20:
            raise SystemExit("curl: the download has %d bytes" % os.path.getsize(fetched))
        _note(times, peaks, "down-curl", secs, peak, rep, reps)
        _note(times, peaks, "down-curl-fdatasync", secs + fdatasync_secs(fetched), peak, rep, reps)
        fetched.unlink()

    print("%-24s | %-22s | %-22s | %-11s | %-22s | %s" % ("workload", "tureen", "curl", "ratio", "bar",
                                                          "peak MB (tureen / curl)"))
    print("-" * 24 + "-+-" + "-" * 22 + "-+-" + "-" * 22 + "-+-" + "-" * 11 + "-+-" + "-" * 22 + "-+-" + "-" * 24)
    rows = [("upload %d MiB" % mib, "up-tureen", "up-curl", "curl", "t/curl", BAR["up"]),
            ("download %d MiB" % mib, "down-tureen", "down-curl", "curl", "t/curl", None),
            ("download, kept on disk", "down-tureen", "down-curl-fdatasync", "curl+fdatasync", "t/(c+f)", BAR["down"])]
    for label, tk, ck, other, unit, bar in rows:
        t, c = statistics.median(times[tk]), statistics.median(times[ck])
        ratio = t / c if c > 0 else 0.0
        verdict = "- (reference)" if bar is None else "%s <= %.1f %s" % (unit, bar, "ok" if ratio <= bar else "BELOW BAR")
        print("%-24s | %-22s | %-22s | %-11s | %-22s | %.1f / %.1f" % (
            label, "%.3f s (%.1f MB/s)" % (t, (mib << 20) / 1e6 / t), "%.3f s (%.1f MB/s)" % (c, (mib << 20) / 1e6 / c),
            "%.2f %s" % (ratio, unit), verdict, peaks[tk], peaks[ck.replace("-fdatasync", "")]))
        if bar is not None:
            bars.record("blobs_kinto", label, "%.3f s" % t, "%s %.3f s" % (other, c), "%.2f %s" % (ratio, unit),
                        "%s <= %.1f" % (unit, bar), ratio <= bar)
    print()
    print("Times are medians; t/curl is Tureen's time divided by curl's (lower is better for Tureen).")
    print("t/(c+f): Tureen's download against curl's followed by fdatasync(2) of the file it wrote (the same")
    print("repetition's two times added). curl alone leaves the bytes in the page cache; kept on disk, its own")
    print("download takes %.2fx its time (a store can overlap part of the disk's work with the download)." % (
        statistics.median(times["down-curl-fdatasync"]) / statistics.median(times["down-curl"])))
    print("Each repetition, seconds:")
    for way in ("up", "down"):
        print("  %-5s tureen: %s; curl: %s" % (way, " ".join("%.3f" % x for x in times[way + "-tureen"]),
                                               " ".join("%.3f" % x for x in times[way + "-curl"])))
    print("  down  curl then fdatasync: %s" % " ".join("%.3f" % x for x in times["down-curl-fdatasync"]))
    return 0


def fdatasync_secs(path: Path) -> float:
    """The time fdatasync(2) takes to put a just-written file on disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        t0 = time.monotonic()
        os.fdatasync(fd)
        return time.monotonic() - t0
    finally:
        os.close(fd)


def _note(times: Dict[str, List[float]], peaks: Dict[str, float], key: str, secs: float, peak: float, rep: int,
          reps: int) -> None:
    times[key].append(secs)
    peaks[key] = max(peaks[key], peak)
    print("  %-12s rep %d/%d %7.3f s  peak %6.1f MB" % (key, rep + 1, reps, secs, peak), file=sys.stderr)


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
        sys.exit(0)
    sys.exit(main())
