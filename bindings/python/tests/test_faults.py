"""Fault points (docs/faults.md): a test build of the library, made by `make
lib-faults` and named by $TUREEN_FAULT_LIB, crashes, fails or pauses at
named places as the seed in its environment decides.

Each test runs device processes on that build against a real Kinto (pages
of 5 records, batches of 5 changes) and checks what the next, fault-free
process finds: a crash after the server's answer and before the commit, a
crash or an I/O error between a page's commit and the state's save, an
I/O error at a store commit. The release library must carry none of it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

import tureen
from conftest import REPO, new_kinto_collection, run_python
from fault_build import CRASH_STATUS, FAULT_LIB, PREFIX, fault_env, fault_lines, fired, only
from servers import AttachmentKinto, KintoServer
from sync_support import entries, is_clean, kinto_client

pytestmark = pytest.mark.skipif(not os.path.isfile(FAULT_LIB),
                                reason="no fault build: `make lib-faults` makes it, `make fault-test` runs these")

KEY = "5e" * 32
SOUP = "notes"

# Every fault point, as docs/faults.md lists them.
POINTS = (
    "http.answer_arriving", "http.answer_read",
    "store.commit", "store.committed", "store.close.midway", "session.close.engine_stopped",
    "sync.up.collected", "sync.up.after_answer_before_commit",
    "sync.down.page_before_state", "sync.down.page_committed", "sync.run.before_end",
    "sync.loop.cycle", "blob.upload.piece", "blob.download.piece",
)
ENV_NAMES = ("TUREEN_FAULT_SEED", "TUREEN_FAULT_RATE", "TUREEN_FAULT_POINTS", "TUREEN_FAULT_ACTIONS",
             "TUREEN_FAULT_DELAY_MS")

# A device: runs the steps given as JSON and prints one JSON line per step
# (its result, or the status code it failed with), flushed at once, so what
# a crash cut short is plain. A marker step writes to stderr, between the
# fault lines, to say which hits fell on which step.
DEVICE = r"""
import json, sys
import tureen
from tureen import sync
from sync_support import photo

plan = json.loads(sys.argv[1])
store = tureen.Store.open(plan["path"], raw_key=plan["key"])
if not store.soup_exists(plan["soup"]):
    store.register_soup(plan["soup"], [("id", "string"), ("v", "integer")])
for step in plan["steps"]:
    kind = step[0]
    try:
        if kind == "mark":
            sys.stderr.write("mark %s\n" % step[1]); sys.stderr.flush(); out = None
        elif kind == "upsert":
            out = store.local_upsert(plan["soup"], {"v": step[1]})["_soupEntryId"]
        elif kind == "note":  # a record with a blob of step[2] bytes
            ref = store.blob_put(photo(step[2], "note-%d" % step[1]))
            out = store.local_upsert(plan["soup"], {"v": step[1], "photo": ref})["_soupEntryId"]
        elif kind == "photo":  # the blob of the record with v = step[1], as it is here
            (e,) = [e for e in store.query(tureen.query.all(plan["soup"]), 0) if e["v"] == step[1]]
            out = store.blob_get(e["photo"]) == photo(step[2], "note-%d" % step[1])
        elif kind == "sync_up":
            out = store.sync_up(plan["target"], plan["soup"], name=step[1])["status"]
        elif kind == "sync_down":
            out = store.sync_down(plan["target"], plan["soup"], name=step[1])["status"]
        elif kind == "resync":
            out = store.resync(step[1])["status"]
        else:
            raise ValueError(kind)
        print(json.dumps({"step": step, "ok": out}), flush=True)
    except tureen.Error as e:
        print(json.dumps({"step": step, "code": int(e.code)}), flush=True)
        sys.stderr.write("step %s: %s\n" % (step, e))
