"""A seeded fault-injecting proxy between many devices and one Kinto.

Each device gets a listening port of its own (``url(dev)``), so one device
can be cut off while the others go on. For every request a device sends, a
random generator seeded with ``(seed, device, request number)`` picks what
happens to it (:data:`FAULTS`):

* ``pass``: forwarded, answered.
* ``drop``: forwarded, Kinto answers (it committed), the answer is thrown
  away and the connection reset: the device cannot know its write took.
* ``drop-cut``: a drop, and the device cut off (reset) for 1 to 4 s after
  it, so its retries fail too and the write stays unconfirmed: a network
  lost in the middle of a request.
* ``duplicate``: sent to Kinto twice in a row, nothing else forwarded in
  between (so the copy is the network's doing, not a later write's); the
  device gets the first or the second answer.
* ``delay``: held 0.05 to 1.5 s before being forwarded.
* ``reset``: the connection reset before anything is forwarded.
* ``unavailable``: answered 503 with Retry-After: 1, not forwarded.

And, when the controller asks (:meth:`partition`), a device or every device
is cut off for a while: each request is either reset at once or held until
the partition ends (at most ``hang_limit`` seconds) and then reset.

Every decision is appended to ``log_path`` as a JSON line (device, request
number, method, path, fault, Kinto's status), so a failed check can point at
what the network did. The proxy keeps no request in memory; every socket
operation has a timeout.
"""

from __future__ import annotations

import json
import random
import select
import socket
import struct
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from hostile import KintoProxy, Reply, Seen, Writer, retry_after

#: The faults and their default share of requests (the rest pass).
FAULTS: Dict[str, float] = {
    "drop": 0.06,
    "drop-cut": 0.02,
    "duplicate": 0.04,
    "delay": 0.06,
    "reset": 0.03,
    "unavailable": 0.03,
}
WRITES = ("PUT", "PATCH", "POST", "DELETE")


def _writes(r: Seen) -> List[List[object]]:
    """The writes in a request, for the log: [method, record id, If-Match,
    If-None-Match, the record's "v"] each, a batch's parts in order."""
    if r.method not in WRITES or not r.body:
        return []
    try:
        body = json.loads(r.body)
    except ValueError:
        return []
    parts = body.get("requests", []) if r.path.endswith("/batch") else [
        {"method": r.method, "path": r.path, "body": body, "headers": r.headers}]
    defaults = body.get("defaults") or {} if r.path.endswith("/batch") else {}
    out: List[List[object]] = []
    for part in parts if isinstance(parts, list) else []:
        headers = {k.lower(): v for k, v in (part.get("headers") or defaults.get("headers") or {}).items()}
        data = (part.get("body") or {}).get("data") or {}
        out.append([part.get("method", defaults.get("method")), str(part.get("path", "")).rsplit("/", 1)[-1],
                    headers.get("if-match"), headers.get("if-none-match"), data.get("v")])
    return out


def _statuses(status: int, body: bytes) -> object:
    """Kinto's answer, for the log: its status, or a batch's parts' ones."""
    try:
        parts = json.loads(body).get("responses")
    except (ValueError, AttributeError):
        return status
    return [p.get("status") for p in parts] if isinstance(parts, list) else status


def _client_gone(handler: object) -> bool:
    """Whether the device closed its connection (gave up, or was killed)
    while the proxy held its request: then it is not forwarded, as a front
    server (nginx) drops a request whose client went away before it was
    passed on."""
    conn = getattr(handler, "connection", None)
    if conn is None:
        return False
    try:
        ready, _, _ = select.select([conn], [], [], 0)
        return bool(ready) and conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True


def _reset(handler: object) -> None:
    """Closes the client's connection with a TCP reset (SO_LINGER 0), not a
    FIN: what a crashed peer or a middlebox leaves."""
    conn = getattr(handler, "connection", None)
    if conn is not None:
        try:
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
    setattr(handler, "close_connection", True)


