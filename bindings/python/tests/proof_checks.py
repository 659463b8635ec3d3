"""Jepsen-style checks of a convergence run against Kinto's history.

Every value a device writes carries a token no other write has
(``"<device>.<life>.<sequence>"``, in the record's ``v``), so a value on the
server names the one write it came from. Kinto's history plugin
(``kinto.plugins.history``) keeps every commit of every record, in the
transaction of the write; ordered by the record's ``last_modified`` (which
packaging/kinto/commit_order.sql makes the commit order) they are the
server's history of that record: a list of *versions*, each a token or a
deletion.

Each device journals (convergence.py's Device, one line each, flushed before
the call that follows it):

* ``did R T``: it wrote token T to record R (locally);
* ``acked-write R T``: a sync up returned with R clean and holding T (the
  engine says the server took T);
* ``read R T``: after a sync, R is clean and holds T (a value the device
  took from the server, or its own that the server acknowledged);
* ``yours R T MS``: at time MS it resolved a conflict on R keeping its own
  copy, T: a deliberate write of T again;
* ``asked-delete R``, ``acked-delete R``, ``acked-create R``.

The checks, for every record R (the session guarantees per device, per
record, with the device's store as the session, across its kills):

* **no replayed write**: a token is committed again after a different
  version of R was committed, unless its writer resolved a conflict on R
  "yours" with that token before the second commit (the server holds T, U,
  T only if the device asked for T again). The proxy's duplicates are sent
  with nothing in between, so they give T, T, never T, U, T. With the
  proxy's log, the write that committed T again is found (the first write
  of T that Kinto answered 2xx after that commit's stamp: the proxy logs a
  request once its answer is read): when it carried no
  If-Match, it is a sync up in OVERWRITE re-sending a write whose answer
  was lost, over a copy it cannot tell from one written before it. The
  library sends such a copy again under its base's If-Match since issue 47's
  fix; what may still go blind is a retry of the same request inside one run
  and a rest target without "concurrency". Such replays are counted apart
  (``blind_replays``), and are problems with ``strict`` (`make proof`'s
  default).
* **no acknowledged write lost**: every ``acked-write R T`` is in R's history.
* **no resurrected delete**: after the commit that deleted a record its
  owner asked to delete, no version commits whose token was written before
  the owner asked.
* **monotonic reads**: the versions a device reads of R can be placed in
  R's history in the order it read them (each read at or after the last).
* **read-your-writes**: after ``acked-write R T``, each later read of R is of
  T's commit or a later version.
* **monotonic writes**: of two tokens a device wrote to R, in that order,
  that both committed, every commit of the first precedes the first commit
  of the second.
* **writes-follow-reads**: a token a device wrote to R after reading
  version #k of R commits after #k.

A read of a value the server never held (a *phantom*) is a problem too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Set, Tuple

Version = Tuple[int, Optional[str]]  # (last_modified, token; None: deleted)


@dataclass
class HistoryFigures:
    commits: int = 0
    reads: int = 0
    writes: int = 0
    replays: int = 0
    blind_replays: int = 0
    duplicates: int = 0
    problems: List[str] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)


def server_history(server: Any, bucket: str, collection: str, auth: Dict[str, str]) -> Optional[Dict[str, List[Version]]]:
    """Every record's versions, oldest first, from Kinto's history plugin
    (None if the server has no history endpoint)."""
    from servers import http_request
    url = "%s/buckets/%s/history?resource_name=record&collection_id=%s&_limit=1000" % (server.url, bucket, collection)
    entries: List[Dict[str, Any]] = []
    for _ in range(100_000):
        r = http_request("GET", url, auth=auth, timeout=120)
        if r.status in (403, 404):
            return None
        if r.status != 200:
            raise AssertionError("GET %s answered %d" % (url, r.status))
        entries.extend(r.json()["data"])
        url = r.headers.get("next-page", "")
        if not url:
            break
    out: Dict[str, List[Version]] = {}
    for e in entries:
        data = (e.get("target") or {}).get("data") or {}
        rid = data.get("id") or e.get("record_id")
        if not rid:
            continue
        token = None if e.get("action") == "delete" or data.get("deleted") else data.get("v")
        out.setdefault(rid, []).append((int(data.get("last_modified") or e.get("timestamp") or 0),
                                        None if token is None else str(token)))
    for versions in out.values():
        versions.sort(key=lambda v: v[0])
    return out


def _positions(versions: List[Version]) -> Dict[Optional[str], List[int]]:
    pos: Dict[Optional[str], List[int]] = {}
    for i, (_, token) in enumerate(versions):
        pos.setdefault(token, []).append(i)
    return pos


def answered_writes(proxy_log: List[Dict[str, Any]]) -> Dict[Tuple[str, str], List[Tuple[float, Optional[str]]]]:
    """From the proxy's log: for each (record, token), when (ms) Kinto's
    2xx answer to a write of it was read and the write's If-Match (each
    copy of a duplicate), in the order of the answers."""
    out: Dict[Tuple[str, str], List[Tuple[float, Optional[str]]]] = {}
    for e in proxy_log:
        writes = e.get("writes") or []
        for answer in e.get("status") or []:
            parts = answer if isinstance(answer, list) else [answer] * len(writes)
            for w, status in zip(writes, parts):
                if w[4] is not None and isinstance(status, int) and 200 <= status < 300:
                    out.setdefault((str(w[1]), str(w[4])), []).append((float(e.get("t", 0)) * 1000, w[2]))
    return out


def check(history: Dict[str, List[Version]], journals: Dict[int, List[str]],
          proxy_log: Optional[List[Dict[str, Any]]] = None, strict: bool = False) -> HistoryFigures:
    fig = HistoryFigures()
    fig.commits = sum(len(v) for v in history.values())
    problems = fig.problems
    yours: Dict[Tuple[str, str], List[int]] = {}
    for lines in journals.values():
        for line in lines:
            parts = line.split(" ")
            if parts[0] == "yours" and len(parts) == 4:
                yours.setdefault((parts[1], parts[2]), []).append(int(parts[3]))
    positions = {rid: _positions(v) for rid, v in history.items()}
    answered = answered_writes(proxy_log or [])

    # No replayed write (server-wide).
    for rid, versions in history.items():
        for j in range(1, len(versions)):
            stamp, token = versions[j]
            if token is None:
                continue
            earlier = [i for i in positions[rid][token] if i < j]
            if not earlier:
                continue
            if versions[j - 1][1] == token:
                fig.duplicates += 1
                continue
            excuses = yours.get((rid, token), [])
            excused = next((ms for ms in excuses if ms <= stamp), None)
            if excused is not None:
                excuses.remove(excused)
                continue
            between = versions[earlier[-1] + 1][1]
            what = ("%s got %s (#%d), then %s (#%d), then %s again (#%d, last_modified %d)"
                    % (rid, token, earlier[-1], between or "a deletion", earlier[-1] + 1, token, j, stamp))
            # The proxy's clock and Kinto's are the same machine's; the log's
            # time is rounded to 1 ms.
            by = next((m for (t, m) in answered.get((rid, token), []) if t >= stamp - 1), "unknown")
            blind = by is None
            if blind and not strict:
                fig.blind_replays += 1
                fig.notes.append("blind re-send (OVERWRITE, no If-Match): " + what)
                continue
            fig.replays += 1
            problems.append("replayed write%s: %s" % (" (blind re-send)" if blind else "", what))

    for dev, lines in sorted(journals.items()):
        _check_device(dev, lines, history, positions, fig)
    return fig


def _check_device(dev: int, lines: List[str], history: Dict[str, List[Version]],
                  positions: Dict[str, Dict[Optional[str], List[int]]], fig: HistoryFigures) -> None:
    problems = fig.problems
    read_floor: Dict[str, int] = {}   # the version last read
    ryw_floor: Dict[str, int] = {}    # the commit of the last acknowledged write
    written: Dict[str, List[str]] = {}
    written_before_delete: Dict[str, Set[str]] = {}
    for line in lines:
        parts = line.split(" ")
        what, rid = parts[0], parts[1] if len(parts) > 1 else ""
        pos = positions.get(rid, {})
        token = parts[2] if len(parts) > 2 else ""
        if what == "did":
            fig.writes += 1
            commits = pos.get(token)
            if commits and commits[0] <= read_floor.get(rid, -1):
                problems.append("writes-follow-reads: device %d wrote %s to %s after reading version #%d, "
                                "yet it committed as #%d" % (dev, token, rid, read_floor[rid], commits[0]))
            if commits:
                for prior in written.get(rid, []):
                    before = pos.get(prior)
                    if before and before[-1] > commits[0]:
                        problems.append("monotonic writes: device %d wrote %s then %s to %s; %s committed as #%d, "
                                        "%s as #%d" % (dev, prior, token, rid, token, commits[0], prior, before[-1]))
                written.setdefault(rid, []).append(token)
            written_before_delete.setdefault(rid, set()).add(token)
        elif what == "acked-write":
            commits = pos.get(token)
            if not commits:
                problems.append("acknowledged write lost: device %d: %s = %s is not in the server's history"
                                % (dev, rid, token))
            else:
                ryw_floor[rid] = max(ryw_floor.get(rid, -1), commits[0])
        elif what == "read":
            fig.reads += 1
            commits = pos.get(token)
            if not commits:
                problems.append("phantom read: device %d read %s = %s, a value the server never held" % (dev, rid, token))
                continue
            mr, ryw = read_floor.get(rid, -1), ryw_floor.get(rid, -1)
            at = next((i for i in commits if i >= max(mr, ryw)), None)
            if at is None:
                if any(i >= mr for i in commits):
                    problems.append("read-your-writes: device %d read %s = %s (#%s) after its write #%d was "
                                    "acknowledged" % (dev, rid, token, commits, ryw))
                else:
                    problems.append("monotonic reads: device %d read %s = %s (#%s) after reading version #%d"
                                    % (dev, rid, token, commits, mr))
                at = commits[-1]
            read_floor[rid] = max(mr, at)
        elif what == "asked-delete":
            deletes = pos.get(None, [])
            mine = written_before_delete.get(rid, set())
            versions = history.get(rid, [])
            for d in deletes:
                back = [t for (_, t) in versions[d + 1:] if t is not None and t in mine]
                if back:
                    problems.append("resurrected delete: device %d asked to delete %s; after its deletion (#%d) "
                                    "%s committed again" % (dev, rid, d, back[0]))
                    break