store.close()
"""


@pytest.fixture(scope="module")
def kinto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KintoServer]:
    """Kinto in memory whose pages hold 5 records and batches 5 requests,
    so a dozen records make several of each."""
    server = KintoServer("memory", tmp_path_factory.mktemp("kinto-faults"),
                         settings={"kinto.paginate_by": "5", "kinto.batch_max_requests": "5"})
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def target(kinto: KintoServer) -> Dict[str, Any]:
    return dict(new_kinto_collection(kinto), type="kinto")


class Run:
    """A device process's end: its exit status, its steps' results, and
    the fault lines it wrote."""

    def __init__(self, done: "subprocess.CompletedProcess[str]") -> None:
        self.status = done.returncode
        self.stderr = done.stderr
        self.results = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        self.faults = fault_lines(done.stderr)

    def fired(self) -> List[Tuple[str, int, str]]:
        return fired(self.stderr)


def device(path: Path, target: Dict[str, Any], steps: List[List[Any]], faults: Optional[Dict[str, str]] = None) -> Run:
    """Runs DEVICE on the fault build; `faults` is its TUREEN_FAULT_*
    environment (none: the build runs without faults)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TUREEN_FAULT_")}
    env.update(faults or {})
    env["TUREEN_LIB"] = FAULT_LIB
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).parent), env.get("PYTHONPATH", "")])  # sync_support
    plan = {"path": str(path), "key": KEY, "soup": SOUP, "target": target, "steps": steps}
    return Run(run_python(DEVICE, [json.dumps(plan)], timeout=120, env=env))


def server_records(kinto: KintoServer, target: Dict[str, Any]) -> List[Dict[str, Any]]:
    return list(kinto_client(target).get_records())


def local_entries(path: Path) -> List[Dict[str, Any]]:
    """The soup's entries, read by the release library after the store's
    integrity check passed."""
    with tureen.Store.open(path, raw_key=KEY) as s:
        s.check()
        return entries(s, SOUP)


def assert_in_step(path: Path, kinto: KintoServer, target: Dict[str, Any], values: List[int]) -> None:
    """The server holds one record per value, no more; the device holds the
    same records, each clean."""
    server = server_records(kinto, target)
    assert sorted(r["v"] for r in server) == sorted(values)
    local = local_entries(path)
    assert [e for e in local if not is_clean(e)] == []
    assert sorted((e["id"], e["v"]) for e in local) == sorted((r["id"], r["v"]) for r in server)


# ---------------------------------------------------------------------------


def test_only_the_fault_build_carries_fault_points() -> None:
    release = Path(tureen.LIBRARY_PATH).read_bytes()
    faults = Path(FAULT_LIB).read_bytes()
    names = [p.encode() for p in POINTS + ENV_NAMES] + [PREFIX.encode()]
    assert [n for n in names if n not in faults] == []
    assert [n for n in names if n in release] == []
    exported = subprocess.run(["nm", "-D", "--defined-only", tureen.LIBRARY_PATH], capture_output=True, text=True,
                              check=True).stdout.split()
    assert [s for s in exported if "fault" in s.lower()] == []


def test_the_documented_points_are_the_points() -> None:
    doc = (REPO / "docs" / "faults.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\| `([a-z_.]+)` \|", doc, flags=re.M)
    assert sorted(listed) == sorted(POINTS)
    sources = "".join(p.read_text(encoding="utf-8") for p in (REPO / "Sources").rglob("*.swift"))
    assert sorted(set(re.findall(r'Fault\.point\("([a-z_.]+)"', sources))) == sorted(POINTS)


def test_a_crash_after_the_servers_answer_and_before_the_commit(tmp_path: Path, kinto: KintoServer,
                                                                target: Dict[str, Any]) -> None:
    path = tmp_path / "device.db"
    # 12 new records without ids (the library gives them one): batches of 5, 5 and 2.
    first = device(path, target, [["upsert", v] for v in range(12)] + [["sync_up", "up"]],
                   only("sync.up.after_answer_before_commit", 2, "crash"))
    assert first.status == CRASH_STATUS, first.stderr
    assert first.fired() == [("sync.up.after_answer_before_commit", 2, "crash")]
    assert len(first.results) == 12  # the 12 upserts; the sync never returned
    # The server applied the first two batches; the device recorded one.
    assert len(server_records(kinto, target)) == 10
    assert sum(1 for e in local_entries(path) if is_clean(e)) == 5

    again = device(path, target, [["resync", "up"]])
    assert again.status == 0, again.stderr
    assert again.results == [{"step": ["resync", "up"], "ok": "DONE"}]
    assert_in_step(path, kinto, target, list(range(12)))


