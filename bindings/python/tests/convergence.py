"""Many devices converging on one Kinto collection, with kills.

Each device is a process of its own with its own encrypted store (this file
run as ``convergence.py device ...``). It makes random local creates,
updates and deletes and syncs at random: sync down or up, merge mode
OVERWRITE or LEAVE_IF_CHANGED, conflicts resolved at random (yours, theirs,
merged). Meanwhile :func:`run` SIGKILLs devices (and restarts them: they
reopen their store and go on) and gunicorn workers. Then it quiesces: every
device syncs up until it has nothing left to send, then every device syncs
down, and :func:`run` checks:

* every device holds exactly the server's records;
* no record twice in a device's soup;
* every create a sync up acknowledged is on the server, unless its owner
  deleted it later; every delete a sync up acknowledged stays deleted;
* every device's own records hold, on the server, the last value the device
  wrote (no local write lost, whatever synced down meanwhile);
* no device has local changes or conflicts left; every store passes its
  integrity check.

Records: ``shared-<n>``, made on the server before the devices start, which
every device updates (the conflicts) and nobody deletes; and each device's
own ``d<dev>-<life>-<n>``, which only their device updates and deletes (so a
delete is final and can be checked). Every choice comes from a seeded random
generator; the seed is in every failure message.

Used by test_sync_kinto_workers.py (small) and bench/converge_bench.py (large).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, Tuple

import proof_checks

HERE = Path(__file__).resolve().parent
SOUP = "items"
RAW_KEY_BYTE = "c0"
SHARED = 8
AUTH = {"user": "alice", "password": "pw"}
FLAGS = ("__local__", "__locally_created__", "__locally_updated__", "__locally_deleted__")


class ConvergenceError(AssertionError):
    pass


# --- the device (a process of its own) --------------------------------------


def _app_fields(record: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in record.items()
            if not k.startswith("_soup") and not k.startswith("__") and k != "last_modified"}


class Device:
    def __init__(self, directory: Path, dev: int, target: Dict[str, Any], seed: int, life: int) -> None:
        import tureen
        self.tureen = tureen
        self.dir = directory
        self.dev = dev
        self.target = target
        self.life = life
        self.rng = random.Random("%d/%d/%d" % (seed, dev, life))
        self.store = tureen.Store.open(directory / "store.db", raw_key=RAW_KEY_BYTE * 32)
        if not self.store.soup_exists(SOUP):
            self.store.register_soup(SOUP, [("id", "string"), ("owner", "integer")])
        self.journal = open(directory / "journal", "a", encoding="utf-8")
        self.made = 0
        self.wrote = 0
        self.last_written = ""
        # An edit of a record with a change not yet confirmed: a sync down
        # comes soon after it more often.
        self.edited_unconfirmed = False
        # The clean values last journaled as read (empty in a new life: the
        # first sync journals them all again).
        self.seen: Dict[str, str] = {}

    def close(self) -> None:
        self.journal.close()
        self.store.close()

    def note(self, line: str) -> None:
        # Written before the call it announces returns to anyone: a kill may
        # lose the last line, never make one up.
        self.journal.write(line + "\n")
        self.journal.flush()

    # what the store holds

    def entries(self) -> List[Dict[str, Any]]:
        from tureen import query
        return list(self.store.iter_query(query.all(SOUP, order_path="_soupEntryId", page_size=500)))

    def own_live(self) -> List[Dict[str, Any]]:
        from tureen import query
        return [e for e in self.store.iter_query(query.exact(SOUP, "owner", self.dev, page_size=500))
                if not e.get("__locally_deleted__")]

    def syncs(self) -> Dict[str, Dict[str, Any]]:
        return {s["name"]: s for s in self.store.syncs() if s.get("name")}

    def token(self) -> str:
        """A value no other write has (proof_checks.py reads it back)."""
        self.wrote += 1
        return "%d.%d.%d" % (self.dev, self.life, self.wrote)

    def note_reads(self) -> None:
        """Journals the clean records whose value changed since the last
        call (``read``) and the ones gone (``gone``)."""
        entries = self.entries()
        now = {e["id"]: str(e.get("v")) for e in entries if not any(e.get(f) for f in FLAGS)}
        for rid, v in sorted(now.items()):
            if self.seen.get(rid) != v:
                self.note("read %s %s" % (rid, v))
        held = {e["id"] for e in entries}
        for rid in sorted(set(self.seen) - held):
            self.note("gone %s" % rid)
        # A record with local changes keeps the value last read.
        self.seen = {rid: v for rid, v in self.seen.items() if rid in held}
        self.seen.update(now)

    # operations

    def write_own(self, record: Dict[str, Any]) -> None:
        # "want" before and "did" after: a kill between the two leaves the
        # value unknown, and the check skips that record until a later write.
        self.note("want %s %s" % (record["id"], record["v"]))
        self.store.local_upsert(SOUP, record)
        self.note("did %s %s" % (record["id"], record["v"]))
        self.last_written = record["id"]

    def create(self) -> None:
        rid = "d%d-%d-%d" % (self.dev, self.life, self.made)
        self.made += 1
        self.write_own({"id": rid, "owner": self.dev, "v": self.token()})

    def update_own(self) -> None:
        own = self.own_live()
        if own:
            # Half the time the record written last: a write whose answer
            # was lost, edited again before the next sync, is where the
            # engine has most to get right, and a uniform pick among
            # hundreds of records almost never makes it.
            last = [e for e in own if e["id"] == self.last_written]
            e = last[0] if last and self.rng.random() < 0.5 else self.rng.choice(own)
            self.edited_unconfirmed = bool(e.get("__local__"))
            self.write_own(dict(e, v=self.token()))

    def update_shared(self) -> None:
        from tureen import query
        rid = "shared-%d" % self.rng.randrange(SHARED)
        found = self.store.query(query.exact(SOUP, "id", rid))
        if found and not found[0].get("__locally_deleted__"):
            e = found[0]
            v = self.token()
            self.note("want %s %s" % (rid, v))
            self.store.local_upsert(SOUP, dict(e, **{"f%d" % self.dev: self.rng.randrange(1000), "v": v}))
            self.note("did %s %s" % (rid, v))

    def delete_own(self) -> None:
        own = self.own_live()
        if own:
            e = self.rng.choice(own)
            self.note("asked-delete %s" % e["id"])
            self.store.local_delete(SOUP, [e["_soupEntryId"]])

    def _run(self, name: str, kind: str, mode: str) -> bool:
        """Runs the sync; False if it ended on an error."""
        tureen = self.tureen
        try:
            existing = self.syncs().get(name)
            if existing is not None:
                if existing["options"].get("mergeMode") != mode:
                    self.store.sync_update(name, options={"mergeMode": mode})
                self.store.resync(name)
            elif kind == "down":
                self.store.sync_down(self.target, SOUP, name=name, merge_mode=mode)
            else:
                self.store.sync_up(self.target, SOUP, name=name, merge_mode=mode)
        except (tureen.NetworkError, tureen.HTTPError, tureen.ConflictError, tureen.BusyError):
            return False  # a killed worker, a refused batch: the next sync goes on
        return True

    def sync_down(self, mode: Optional[str] = None) -> None:
        from tureen import sync
        mode = mode or self.rng.choice([sync.OVERWRITE, sync.LEAVE_IF_CHANGED])
        # One sync down, its mode changed as needed: each sync down has its
        # own position, and a second one's first (full) run brings no
        # deletions, so records the first one holds and the server deleted
        # would stay (ghosts: clean_ghosts is for those).
        down = self.syncs().get("down")
        if mode == sync.OVERWRITE and (down is None or down["maxTimeStamp"] < 0):
            # A run from no position gives every record the server's copy,
            # local change or not (SmartSync's OVERWRITE): the last write
            # to one the server holds is unknown until the device writes it
            # again.
            for e in self.entries():
                if e.get("owner") == self.dev and e.get("__local__"):
                    self.note("want %s overwritten" % e["id"])
        self._run("down", "down", mode)
        self.note_reads()

    def sync_up(self, mode: Optional[str] = None, resolutions: Tuple[str, ...] = ("yours", "theirs", "merged")) -> None:
        from tureen import sync
        mode = mode or self.rng.choice([sync.OVERWRITE, sync.LEAVE_IF_CHANGED])
        pending = {e["id"]: e for e in self.entries() if e.get("__local__")}
        if not self._run("up-" + mode, "up", mode):
            # Some of these may have reached the server, answer lost: the
            # next edit of one, then a sync down, is what the engine must
            # get right (tureen.h: "A write whose answer never came").
            own = sorted(rid for rid, e in pending.items() if e.get("owner") == self.dev
                         and not e.get("__locally_deleted__"))
            if own:
                self.last_written = self.rng.choice(own)
        after = {e["id"]: e for e in self.entries()}
        for rid, before in pending.items():
            now = after.get(rid)
            if (not before.get("__locally_deleted__") and now is not None and not now.get("__local__")
                    and now.get("v") == before.get("v")):
                self.note("acked-write %s %s" % (rid, now.get("v")))
            if before.get("__locally_created__") and not before.get("__locally_deleted__"):
                if now is not None and not now.get("__local__"):
                    self.note("acked-create %s" % rid)
            elif before.get("__locally_deleted__") and now is None:
                self.note("acked-delete %s" % rid)
        self.note_reads()
        self.resolve(resolutions)

    def resolve(self, resolutions: Tuple[str, ...]) -> None:
        for c in self.store.conflicts(SOUP):
            choice = self.rng.choice(resolutions)
            # A device is the only writer of its own records: its copy is
            # the truth (a conflict there is its own create or update coming
            # back after a lost answer), and the check expects it.
            if c["id"].startswith("d%d-" % self.dev):
                choice = "yours"
            merged = None
            if choice == "merged":
                if c["theirs"] is None or c["yours"] is None:
                    choice = "yours"
                else:
                    merged = dict(_app_fields(c["theirs"]), **_app_fields(c["yours"]))
                    merged["v"] = self.token()
                    self.note("want %s %s" % (c["id"], merged["v"]))
            if choice == "yours" and c["yours"] is not None:
                # Its own value sent again, on purpose: not a replay.
                self.note("yours %s %s %d" % (c["id"], c["yours"].get("v"), int(time.time() * 1000)))
            self.store.resolve_conflict(SOUP, c["entryId"], choice, merged)
            if merged is not None:
                self.note("did %s %s" % (c["id"], merged["v"]))

    def step(self) -> str:
        r = self.rng.random()
        if self.edited_unconfirmed and r < 0.3:
            self.edited_unconfirmed = False
            self.sync_down()
            return "sync_down"
        for limit, op in ((0.25, self.create), (0.42, self.update_own), (0.57, self.update_shared),
                          (0.67, self.delete_own), (0.84, self.sync_up), (1.0, self.sync_down)):
            if r < limit:
                op()
                return op.__name__
        raise AssertionError("unreachable")

    def state(self) -> Dict[str, Any]:
        """What the controller checks, after quiescing."""
        entries = self.entries()
        ids = [e["id"] for e in entries]
        try:
            self.store.check()
            integrity = "ok"
        except self.tureen.TureenError as e:
            integrity = str(e)
        return {
            "records": {e["id"]: _app_fields(e) for e in entries},
            "duplicates": sorted({i for i in ids if ids.count(i) > 1}),
            "local": sorted(e["id"] for e in entries if any(e.get(f) for f in FLAGS)),
            "conflicts": len(self.store.conflicts(SOUP)),
            "integrity": integrity,
        }


def device_main(argv: List[str]) -> int:
    """convergence.py device DIR DEV SEED LIFE OPS TARGET_JSON MODE; MODE is
    "run" (random operations until OPS are done, counted in DIR/progress),
    "up" (quiesce: sync up until nothing is left to send), "down" (a last
    sync down) or "state" (prints what the controller checks)."""
    directory, dev, seed, life, ops, target_text, mode = argv
    d = Device(Path(directory), int(dev), json.loads(target_text), int(seed), int(life))
    try:
        if mode == "run":
            progress = d.dir / "progress"
            done = int(progress.read_text()) if progress.exists() else 0
            while done < int(ops):
                d.step()
                done += 1
                # Renamed into place: a kill mid-write leaves the old count.
                (d.dir / "progress.tmp").write_text(str(done))
                os.replace(d.dir / "progress.tmp", progress)
        elif mode == "up":
            from tureen import sync
            for attempt in range(8):
                # Later attempts take the server's side, so quiescing ends.
                d.sync_up(d.rng.choice([sync.OVERWRITE, sync.LEAVE_IF_CHANGED]),
                          ("yours", "theirs", "merged") if attempt < 3 else ("theirs",))
                if not any(e.get("__local__") for e in d.entries()) and not d.store.conflicts(SOUP):
                    break
        elif mode == "down":
            from tureen import sync
            for _ in range(5):
                d.sync_down(sync.OVERWRITE)
                if d.syncs()["down"]["status"] == "DONE":
                    break
        elif mode == "state":
            print(json.dumps(d.state()))
        else:
            raise SystemExit("unknown mode %r" % mode)
    finally:
        d.close()
    return 0


# --- the controller ---------------------------------------------------------


@dataclass
class Report:
    seed: int
    devices: int
    operations: int
    device_kills: int = 0
    worker_kills: int = 0
    run_seconds: float = 0.0
    quiesce_seconds: float = 0.0
    records: int = 0
    acked_creates: int = 0
    acked_deletes: int = 0
    checked_writes: int = 0
    partitions: int = 0
    #: What the fault proxy did, by fault (empty without it).
    faults: Dict[str, int] = field(default_factory=dict)
    #: The history checks' figures (all 0 without the history plugin);
    #: their problems are also in ``problems``.
    history: proof_checks.HistoryFigures = field(default_factory=proof_checks.HistoryFigures)
    problems: List[str] = field(default_factory=list)

    @property
    def throughput(self) -> float:
        return self.operations / self.run_seconds if self.run_seconds else 0.0


def _env() -> Dict[str, str]:
    env = dict(os.environ)
    binding = str(HERE.parent)
    env["PYTHONPATH"] = os.pathsep.join([binding] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    try:
        import tureen
        env["TUREEN_LIB"] = tureen.LIBRARY_PATH
    except ImportError:
        pass
    return env


class _Fleet:
    def __init__(self, root: Path, targets: List[Dict[str, Any]], seed: int, ops: int, n: int) -> None:
        self.root = root
        self.targets = targets
        self.seed = seed
        self.ops = ops
        self.procs: List[Optional[subprocess.Popen]] = [None] * n
        self.lives = [0] * n
        self.finished = [False] * n
        self.env = _env()
        for dev in range(n):
            self.dir(dev).mkdir(parents=True, exist_ok=True)

    def progress(self) -> int:
        """Operations done so far by all devices (each counts in its progress file)."""
        done = 0
        for dev in range(len(self.finished)):
            try:
                done += int((self.dir(dev) / "progress").read_text() or 0)
            except (OSError, ValueError):
                pass
        return done

    def dir(self, dev: int) -> Path:
        return self.root / ("device%d" % dev)

    def command(self, dev: int, mode: str) -> List[str]:
        return [sys.executable, str(Path(__file__).resolve()), "device", str(self.dir(dev)), str(dev), str(self.seed),
                str(self.lives[dev]), str(self.ops), json.dumps(self.targets[dev]), mode]

    def start(self, dev: int) -> None:
        self.lives[dev] += 1
        err = open(self.dir(dev) / "stderr", "ab")
        self.procs[dev] = subprocess.Popen(self.command(dev, "run"), env=self.env, stdin=subprocess.DEVNULL,
                                           stdout=subprocess.DEVNULL, stderr=err)
        err.close()

    def once(self, dev: int, mode: str, timeout: float) -> str:
        self.lives[dev] += 1
        done = subprocess.run(self.command(dev, mode), env=self.env, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise ConvergenceError("seed %d: device %d, %s, exited %d:\n%s"
                                   % (self.seed, dev, mode, done.returncode, done.stderr[-3000:]))
        return done.stdout

    def stderr_tail(self, dev: int) -> str:
        try:
            return (self.dir(dev) / "stderr").read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def kill_all(self) -> None:
        for p in self.procs:
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(30)


def _server_records(server: Any, bucket: str, collection: str) -> List[Dict[str, Any]]:
    from servers import http_request
    out: List[Dict[str, Any]] = []
    url = "%s/buckets/%s/collections/%s/records?_sort=id" % (server.url, bucket, collection)
    for _ in range(1000):
        r = http_request("GET", url, auth=AUTH, timeout=60)
        if r.status != 200:
            raise ConvergenceError("GET %s answered %d" % (url, r.status))
        out.extend(r.json()["data"])
        url = r.headers.get("next-page", "")
        if not url:
            return out
    raise ConvergenceError("too many pages")


def run(server: Any, root: Path, *, devices: int, ops: int, seed: int, device_kills: int,
        worker_kills: int, bucket: str = "converge", collection: str = "items",
        budget: float = 600.0, faults: bool = False, partitions: int = 0, replay: str = "",
        strict: bool = False, fault_shares: Optional[Dict[str, float]] = None) -> Report:
    """Runs the devices against ``server`` (a started KintoServer) in
    ``root``, each for ``ops`` operations, with up to ``device_kills`` and
    ``worker_kills`` kills spread over the run; quiesces and checks. Raises
    ConvergenceError (with the seed) on a failed check or past ``budget``
    seconds.

    With ``faults``, each device reaches Kinto through its own port of a
    seeded :class:`fault_proxy.FaultProxy` (its log: ``root/proxy.log``),
    and ``partitions`` cut one device or every device off for 1 to 6 s,
    spread over the run like the kills; quiescence runs without faults. On a
    server with Kinto's history plugin, proof_checks.py's checks run too.
    ``replay`` is the command a failure message gives to run the seed again;
    ``strict`` counts OVERWRITE's blind re-sends as replays (proof_checks.py);
    ``fault_shares`` changes the proxy's (fault_proxy.FAULTS)."""
    from servers import http_request
    rng = random.Random(seed)
    report = Report(seed=seed, devices=devices, operations=devices * ops)
    root.mkdir(parents=True, exist_ok=True)
    server.create_collection(bucket, collection, AUTH)
    for n in range(SHARED):
        r = http_request("PUT", "%s/buckets/%s/collections/%s/records/shared-%d" % (server.url, bucket, collection, n),
                         {"data": {"v": "init"}}, auth=AUTH)
        if r.status not in (200, 201):
            raise ConvergenceError("PUT shared-%d answered %d" % (n, r.status))
    target = {"type": "kinto", "url": server.url, "bucket": bucket, "collection": collection, "auth": dict(AUTH)}
    proxy = None
    if faults:
        from fault_proxy import FaultProxy
        proxy = FaultProxy(server.url, devices, seed, root / "proxy.log", faults=fault_shares).start()
    # Behind the proxy, a device cut off gives up on a request after 5 s
    # (the target's timeout_ms), as a phone on a dead network does, and
    # after 2 retries (the sync loop's way), so a cut leaves changes
    # unconfirmed instead of waiting it out.
    targets = [dict(target, url=proxy.url(dev), timeout_ms=5000, max_retries=2) if proxy else dict(target)
               for dev in range(devices)]
    fleet = _Fleet(root, targets, seed, ops, devices)
    deadline = time.monotonic() + budget
    t0 = time.monotonic()
    try:
        _drive(report, server, fleet, proxy, rng, device_kills, worker_kills, partitions, deadline, budget)
        # Quiesce: every device sends what it has, then every device
        # fetches, on a network healed of every fault. gunicorn may still be
        # replacing a killed worker: wait for it.
        if proxy is not None:
            proxy.calm()
        from servers import wait_until
        wait_until(lambda: len(server.worker_pids()) >= (server.workers or 0), 60)
        t1 = time.monotonic()
        for dev in range(devices):
            fleet.once(dev, "up", max(30.0, deadline - time.monotonic()))
        for dev in range(devices):
            fleet.once(dev, "down", max(30.0, deadline - time.monotonic()))
        report.quiesce_seconds = time.monotonic() - t1
    except ConvergenceError as e:
        raise ConvergenceError("%s\nreplay: %s" % (e, replay or "(seed %d)" % seed)) from None
    finally:
        if proxy is not None:
            proxy.stop()
            report.faults = dict(proxy.counts)
            report.partitions = proxy.counts["partition"] + proxy.counts["partition-all"]
    _check(report, server, fleet, bucket, collection, replay, strict)
    return report