class _Turns:
    """Many forwards at once, or one duplicate alone (a readers-writer lock):
    the two copies of a duplicated request reach Kinto with nothing in
    between. A duplicate waiting keeps new forwards back (else the devices'
    steady traffic starved it for seconds, and it reached Kinto long after
    its device had given up: a delivery no fault asked for)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._shared = 0
        self._alone = False
        self._waiting = 0

    def shared(self) -> "_Turn":
        return _Turn(self, False)

    def alone(self) -> "_Turn":
        return _Turn(self, True)

    def enter(self, alone: bool, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            self._waiting += alone
            try:
                while self._alone or (self._shared if alone else self._waiting):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._cond.wait(left)
            finally:
                self._waiting -= alone
            if alone:
                self._alone = True
            else:
                self._shared += 1
            return True

    def leave(self, alone: bool) -> None:
        with self._cond:
            if alone:
                self._alone = False
            else:
                self._shared -= 1
            self._cond.notify_all()


class _Turn:
    def __init__(self, turns: _Turns, alone: bool) -> None:
        self.turns, self.alone, self.entered = turns, alone, False

    def __enter__(self) -> bool:
        # Less than a device's timeout (5 s in the proof run).
        self.entered = self.turns.enter(self.alone, 2.0)
        return self.entered

    def __exit__(self, *exc: object) -> None:
        if self.entered:
            self.turns.leave(self.alone)


class _DeviceProxy(KintoProxy):
    """One device's port: KintoProxy's forwarding, FaultProxy's decisions,
    and no request log kept in memory (a long run sends many thousands)."""

    def __init__(self, owner: "FaultProxy", dev: int) -> None:
        super().__init__(owner.upstream)
        self.owner = owner
        self.dev = dev
        self.count = 0
        self.count_lock = threading.Lock()

    def _log(self, seen: Seen) -> None:
        pass

    def stopping(self) -> bool:
        server = self._server
        return server is None or server.stopping.is_set()

    def _serve(self, r: Seen) -> Union[Reply, Writer]:
        with self.count_lock:
            n = self.count
            self.count += 1
        return self.owner.serve(self, n, r)


class FaultProxy:
    """``FaultProxy(kinto_url, devices, seed, log_path).start()``; a device's
    target URL is ``url(dev)``; ``calm()`` stops all faults (quiescence);
    ``partition(dev, seconds)`` (``dev=None``: every device) cuts off."""

    def __init__(self, upstream: str, devices: int, seed: int, log_path: Path,
                 faults: Optional[Dict[str, float]] = None, hang_limit: float = 8.0) -> None:
        self.upstream = upstream
        self.seed = seed
        self.faults = dict(FAULTS if faults is None else faults)
        if sum(self.faults.values()) > 1.0:
            raise ValueError("fault shares add up to more than 1")
        self.hang_limit = hang_limit
        self.turns = _Turns()
        self.lock = threading.Lock()
        self.cut_until: Dict[Optional[int], float] = {}
        self.cut_how: Dict[Optional[int], str] = {}
        self.calm_now = False
        self.counts: Counter = Counter()
        self.log_path = Path(log_path)
        self._log_file = open(self.log_path, "a", encoding="utf-8")
        self.proxies = [_DeviceProxy(self, dev) for dev in range(devices)]

    def start(self) -> "FaultProxy":
        for p in self.proxies:
            p.start()
        return self

    def stop(self) -> None:
        for p in self.proxies:
            p.stop()
        with self.lock:
            self._log_file.close()

    def __enter__(self) -> "FaultProxy":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def url(self, dev: int) -> str:
        return self.proxies[dev].url

    # what the controller decides ------------------------------------------

    def calm(self, calm: bool = True) -> None:
        """No fault and no partition from now on (or faults again)."""
        with self.lock:
            self.calm_now = calm
            if calm:
                self.cut_until.clear()
            self._write({"event": "calm" if calm else "faults"})

    def partition(self, dev: Optional[int], seconds: float, how: str, count: bool = True) -> None:
        """Cuts ``dev`` (None: every device) off for ``seconds``: ``how`` is
        "reset" (every request reset at once) or "hang" (held, then reset);
        ``count``: one of the run's partitions (not a drop-cut's)."""
        if how not in ("reset", "hang"):
            raise ValueError(how)
        with self.lock:
            self.cut_until[dev] = time.monotonic() + seconds
            self.cut_how[dev] = how
            if count:
                self.counts["partition-all" if dev is None else "partition"] += 1
            self._write({"event": "partition", "dev": dev, "seconds": round(seconds, 2), "how": how})

    def _cut(self, dev: int) -> Tuple[float, str]:
        """Until when (monotonic) and how ``dev`` is cut off; (0, "") if not."""
        now = time.monotonic()
        with self.lock:
            best = (0.0, "")
            for key in (dev, None):
                until = self.cut_until.get(key, 0.0)
                if until > now and until > best[0]:
                    best = (until, self.cut_how[key])
            return best

    # one request ------------------------------------------------------------

    def choose(self, dev: int, n: int, method: str) -> str:
        """The fault for request ``n`` of ``dev``: the same seed gives the
        same choice for the same request, whatever the other devices do."""
        rng = random.Random("%d/%d/%d" % (self.seed, dev, n))
        r = rng.random()
        for name, share in self.faults.items():
            if r < share:
                # A GET sent twice is no test of anything.
                return "pass" if name == "duplicate" and method not in WRITES else name
            r -= share
        return "pass"

    def serve(self, proxy: _DeviceProxy, n: int, r: Seen) -> Union[Reply, Writer]:
        with self.lock:
            calm = self.calm_now
        fault = "pass" if calm else self.choose(proxy.dev, n, r.method)
        until, how = (0.0, "") if calm else self._cut(proxy.dev)
        if until:
            fault = "cut-" + how
        entry: Dict[str, object] = {"dev": proxy.dev, "n": n, "method": r.method, "path": r.path, "fault": fault}
        writes = _writes(r)
        if writes:
            entry["writes"] = writes
        if fault == "cut-reset" or fault == "reset":
            return self._done(entry, _reset)
        if fault == "cut-hang":
            def hang(handler: object) -> None:
                deadline = min(until, time.monotonic() + self.hang_limit)
                while time.monotonic() < deadline and not proxy.stopping():
                    time.sleep(0.05)
                _reset(handler)
            return self._done(entry, hang)
        if fault == "unavailable":
            return self._done(entry, retry_after(1, status=503, body={
                "code": 503, "errno": 201, "error": "Service Unavailable",
                "message": "fault_proxy: service unavailable"}))
        return lambda handler: self._forward(handler, proxy, n, r, entry)

    def _forward(self, handler: Any, proxy: _DeviceProxy, n: int, r: Seen, entry: Dict[str, object]) -> None:
        """Sends the request on (twice for a duplicate) and answers the
        device, or resets it (a drop); on the handler's thread, which it
        keeps open for the device's next request unless it resets."""
        fault = str(entry["fault"])
        try:
            if fault == "delay":
                time.sleep(random.Random("%d/%d/%d/delay" % (self.seed, proxy.dev, n)).uniform(0.05, 1.5))
            copies = 2 if fault == "duplicate" else 1
            answers: List[Tuple[int, Dict[str, str], bytes]] = []
            with (self.turns.alone() if copies == 2 else self.turns.shared()) as entered:
                if not entered:
                    entry["fault"] = "reset (no turn)"
                    self._done(entry, _reset)(handler)
                    return
                if _client_gone(handler):
                    entry["fault"] = fault + ", client gone"
                    self._done(entry, _reset)(handler)
                    return
                for _ in range(copies):
                    answers.append(proxy.forward(r))
        except OSError as e:
            # Kinto's worker killed mid-request: the device sees what it
            # would see without the proxy, a connection gone.
            entry["error"] = type(e).__name__
            self._done(entry, _reset)(handler)
            return
        entry["status"] = [_statuses(a[0], a[2]) for a in answers]
        if fault in ("drop", "drop-cut"):
            if fault == "drop-cut":
                self.partition(proxy.dev, random.Random("%d/%d/%d/cut" % (self.seed, proxy.dev, n)).uniform(1.0, 4.0),
                               "reset", count=False)
            self._done(entry, _reset)(handler)
            return
        status, headers, body = answers[random.Random("%d/%d/%d/pick" % (self.seed, proxy.dev, n)).randrange(len(answers))]
        self._done(entry, None)
        try:
            handler.send_response(status)
            for k, v in headers.items():
                handler.send_header(k, v)
            handler.send_header("Content-Length", str(len(body)))
            handler.end_headers()
            if r.method != "HEAD":
                handler.wfile.write(body)
            handler.close_connection = False
        except OSError:
            handler.close_connection = True

    def _done(self, entry: Dict[str, object], answer: Any) -> Any:
        with self.lock:
            self.counts[str(entry["fault"])] += 1
            self._write(entry)
        return answer

    def _write(self, entry: Dict[str, object]) -> None:
        # Under self.lock. Closed by stop(): late lines from threads still
        # finishing are dropped, not an error.
        if not self._log_file.closed:
            entry = dict(entry, t=round(time.time(), 3))
            self._log_file.write(json.dumps(entry) + "\n")
            self._log_file.flush()