@pytest.mark.parametrize("point,hit,action", [
    # Request 1 asks the server's limits, 2 to 4 send the three batches: cut
    # after the server applied a batch, before its answer is read or used.
    ("http.answer_arriving", 2, "crash"),
    ("http.answer_arriving", 3, "crash"),
    ("http.answer_read", 4, "crash"),
    # A connection lost there: the request is sent again.
    ("http.answer_arriving", 3, "error"),
    ("http.answer_read", 2, "error"),
])
def test_an_answer_lost_on_the_wire(tmp_path: Path, kinto: KintoServer, target: Dict[str, Any],
                                    point: str, hit: int, action: str) -> None:
    path = tmp_path / "device.db"
    first = device(path, target, [["upsert", v] for v in range(12)] + [["sync_up", "up"]], only(point, hit, action))
    assert first.fired() == [(point, hit, action)]
    assert first.status == (CRASH_STATUS if action == "crash" else 0), first.stderr
    if action == "error":  # sent again within the run, recognised as applied
        assert first.results[-1] == {"step": ["sync_up", "up"], "ok": "DONE"}
    again = device(path, target, [["resync", "up"]])
    assert again.status == 0, again.stderr
    assert again.results == [{"step": ["resync", "up"], "ok": "DONE"}]
    assert_in_step(path, kinto, target, list(range(12)))


def fill(target: Dict[str, Any], n: int) -> List[int]:
    with kinto_client(target).batch() as batch:
        for v in range(n):
            batch.create_record(id="s%02d" % v, data={"v": v})
    return list(range(n))


@pytest.mark.parametrize("point,hit,action", [
    ("sync.down.page_committed", 2, "crash"),      # pages 1-2 and their state in, the end not
    ("sync.down.page_before_state", 2, "crash"),   # page 2 written, not committed
    ("sync.down.page_before_state", 2, "error"),   # its commit fails: TUREEN_E_IO
    ("sync.run.before_end", 2, "crash"),           # every page in, the run's end not saved
])
def test_sync_down_interrupted_between_a_page_and_the_state(tmp_path: Path, kinto: KintoServer,
                                                            target: Dict[str, Any],
                                                            point: str, hit: int, action: str) -> None:
    values = fill(target, 12)
    path = tmp_path / "device.db"
    # sync.run.before_end's first hit ends the empty sync up made first.
    steps = [["sync_up", "up"], ["sync_down", "down"]]
    first = device(path, target, steps, only(point, hit, action))
    assert first.fired() == [(point, hit, action)]
    if action == "crash":
        assert first.status == CRASH_STATUS, first.stderr
        assert first.results == [{"step": ["sync_up", "up"], "ok": "DONE"}]
    else:
        assert first.status == 0, first.stderr
        assert first.results[1] == {"step": ["sync_down", "down"], "code": int(tureen.Status.IO)}
    kept = local_entries(path)
    assert all(is_clean(e) for e in kept)
    # What came before the fault stayed, in whole pages: the first of 5
    # records, the second (which may bring the first's last again) only
    # when it committed.
    if point == "sync.down.page_committed":
        assert 5 < len(kept) < 12
    else:
        assert len(kept) == {"sync.down.page_before_state": 5, "sync.run.before_end": 12}[point]

    again = device(path, target, [["resync", "down"], ["sync_up", "up"]])
    assert again.status == 0, again.stderr
    assert [r.get("ok") for r in again.results] == ["DONE", "DONE"]
    assert_in_step(path, kinto, target, values)


def test_an_io_error_at_a_store_commit(tmp_path: Path, kinto: KintoServer, target: Dict[str, Any]) -> None:
    path = tmp_path / "device.db"
    steps = [step for v in range(8) for step in (["mark", "upsert %d" % v], ["upsert", v])]
    # A first run that delays every commit by 1 ms logs each one, and
    # which upsert it fell in.
    probe = device(path, target, steps, fault_env(3, rate=1, points=["store.commit"], actions=["delay"], delay_ms=1))
    assert probe.status == 0, probe.stderr
    lines = probe.stderr.splitlines()
    within = lines[lines.index("mark upsert 3") + 1:lines.index("mark upsert 4")]
    hits = [int(m.group(1)) for m in (re.match(PREFIX + r"point=store\.commit hit=(\d+)", x) for x in within) if m]
    assert len(hits) >= 1
    Path(path).unlink()
    for f in tmp_path.glob("device.db-*"):
        f.unlink()

    # The same run, the fourth upsert's last commit failing.
    run = device(path, target, steps, only("store.commit", hits[-1], "error"))
    assert run.status == 0, run.stderr
    assert run.fired() == [("store.commit", hits[-1], "error")]
    codes = [r.get("code") for r in run.results if r["step"][0] == "upsert"]
    assert codes == [None, None, None, int(tureen.Status.IO), None, None, None, None]
    assert sorted(e["v"] for e in local_entries(path)) == [0, 1, 2, 4, 5, 6, 7]

    # The store goes on: the refused write made again, then synced.
    again = device(path, target, [["upsert", 3], ["sync_up", "up"]])
    assert again.status == 0, again.stderr
    assert_in_step(path, kinto, target, list(range(8)))