def _drive(report: Report, server: Any, fleet: _Fleet, proxy: Any, rng: random.Random, device_kills: int,
           worker_kills: int, partitions: int, deadline: float, budget: float) -> None:
    """Runs the devices to the end of their operations, killing and
    cutting off on the way."""
    seed, devices, ops = fleet.seed, len(fleet.procs), fleet.ops
    t0 = time.monotonic()
    try:
        for dev in range(devices):
            fleet.start(dev)
        # Kills are spread over the run by the devices' progress, not by
        # time: on a fast machine the devices finished before a pause of
        # 0.2 to 1.5 s had passed, and the run tested no kill at all. Each
        # kill waits until the operations done by all devices pass its
        # point, drawn between 5 % and 90 % of the run.
        total = devices * ops
        kinds = ["device"] * device_kills + ["worker"] * worker_kills + ["partition"] * (partitions if proxy else 0)
        rng.shuffle(kinds)
        points = sorted(rng.uniform(0.05, 0.9) * total for _ in kinds)
        while not all(fleet.finished):
            if time.monotonic() > deadline:
                raise ConvergenceError("seed %d: the devices did not finish within %.0f s" % (seed, budget))
            time.sleep(rng.uniform(0.005, 0.03))
            for dev, p in enumerate(fleet.procs):
                if p is not None and not fleet.finished[dev] and p.poll() is not None:
                    if p.returncode != 0:
                        raise ConvergenceError("seed %d: device %d exited %d:\n%s"
                                               % (seed, dev, p.returncode, fleet.stderr_tail(dev)))
                    fleet.finished[dev] = True
            running = [d for d in range(devices) if not fleet.finished[d]]
            if not running:
                break
            if not points or fleet.progress() < points[0]:
                continue
            points.pop(0)
            kind = kinds.pop(0)
            if kind == "partition":
                assert proxy is not None
                # One in three cuts every device off; the others one device.
                proxy.partition(None if rng.random() < 1 / 3 else rng.choice(running), rng.uniform(1.0, 6.0),
                                rng.choice(["reset", "hang"]))
            elif kind == "device":
                dev = rng.choice(running)
                p = fleet.procs[dev]
                assert p is not None
                if p.poll() is None:
                    p.kill()
                    p.wait(30)
                    report.device_kills += 1
                    fleet.start(dev)
            else:
                pids = server.worker_pids()
                if pids:
                    try:
                        os.kill(rng.choice(sorted(pids)), signal.SIGKILL)
                        report.worker_kills += 1
                    except ProcessLookupError:
                        pass
        report.run_seconds = time.monotonic() - t0
    finally:
        fleet.kill_all()


