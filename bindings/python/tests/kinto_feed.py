"""A plain-HTTP trial of Kinto's ``_since`` feed under concurrent writers.

Writers send ``/batch`` requests of new records into one collection while a
poller follows ``GET .../records?_since=S`` the way a sync client does (S:
the highest ``last_modified`` it has received). When the writers are done,
the whole collection is read once: a record there that the poller never
received is lost from the feed. No Tureen here; used by
test_kinto_deployment.py and bench/kinto_feed_bench.py.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Sequence, Set

from servers import Auth, KintoServer, http_request


@dataclass
class FeedTrial:
    written: int = 0  # records the writers asked for
    acknowledged: Set[str] = field(default_factory=set)  # answered 201 inside a batch answered 200
    batches: int = 0
    failed_batches: int = 0  # batches not answered 200 (or not answered at all)
    partial_batches: int = 0  # of those, how many left some of their records on the server
    polls: int = 0
    server_errors: int = 0  # GETs answered 5xx (asked again)
    seen: Set[str] = field(default_factory=set)  # ids the poller received
    # per overlap (ms): ids a poller asking from that much before its highest stamp received
    seen_overlapping: Dict[int, Set[str]] = field(default_factory=dict)
    final: Set[str] = field(default_factory=set)  # ids in the collection at the end

    @property
    def lost(self) -> Set[str]:
        """Records the server holds that its feed never delivered."""
        return self.final - self.seen

    def lost_overlapping(self, overlap_ms: int) -> Set[str]:
        """Records the poller with that overlap never received."""
        return self.final - self.seen_overlapping[overlap_ms]

    @property
    def acknowledged_missing(self) -> Set[str]:
        return self.acknowledged - self.final

    def summary(self) -> str:
        return ("%d records written in %d batches (%d failed, %d of them partly committed), %d acknowledged, "
                "%d on the server, %d received by the poller in %d polls (%d reads answered 5xx, asked again), "
                "%d never received"
                % (self.written, self.batches, self.failed_batches, self.partial_batches, len(self.acknowledged),
                   len(self.final), len(self.seen), self.polls, self.server_errors, len(self.lost)))


def _page_all(url: str, auth: Auth, trial: FeedTrial, into: Set[str]) -> int:
    """Every page of ``url``; adds the ids to ``into``; returns the highest
    ``last_modified`` received (-1 for none)."""
    highest = -1
    next_url = url
    for _ in range(10000):
        r = http_request("GET", next_url, auth=auth, timeout=60)
        for _ in range(5):
            if r.status < 500:
                break
            # The stock deployment once answered a read 500 under these
            # writers; a client asks again, and so does this poller.
            trial.server_errors += 1
            time.sleep(0.2)
            r = http_request("GET", next_url, auth=auth, timeout=60)
        if r.status != 200:
            raise RuntimeError("GET %s answered %d: %r" % (next_url, r.status, r.body[:300]))
        for record in r.json()["data"]:
            into.add(record["id"])
            highest = max(highest, int(record["last_modified"]))
        next_url = r.headers.get("next-page", "")
        if not next_url:
            return highest
    raise RuntimeError("more than 10000 pages")


def run_trial(server: KintoServer, bucket: str, collection: str, auth: Auth, *,
              writers: int, batches: int, batch_size: int = 25, seconds: float = 120.0,
              overlaps_ms: Sequence[int] = ()) -> FeedTrial:
    """``writers`` threads send ``batches`` batches each of ``batch_size`` new
    records (stopping early after ``seconds``) while one poller follows the
    feed; then the poller catches up and the collection is read whole.
    For each of ``overlaps_ms``, another poller asks from that much before
    the highest stamp it received (what a client can do against late
    commits)."""
    base = "%s/buckets/%s/collections/%s/records" % (server.url, bucket, collection)
    path = "/buckets/%s/collections/%s/records" % (bucket, collection)
    trial = FeedTrial()
    lock = threading.Lock()
    done = threading.Event()
    deadline = time.monotonic() + seconds
    errors: List[BaseException] = []

    def write(w: int) -> None:
        try:
            for b in range(batches):
                if time.monotonic() > deadline:
                    return
                ids = ["w%d-b%d-r%d" % (w, b, i) for i in range(batch_size)]
                body = {"defaults": {"method": "PUT", "headers": {"If-None-Match": "*"}},
                        "requests": [{"path": "%s/%s" % (path, i), "body": {"data": {"w": w, "b": b}}} for i in ids]}
                try:
                    r = http_request("POST", server.url + "/batch", body, auth=auth, timeout=60)
                    status, answers = r.status, (r.json() or {}).get("responses", []) if r.status == 200 else []
                except OSError:
                    status, answers = 0, []
                with lock:
                    trial.written += len(ids)
                    trial.batches += 1
                    if status == 200:
                        trial.acknowledged.update(i for i, a in zip(ids, answers) if a.get("status") == 201)
                    else:
                        trial.failed_batches += 1
                        trial.acknowledged.difference_update(ids)
                        failed_ids.append(ids)
        except BaseException as e:  # noqa: BLE001 - reported by the caller
            errors.append(e)

    failed_ids: List[List[str]] = []
    since = -1
    since_overlapping = {w: -1 for w in overlaps_ms}
    for w in overlaps_ms:
        trial.seen_overlapping[w] = set()

    def url_since(s: int) -> str:
        return base + ("?_since=%d&_sort=last_modified" % s if s >= 0 else "?_sort=last_modified")

    def poll_once() -> None:
        nonlocal since
        since = max(since, _page_all(url_since(since), auth, trial, trial.seen))
        for w, s in since_overlapping.items():
            start = max(0, s - w) if s >= 0 else -1
            since_overlapping[w] = max(s, _page_all(url_since(start), auth, trial, trial.seen_overlapping[w]))
        trial.polls += 1

    threads = [threading.Thread(target=write, args=(w,), daemon=True) for w in range(writers)]
    for t in threads:
        t.start()
    try:
        while any(t.is_alive() for t in threads):
            poll_once()
    finally:
        for t in threads:
            t.join(seconds + 120)
        done.set()
    if errors:
        raise errors[0]
    poll_once()
    _page_all(base, auth, trial, trial.final)
    trial.partial_batches = sum(1 for ids in failed_ids if trial.final.intersection(ids))
    return trial


def new_collection(server: KintoServer, auth: Dict[str, Any], name: str) -> None:
    server.create_collection(name, name, auth)