@pytest.mark.parametrize("point", ["session.close.engine_stopped", "store.close.midway", "store.committed"])
def test_a_crash_while_closing_or_just_after_a_commit(tmp_path: Path, kinto: KintoServer, target: Dict[str, Any],
                                                      point: str) -> None:
    path = tmp_path / "device.db"
    # store.committed: at the process's last commit, which a run that only
    # logs the hits finds (the last upsert's, or one of close's).
    steps = [["upsert", v] for v in range(6)] + [["sync_up", "up"], ["upsert", 6]]
    hit = 1
    if point == "store.committed":
        probe = device(tmp_path / "probe.db", dict(new_kinto_collection(kinto), type="kinto"), steps,
                       fault_env(5, rate=1, points=[point], actions=["delay"], delay_ms=1))
        hit = probe.fired()[-1][1]
    run = device(path, target, steps, only(point, hit, "crash"))
    assert run.status == CRASH_STATUS, run.stderr
    assert run.fired() == [(point, hit, "crash")]
    assert [r.get("ok") for r in run.results][-2] == "DONE"
    with tureen.Store.open(path, raw_key=KEY) as s:
        s.check()
        assert sorted(e["v"] for e in entries(s, SOUP)) == list(range(7))
    again = device(path, target, [["sync_up", "up"]])
    assert again.results == [{"step": ["sync_up", "up"], "ok": "DONE"}], again.stderr
    assert_in_step(path, kinto, target, list(range(7)))


@pytest.fixture(scope="module")
def attachments(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AttachmentKinto]:
    with AttachmentKinto(tmp_path_factory.mktemp("attachments")) as server:
        yield server


def test_blobs_cut_between_pieces(tmp_path: Path, attachments: AttachmentKinto) -> None:
    target = dict(new_kinto_collection(attachments.kinto), type="kinto", create=True,
                  attachments_url=attachments.files_url)
    size = 2 << 20
    # The upload dies a few pieces in; a new process sends the record and its blob.
    desk = tmp_path / "desk.db"
    up = device(desk, target, [["note", 1, size], ["sync_up", "up"]], only("blob.upload.piece", 5, "crash"))
    assert up.status == CRASH_STATUS, up.stderr
    assert up.fired() == [("blob.upload.piece", 5, "crash")]
    assert server_records(attachments.kinto, target) == []
    again = device(desk, target, [["resync", "up"]])
    assert again.results == [{"step": ["resync", "up"], "ok": "DONE"}], again.stderr
    # Another device's download breaks a few pieces in: fetched again within the run.
    home = tmp_path / "home.db"
    down = device(home, target, [["sync_down", "down"], ["photo", 1, size]], only("blob.download.piece", 5, "error"))
    assert down.fired() == [("blob.download.piece", 5, "error")]
    assert down.results == [{"step": ["sync_down", "down"], "ok": "DONE"}, {"step": ["photo", 1, size], "ok": True}]
    assert_in_step(home, attachments.kinto, target, [1])


def test_the_same_seed_fires_the_same_faults(tmp_path: Path, kinto: KintoServer) -> None:
    def run(seed: int, n: int) -> List[str]:
        target = dict(new_kinto_collection(kinto), type="kinto")
        steps = [["upsert", v] for v in range(20)] + [["sync_up", "up"], ["sync_down", "down"]]
        r = device(tmp_path / ("run%d.db" % n), target, steps, fault_env(seed, rate=0.3, actions=["delay"], delay_ms=2))
        assert r.status == 0, r.stderr
        assert [x.get("ok") for x in r.results[-2:]] == ["DONE", "DONE"]
        return sorted(r.faults)

    first, second, other = run(1234, 1), run(1234, 2), run(99, 3)
    assert len(first) >= 5
    assert first == second
    assert other != first