def _check(report: Report, server: Any, fleet: _Fleet, bucket: str, collection: str, replay: str,
           strict: bool) -> None:
    seed = report.seed
    on_server_list = _server_records(server, bucket, collection)
    ids = [r["id"] for r in on_server_list]
    on_server = {r["id"]: _app_fields(r) for r in on_server_list}
    report.records = len(on_server)
    problems = report.problems
    if len(ids) != len(set(ids)):
        problems.append("the server lists a record twice")
    for n in range(SHARED):
        if "shared-%d" % n not in on_server:
            problems.append("shared-%d is gone from the server" % n)
    asked_delete: Set[str] = set()
    journals: Dict[int, List[str]] = {}
    for dev in range(report.devices):
        journal = fleet.dir(dev) / "journal"
        lines = journals[dev] = journal.read_text().splitlines() if journal.exists() else []
        for line in lines:
            what, _, rid = line.partition(" ")
            if what == "asked-delete":
                asked_delete.add(rid)
    for dev, lines in journals.items():
        last: Dict[str, Tuple[str, str]] = {}
        for line in lines:
            what, _, rest = line.partition(" ")
            if what in ("want", "did"):
                rid, _, v = rest.partition(" ")
                last[rid] = (what, v)
        for rid, (what, v) in sorted(last.items()):
            if what != "did" or rid in asked_delete or not rid.startswith("d%d-" % dev):
                continue
            report.checked_writes += 1
            held = on_server.get(rid, {}).get("v")
            if held != v:
                problems.append("device %d wrote v=%s to %s last; the server holds %r" % (dev, v, rid, held))
        for line in lines:
            what, _, rid = line.partition(" ")
            if what == "acked-create":
                report.acked_creates += 1
                if rid not in on_server and rid not in asked_delete:
                    problems.append("device %d: acknowledged create %s is not on the server" % (dev, rid))
            elif what == "acked-delete":
                report.acked_deletes += 1
                if rid in on_server:
                    problems.append("device %d: acknowledged delete %s came back" % (dev, rid))
    for dev in range(report.devices):
        state = json.loads(fleet.once(dev, "state", 120))
        mine = state["records"]
        if mine != on_server:
            missing = sorted(set(on_server) - set(mine))
            extra = sorted(set(mine) - set(on_server))
            differ = sorted(k for k in set(mine) & set(on_server) if mine[k] != on_server[k])
            problems.append("device %d differs from the server: %d missing %s, %d extra %s, %d different %s"
                            % (dev, len(missing), missing[:5], len(extra), extra[:5], len(differ),
                               [(k, mine[k], on_server[k]) for k in differ[:3]]))
        if state["duplicates"]:
            problems.append("device %d holds twice: %s" % (dev, state["duplicates"][:5]))
        if state["local"]:
            problems.append("device %d has local changes left: %s" % (dev, state["local"][:5]))
        if state["conflicts"]:
            problems.append("device %d has %d conflicts left" % (dev, state["conflicts"]))
        if state["integrity"] != "ok":
            problems.append("device %d fails its integrity check: %s" % (dev, state["integrity"]))
    history = proof_checks.server_history(server, bucket, collection, AUTH)
    if history is not None:
        # Kept beside the journals: a failure can be studied after the server is gone.
        (fleet.root / "history.json").write_text(json.dumps(history))
        log_path = fleet.root / "proxy.log"
        proxy_log = ([json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
                     if log_path.exists() else None)
        report.history = proof_checks.check(history, journals, proxy_log, strict)
        problems.extend(report.history.problems)
    if problems:
        raise ConvergenceError("seed %d (%d devices, %d operations each, %d device kills, %d worker kills, "
                               "%d partitions; stores and journals in %s%s):\n  %s\nreplay: %s"
                               % (seed, report.devices, report.operations // report.devices,
                                  report.device_kills, report.worker_kills, report.partitions, fleet.root,
                                  ", the proxy's log in proxy.log" if report.faults else "",
                                  "\n  ".join(problems[:20]) + ("\n  (%d problems in all)" % len(problems)
                                                                if len(problems) > 20 else ""),
                                  replay or "(seed %d)" % seed))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "device":
        sys.exit(device_main(sys.argv[2:]))
    raise SystemExit("usage: convergence.py device DIR DEV SEED LIFE OPS TARGET_JSON MODE")
