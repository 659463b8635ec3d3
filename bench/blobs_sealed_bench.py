"""Blobs on an encrypted Kinto target (sealed, issue 49 item 3) against the
same blobs in clear: time and peak memory of a sync up and a sync down of
one blob, at two sizes, so that a run shows what sealing costs and that a
process's peak memory does not grow with the blob's size.

Uses blobs_kinto_bench.py's server (Kinto, memory backend, with
kinto-attachment and a plain file server) and its child processes: each
sync runs in a process of its own, its peak RSS from wait4 (it includes
the Python interpreter).

Usage: python bench/blobs_sealed_bench.py
Settings: BENCH_BLOB_SEALED_MIB ("16,128": the sizes), BENCH_REPS (3),
BENCH_TMP (/tmp). Not part of `make bench`: it has no bar; its figures are
quoted in the report of the change that sealed blobs.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
import blobs_kinto_bench as kb  # noqa: E402

from servers import AttachmentKinto  # noqa: E402

KEYS = {"keys": [{"id": "k1", "key": "11" * 32}]}


def main() -> int:
    sizes = [int(x) for x in os.environ.get("BENCH_BLOB_SEALED_MIB", "16,128").split(",")]
    reps = int(os.environ.get("BENCH_REPS", "3"))
    rows: List[Tuple[str, int, str, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="blobs-sealed-bench-", dir=os.environ.get("BENCH_TMP") or None) as d:
        root = Path(d)
        with AttachmentKinto(root) as server:
            def target(sealed: bool) -> Dict[str, Any]:
                suffix = uuid.uuid4().hex[:12]
                t: Dict[str, Any] = {"type": "kinto", "url": server.kinto.url, "bucket": "b" + suffix,
                                     "collection": "c" + suffix, "auth": dict(kb.AUTH), "create": True,
                                     "attachments_url": server.files_url}
                if sealed:
                    t["encryption"] = KEYS
                return t

            store = root / "device.tureen"
            _, idle = kb.tureen_side("idle", store, target(False), root / "none")
            for mib in sizes:
                source = root / "source.bin"
                kb.make_source(source, mib)
                for sealed in (False, True):
                    times: Dict[str, List[float]] = {"up": [], "down": []}
                    peaks = {"up": 0.0, "down": 0.0}
                    for _ in range(reps):
                        t = target(sealed)
                        for way in ("up", "down"):
                            secs, peak = kb.tureen_side(way, store, t, source)
                            times[way].append(secs)
                            peaks[way] = max(peaks[way], peak)
                    for way in ("up", "down"):
                        rows.append(("sealed" if sealed else "clear", mib, way, statistics.median(times[way]), peaks[way]))
                source.unlink()
    print("blobs_sealed_bench: one blob up to and down from Kinto with kinto-attachment, sealed against clear")
    print("  a process that opens a store and does nothing peaks at %.1f MB; medians of %d repetitions" % (idle, reps))
    print("%-8s | %-8s | %-5s | %-22s | %s" % ("blob", "size", "way", "time", "peak MB"))
    for kind, mib, way, secs, peak in rows:
        print("%-8s | %4d MiB | %-5s | %-22s | %.1f" % (kind, mib, way, "%.3f s (%.1f MB/s)" % (secs, (mib << 20) / 1e6 / secs), peak))
    for mib in sizes:
        for way in ("up", "down"):
            clear = next(r[3] for r in rows if r[0] == "clear" and r[1] == mib and r[2] == way)
            sealed_t = next(r[3] for r in rows if r[0] == "sealed" and r[1] == mib and r[2] == way)
            print("sealed/clear %4d MiB %-5s %.2f" % (mib, way, sealed_t / clear))
    return 0


if __name__ == "__main__":
    sys.exit(main())
