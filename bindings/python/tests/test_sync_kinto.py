"""Sync with a real Kinto server: sync down, resync, sync up with batching,
failures, retries, cancellation, ghosts, named syncs, and PostgreSQL.

Requests are counted (and faults injected) by :class:`Proxy`, a small HTTP
proxy between the library and Kinto.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import kinto_http
import pytest

import tureen
from tureen import query, sync

from conftest import new_kinto_collection
from servers import KintoServer
from sync_support import WAIT, close_unless_stuck, entries, is_clean, kinto_client, kinto_fields, run_bounded

RAW = "7c" * 32  # a raw key: no KDF, fast to open
SOUP = "contacts"


# ---------------------------------------------------------------------------
# helpers


@dataclass
class Seen:
    method: str
    path: str
    query: Dict[str, List[str]]
    status: int


class Proxy:
    """Forwards every request to ``upstream`` (``http://host:port``) and logs
    it; :meth:`fail_next` answers the next requests itself instead.

    The Host header is forwarded as the client sent it, so that the URLs Kinto
    builds (the Next-Page header) point back at the proxy.
    """

    def __init__(self, upstream: str) -> None:
        parsed = urllib.parse.urlsplit(upstream)
        self.upstream = (parsed.hostname or "127.0.0.1", parsed.port or 80)
        self.log: List[Seen] = []
        self._faults: List[Tuple[int, Dict[str, str]]] = []
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 30

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def _serve(self) -> None:
                proxy._serve(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _serve

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05})
        self._thread.daemon = True
        self._thread.start()

    @property
    def url(self) -> str:
        """The proxy's Kinto URL, ``http://127.0.0.1:PORT/v1``."""
        return "http://127.0.0.1:%d/v1" % self._httpd.server_address[1]

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(WAIT)

    def fail_next(self, n: int, status: int = 503, headers: Optional[Dict[str, str]] = None) -> None:
        with self._lock:
            self._faults.extend((status, dict(headers or {})) for _ in range(n))

    def seen(self, method: Optional[str] = None, path_suffix: Optional[str] = None) -> List[Seen]:
        with self._lock:
            return [
                s
                for s in self.log
                if (method is None or s.method == method)
                and (path_suffix is None or s.path.endswith(path_suffix))
            ]

    def clear(self) -> None:
        with self._lock:
            self.log.clear()

    def _read_body(self, h: BaseHTTPRequestHandler) -> bytes:
        if "chunked" in h.headers.get("Transfer-Encoding", "").lower():
            chunks = []
            while True:
                size = int(h.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while h.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(h.rfile.read(size))
                h.rfile.readline()
            return b"".join(chunks)
        length = int(h.headers.get("Content-Length") or 0)
        return h.rfile.read(length) if length else b""

    def _answer(self, h: BaseHTTPRequestHandler, status: int, headers: Dict[str, str], body: bytes) -> None:
        h.send_response(status)
        for k, v in headers.items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)

    def _serve(self, h: BaseHTTPRequestHandler) -> None:
        body = self._read_body(h)
        parsed = urllib.parse.urlsplit(h.path)
        with self._lock:
            fault = self._faults.pop(0) if self._faults else None
        if fault is not None:
            status, headers = fault
            with self._lock:
                self.log.append(Seen(h.command, parsed.path, urllib.parse.parse_qs(parsed.query), status))
            payload = json.dumps({"code": status, "errno": 201, "error": "injected"}).encode()
            self._answer(h, status, dict(headers, **{"Content-Type": "application/json"}), payload)
            return
        conn = http.client.HTTPConnection(*self.upstream, timeout=WAIT)
        try:
            conn.putrequest(h.command, h.path, skip_host=True, skip_accept_encoding=True)
            for k, v in h.headers.items():
                if k.lower() not in ("content-length", "transfer-encoding", "connection"):
                    conn.putheader(k, v)
            conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            response = conn.getresponse()
            data = response.read()
            headers = {
                k: v
                for k, v in response.getheaders()
                if k.lower() not in ("content-length", "transfer-encoding", "connection")
            }
            status = response.status
        finally:
            conn.close()
        with self._lock:
            self.log.append(Seen(h.command, parsed.path, urllib.parse.parse_qs(parsed.query), status))
        self._answer(h, status, headers, data)


@pytest.fixture
def proxy(kinto: KintoServer) -> Iterator[Proxy]:
    p = Proxy(kinto.root)
    try:
        yield p
    finally:
        p.stop()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    s = tureen.Store.open(tmp_path / "sync.db", raw_key=RAW)
    try:
        s.register_soup(SOUP, [("id", "string"), ("name", "string")])
        yield s
    finally:
        close_unless_stuck(s)


@pytest.fixture
def target(kinto_collection: Dict[str, Any]) -> Dict[str, Any]:
    return dict(kinto_collection, type="kinto")


def fill(other: kinto_http.Client, records: List[Dict[str, Any]]) -> None:
    """Creates ``records`` on the server (batched by kinto_http)."""
    with other.batch() as batch:
        for record in records:
            batch.create_record(id=record["id"], data=record)


def local_by_id(store: tureen.Store, soup: str = SOUP) -> Dict[str, Dict[str, Any]]:
    return {e["id"]: e for e in entries(store, soup)}


def server_by_id(other: kinto_http.Client) -> Dict[str, Dict[str, Any]]:
    return {r["id"]: r for r in other.get_records()}


# ---------------------------------------------------------------------------
# sync down and resync


def test_sync_down_stores_clean_records(
    store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    other = kinto_client(kinto_collection)
    fill(other, [{"id": "c%03d" % i, "name": "n%d" % i, "n": i} for i in range(30)])
    seen: List[Dict[str, Any]] = []
    state = store.sync_down(target, SOUP, progress=seen.append)

    assert state["status"] == "DONE" and state["type"] == "syncDown"
    assert state["soupName"] == SOUP and state["error"] is None
    assert state["progress"] == 100 and state["done"] == 30
    assert state["totalSize"] in (30, -1)
    assert state["synced"] == 30 and state["failed"] == 0 and state["conflicts"] == 0
    assert isinstance(state["_soupEntryId"], int) and state["maxTimeStamp"] > 0
    assert state["startTime"] <= state["endTime"]
    assert state["target"]["bucket"] == kinto_collection["bucket"]
    assert store.soup_exists(sync.SYNCS_SOUP)

    local = local_by_id(store)
    server = server_by_id(other)
    assert set(local) == set(server)
    for rid, entry in local.items():
        assert is_clean(entry), entry
        assert kinto_fields(entry) == kinto_fields(server[rid])

    # Progress: the state after each page and at the end.
    assert seen and seen[-1]["status"] == "DONE" and seen[-1]["done"] == 30
    assert all(s["_soupEntryId"] == state["_soupEntryId"] for s in seen)
    dones = [s["done"] for s in seen]
    assert dones == sorted(dones)
    assert store.sync_status(state["_soupEntryId"]) == state


def test_sync_down_needs_an_index_on_the_id_field(tmp_path: Path, target: Dict[str, Any]) -> None:
    with tureen.Store.open(tmp_path / "noindex.db", raw_key=RAW) as s:
        s.register_soup("plain", [("name", "string")])
        with pytest.raises(tureen.InvalidError) as info:
            s.sync_down(target, "plain")
        assert "id" in info.value.message
        with pytest.raises(tureen.NotFoundError):
            s.sync_down(target, "no_such_soup")
        with pytest.raises(tureen.InvalidError):
            s.sync_down({"type": "kinto", "url": target["url"]}, "plain")  # no bucket
        with pytest.raises(tureen.InvalidError):
            s.sync_down(dict(target, type="ftp"), "plain")
        with pytest.raises(tureen.InvalidError):
            s.sync_down(target, "plain", merge_mode="MERGE_ACCEPT_YOURS")  # sync up only
        with pytest.raises(TypeError):
            s.sync_down("kinto", "plain")  # type: ignore[arg-type]


def test_resync_fetches_only_changes_and_applies_tombstones(
    store: tureen.Store, kinto_collection: Dict[str, Any], proxy: Proxy
) -> None:
    target = dict(kinto_collection, type="kinto", url=proxy.url)
    other = kinto_client(kinto_collection)
    fill(other, [{"id": "r%02d" % i, "name": "v1"} for i in range(40)])
    first = store.sync_down(target, SOUP, name="contacts-down")
    assert first["done"] == 40 and len(entries(store, SOUP)) == 40

    other.patch_record(id="r05", data={"name": "v2"})
    other.delete_record(id="r07")
    other.create_record(id="new", data={"name": "fresh"})
    proxy.clear()

    again = store.resync("contacts-down")
    assert again["status"] == "DONE" and again["_soupEntryId"] == first["_soupEntryId"]
    # Three changes, plus at most the records sharing the last timestamp.
    assert again["done"] <= 4, again
    assert again["maxTimeStamp"] > first["maxTimeStamp"]
    local = local_by_id(store)
    assert "r07" not in local and len(local) == 40
    assert local["r05"]["name"] == "v2" and is_clean(local["r05"])
    assert local["new"]["name"] == "fresh" and is_clean(local["new"])
    # What was asked of the server: the records since the last sync, not all.
    gets = [s for s in proxy.seen("GET") if s.path.endswith("/records")]
    assert gets, proxy.log
    assert all(any(k in s.query for k in ("_since", "gt_last_modified")) for s in gets), gets

    # Nothing changed since: nothing fetched but the last stamp's records.
    quiet = store.resync(first["_soupEntryId"])
    assert quiet["status"] == "DONE" and quiet["done"] <= 1


def test_sync_down_leave_if_changed_keeps_local_changes(
    store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    other = kinto_client(kinto_collection)
    fill(other, [{"id": "a", "name": "a1"}, {"id": "b", "name": "b1"}, {"id": "c", "name": "c1"}])
    overwrite = store.sync_down(target, SOUP, name="overwrite")
    store.local_upsert(SOUP, {"id": "a", "name": "a-local"})
    other.patch_record(id="a", data={"name": "a-server"})
    other.patch_record(id="b", data={"name": "b-server"})

    kept = store.sync_down(target, SOUP, name="leave", merge_mode=sync.LEAVE_IF_CHANGED)
    assert kept["status"] == "DONE"
    assert kept["options"]["mergeMode"] == "LEAVE_IF_CHANGED"
    local = local_by_id(store)
    assert local["a"]["name"] == "a-local" and local["a"]["__locally_updated__"] is True
    assert local["b"]["name"] == "b-server" and is_clean(local["b"])

    # OVERWRITE (the default) takes the server's copy, local change or not.
    store.resync("overwrite")
    local = local_by_id(store)
    assert local["a"]["name"] == "a-server" and is_clean(local["a"])
    assert store.sync_status(overwrite["_soupEntryId"])["status"] == "DONE"


def test_sync_down_overwrite_keeps_a_local_change_the_server_did_not_overtake(
    store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    """A resync asks for the records from its last stamp on (Kinto's _since
    is exclusive: one less), so the newest record comes again unchanged.
    OVERWRITE takes the server's changes; a copy the device already based
    its local change on is none, and must not undo that change."""
    other = kinto_client(kinto_collection)
    fill(other, [{"id": "a", "name": "a1"}, {"id": "b", "name": "b1"}])
    store.sync_down(target, SOUP, name="down")
    newest = max(other.get_records(), key=lambda r: r["last_modified"])["id"]
    for rid in ("a", "b"):
        store.local_upsert(SOUP, {"id": rid, "name": rid + "-local"})
    state = store.resync("down")
    assert state["status"] == "DONE"
    local = local_by_id(store)
    assert local[newest]["name"] == newest + "-local" and local[newest]["__locally_updated__"] is True
    assert local["a"]["name"] == "a-local" and local["b"]["name"] == "b-local"
    # A change the server did make still wins under OVERWRITE.
    other.patch_record(id=newest, data={"name": "server"})
    store.resync("down")
    assert local_by_id(store)[newest]["name"] == "server" and is_clean(local_by_id(store)[newest])


def test_a_new_overwrite_sync_down_replaces_local_changes_the_server_did_not_touch(
    store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    """SmartSync's testSyncDownWithoutOverwrite: LEAVE_IF_CHANGED keeps the
    local edits; a new sync down in OVERWRITE then takes the server's copies,
    though the server never changed them, and leaves nothing to sync up."""
    other = kinto_client(kinto_collection)
    fill(other, [{"id": "a", "name": "a1"}, {"id": "b", "name": "b1"}, {"id": "c", "name": "c1"}])
    store.sync_down(target, SOUP, name="first")
    store.local_upsert(SOUP, [{"id": "a", "name": "a-local"}, {"id": "b", "name": "b-local"}])
    store.local_delete(SOUP, [local_by_id(store)["c"]["_soupEntryId"]])

    store.sync_down(target, SOUP, name="leave", merge_mode=sync.LEAVE_IF_CHANGED)
    local = local_by_id(store)
    assert {rid: (e["name"], e["__local__"]) for rid, e in local.items()} == {
        "a": ("a-local", True), "b": ("b-local", True), "c": ("c1", True)}

    again = store.sync_down(target, SOUP, name="overwrite", merge_mode=sync.OVERWRITE)
    assert again["status"] == "DONE" and again["synced"] == 3
    local = local_by_id(store)
    assert {rid: e["name"] for rid, e in local.items()} == {"a": "a1", "b": "b1", "c": "c1"}
    assert all(is_clean(e) for e in local.values()), local
    up = store.sync_up(target, SOUP)
    assert (up["status"], up["synced"], up["failed"]) == ("DONE", 0, 0)
    assert {r["id"]: r["name"] for r in other.get_records()} == {"a": "a1", "b": "b1", "c": "c1"}


# ---------------------------------------------------------------------------
# sync up


def test_sync_up_batches_and_reports_progress(
    store: tureen.Store, kinto_collection: Dict[str, Any], proxy: Proxy
) -> None:
    target = dict(kinto_collection, type="kinto", url=proxy.url)
    store.local_upsert(SOUP, [{"id": "n%04d" % i, "name": "x%d" % i} for i in range(1000)])
    seen: List[Dict[str, Any]] = []
    state = store.sync_up(target, SOUP, progress=seen.append)
    assert state["status"] == "DONE"
    assert state["synced"] == 1000 and state["done"] == 1000 and state["totalSize"] == 1000

    batches = proxy.seen("POST", "/batch")
    assert 40 <= len(batches) <= 42, len(batches)  # Kinto takes 25 changes per batch
    assert len(proxy.log) <= len(batches) + 5, [(s.method, s.path) for s in proxy.log]
    # One progress call per batch (and at the end), done growing to the total.
    assert len(seen) >= 40
    assert all(s["totalSize"] == 1000 for s in seen if s["done"] > 0)
    dones = [s["done"] for s in seen]
    assert dones == sorted(dones) and dones[-1] == 1000 and dones[0] < 1000
    assert seen[-1]["status"] == "DONE"

    server = server_by_id(kinto_client(kinto_collection))
    assert len(server) == 1000 and server["n0999"]["name"] == "x999"
    assert all(is_clean(e) for e in entries(store, SOUP))


def test_sync_up_fieldlist_on_update(
    store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    other = kinto_client(kinto_collection)
    other.create_record(id="u1", data={"name": "n1", "phone": "111"})
    store.sync_down(target, SOUP)
    store.local_upsert(SOUP, {"id": "u1", "name": "n2", "phone": "222"})

    state = store.sync_up(target, SOUP, fieldlist=["name"])
    assert state["status"] == "DONE" and state["options"]["fieldlist"] == ["name"]
    server = server_by_id(other)
    assert server["u1"]["name"] == "n2"
    assert server["u1"]["phone"] == "111"  # not in the fieldlist: not sent, and kept


def test_sync_up_fieldlist_on_create(
    store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    # The header: "fieldlist": sync up sends only these fields (and the id).
    store.local_upsert(SOUP, {"id": "u2", "name": "new", "phone": "333", "notes": "private"})
    assert store.sync_up(target, SOUP, fieldlist=["name"])["status"] == "DONE"
    server = server_by_id(kinto_client(kinto_collection))
    assert server["u2"]["name"] == "new"
    assert "phone" not in server["u2"] and "notes" not in server["u2"], server["u2"]


def test_rejected_record_fails_alone(
    store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    good = store.local_upsert(SOUP, [{"id": "ok-1", "name": "a"}, {"id": "ok-2", "name": "b"}])
    # Kinto refuses this record id (400): only this record can fail.
    bad = store.local_upsert(SOUP, {"id": "not valid!", "name": "c"})
    with pytest.raises(tureen.HTTPError) as info:
        store.sync_up(target, SOUP, name="up")
    state = info.value.state
    assert state is not None, "a failed sync's error carries its state"
    assert state["status"] == "FAILED"
    assert state["failed"] == 1 and state["failedIds"] == [bad["_soupEntryId"]]
    assert state["synced"] == 2 and state["conflicts"] == 0
    assert state["error"] and "1" in state["error"]
    assert store.sync_status("up") == state

    local = local_by_id(store)
    assert local["not valid!"]["__local__"] is True
    assert local["not valid!"]["__locally_created__"] is True
    assert local["not valid!"].get("__last_error__")
    for entry in good:
        assert is_clean(local[entry["id"]])
        assert not local[entry["id"]].get("__last_error__")
    assert set(server_by_id(kinto_client(kinto_collection))) == {"ok-1", "ok-2"}


def test_unauthorized_fails_at_once(
    store: tureen.Store, kinto_collection: Dict[str, Any], proxy: Proxy
) -> None:
    anonymous = {k: v for k, v in kinto_collection.items() if k != "auth"}
    target = dict(anonymous, type="kinto", url=proxy.url)
    started = time.monotonic()
    with pytest.raises(tureen.HTTPError) as info:
        store.sync_down(target, SOUP)
    assert time.monotonic() - started < 5
    assert len(proxy.log) == 1 and proxy.log[0].status == 401  # not retried
    assert "401" in info.value.message
    assert info.value.state is not None and info.value.state["status"] == "FAILED"

    # Another user (Kinto's basic auth takes any password as another user) is 403.
    proxy.clear()
    stranger = dict(target, auth={"user": "mallory", "password": "guess"})
    with pytest.raises(tureen.HTTPError) as info:
        store.sync_down(stranger, SOUP)
    assert len(proxy.log) == 1 and proxy.log[0].status == 403
    assert entries(store, SOUP) == []


def test_503_with_retry_after_is_retried(
    store: tureen.Store, kinto_collection: Dict[str, Any], proxy: Proxy
) -> None:
    kinto_client(kinto_collection).create_record(id="r1", data={"name": "x"})
    target = dict(kinto_collection, type="kinto", url=proxy.url)
    proxy.fail_next(2, 503, {"Retry-After": "1"})
    started = time.monotonic()
    state = store.sync_down(target, SOUP)
    elapsed = time.monotonic() - started
    assert state["status"] == "DONE" and "r1" in local_by_id(store)
    assert [s.status for s in proxy.log[:2]] == [503, 503]
    assert elapsed >= 1.8, "Retry-After: 1 was not honoured (%.2f s for two retries)" % elapsed

    # Past max_retries the sync fails.
    proxy.clear()
    proxy.fail_next(2, 503, {"Retry-After": "0"})
    with pytest.raises(tureen.HTTPError) as info:
        store.sync_down(dict(target, max_retries=1), SOUP)
    assert len(proxy.log) == 2
    assert info.value.state is not None and info.value.state["status"] == "FAILED"


def test_unreachable_server_is_a_network_error(store: tureen.Store, target: Dict[str, Any]) -> None:
    dead = dict(target, url="http://127.0.0.1:9/v1", max_retries=0, timeout_ms=2000)
    with pytest.raises(tureen.NetworkError) as info:
        store.sync_down(dead, SOUP)
    assert info.value.state is not None and info.value.state["status"] == "FAILED"


# ---------------------------------------------------------------------------
# cancellation


def test_cancel_from_another_thread_then_resync(
    store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    store.local_upsert(SOUP, [{"id": "k%03d" % i, "name": "x"} for i in range(250)])
    first_batch = threading.Event()
    cancelled = threading.Event()
    sync_ids: List[int] = []
    problems: List[BaseException] = []

    def progress(state: Dict[str, Any]) -> None:
        if not first_batch.is_set() and 0 < state["done"] < state["totalSize"]:
            sync_ids.append(state["_soupEntryId"])
            first_batch.set()
            # Hold the sync here until the other thread's cancel returned, so
            # that it stops before the next batch; bounded, in case cancel
            # waits for this very sync.
            cancelled.wait(WAIT / 2)

    def canceller() -> None:
        try:
            if first_batch.wait(WAIT):
                store.sync_cancel(sync_ids[0])
        except BaseException as exc:  # noqa: B902 - reported by the test
            problems.append(exc)
        finally:
            cancelled.set()

    thread = threading.Thread(target=canceller, daemon=True)
    thread.start()
    with pytest.raises(tureen.CancelledError) as info:
        run_bounded(store, lambda: store.sync_up(target, SOUP, name="up", progress=progress))
    thread.join(WAIT)
    assert problems == [] and not thread.is_alive()
    assert first_batch.is_set()
    state = info.value.state
    assert state["status"] == "STOPPED"
    assert 0 < state["done"] < 250
    assert store.sync_status("up")["status"] == "STOPPED"
    sent = len(server_by_id(kinto_client(kinto_collection)))
    assert sent < 250

    # Cancelling a sync that is not running does nothing.
    before = store.sync_status("up")
    store.sync_cancel("up")
    assert store.sync_status("up") == before
    with pytest.raises(tureen.NotFoundError):
        store.sync_cancel("no such sync")

    done = store.resync("up")
    assert done["status"] == "DONE"
    assert len(server_by_id(kinto_client(kinto_collection))) == 250
    assert all(is_clean(e) for e in entries(store, SOUP))


def test_progress_exception_stops_the_sync_and_is_raised(
    store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    store.local_upsert(SOUP, [{"id": "p%03d" % i, "name": "x"} for i in range(100)])

    class Boom(Exception):
        pass

    calls: List[int] = []

    def progress(state: Dict[str, Any]) -> None:
        calls.append(state["done"])
        raise Boom("from progress")

    with pytest.raises(Boom) as info:
        store.sync_up(target, SOUP, name="boom", progress=progress)
    cause = info.value.__cause__
    assert isinstance(cause, tureen.CancelledError), cause
    assert cause.state["status"] == "STOPPED"  # type: ignore[attr-defined]
    # Stopped at the first report, before any batch went out.
    assert calls == [0] and cause.state["done"] == 0  # type: ignore[attr-defined]
    assert len(server_by_id(kinto_client(kinto_collection))) == 0
    assert store.resync("boom")["status"] == "DONE"
    assert len(server_by_id(kinto_client(kinto_collection))) == 100


def test_progress_may_read_the_store(
    store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    fill(kinto_client(kinto_collection), [{"id": "q%03d" % i} for i in range(60)])
    counts: List[int] = []

    def progress(state: Dict[str, Any]) -> None:
        counts.append(store.count(query.all(SOUP)))
        store.sync_status(state["_soupEntryId"])

    state = run_bounded(store, lambda: store.sync_down(dict(target, page_size=20), SOUP, progress=progress))
    assert state["status"] == "DONE"
    assert counts and counts[-1] == 60 and counts == sorted(counts)


# ---------------------------------------------------------------------------
# ghosts, names, ids


def test_clean_ghosts(
    store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    other = kinto_client(kinto_collection)
    fill(other, [{"id": "g%d" % i, "name": "x"} for i in range(5)])
    down = store.sync_down(target, SOUP, name="down")
    # Deleted on the server, and no resync since to bring the tombstones.
    other.delete_record(id="g1")
    other.delete_record(id="g3")
    store.local_upsert(SOUP, {"id": "local-only", "name": "unsynced"})

    assert store.clean_ghosts("down") == 2
    assert set(local_by_id(store)) == {"g0", "g2", "g4", "local-only"}
    assert store.clean_ghosts(down["_soupEntryId"]) == 0

    up = store.sync_up(target, SOUP)
    with pytest.raises(tureen.InvalidError):
        store.clean_ghosts(up["_soupEntryId"])
    with pytest.raises(tureen.NotFoundError):
        store.clean_ghosts("nope")


def test_named_syncs_and_status(
    store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    kinto_client(kinto_collection).create_record(id="x", data={"name": "x"})
    down = store.sync_down(target, SOUP, name="contacts-down")
    up = store.sync_up(target, SOUP, name="contacts-up", merge_mode=sync.MERGE_FAIL_IF_CHANGED)
    assert down["name"] == "contacts-down" and up["name"] == "contacts-up"
    assert up["type"] == "syncUp" and up["options"]["mergeMode"] == "MERGE_FAIL_IF_CHANGED"
    assert down["_soupEntryId"] != up["_soupEntryId"]

    by_name = store.sync_status("contacts-down")
    assert by_name == store.sync_status(down["_soupEntryId"]) == store.sync_status(down)
    assert by_name["status"] == "DONE"
    # The state shows the target without its password; the sync keeps it
    # apart, inside the encrypted store, and resync still authenticates.
    assert by_name["target"]["auth"] == dict(kinto_collection["auth"], password="<redacted>")
    assert store.resync("contacts-down")["status"] == "DONE"

    # Names are unique: given again, the sync named runs again; another
    # definition under the name is refused.
    assert store.sync_down(target, SOUP, name="contacts-down")["_soupEntryId"] == down["_soupEntryId"]
    with pytest.raises(tureen.InvalidError, match="store.sync_update"):
        store.sync_down(target, SOUP, name="contacts-down", merge_mode=sync.LEAVE_IF_CHANGED)
    with pytest.raises(tureen.NotFoundError):
        store.sync_status("no-such-sync")
    with pytest.raises(tureen.NotFoundError):
        store.sync_status(987654)
    with pytest.raises(tureen.NotFoundError):
        store.resync("no-such-sync")
    with pytest.raises(TypeError):
        store.sync_status(True)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.sync_status(1.5)  # type: ignore[arg-type]

    unnamed = store.sync_down(target, SOUP)
    assert unnamed["name"] in (None, "")
    assert store.resync(unnamed["_soupEntryId"])["status"] == "DONE"
    assert store.count(query.all(sync.SYNCS_SOUP)) == 3


def test_create_bucket_and_collection(store: tureen.Store, kinto: KintoServer) -> None:
    target = sync.kinto_target(
        kinto.url, "made-by-tureen-%d" % time.time_ns(), "things",
        user="alice", password="pw", create=True,
    )
    store.local_upsert(SOUP, {"id": "t1", "name": "first"})
    assert store.sync_up(target, SOUP)["status"] == "DONE"
    assert store.sync_down(target, SOUP)["status"] == "DONE"
    without = dict(target, bucket=target["bucket"] + "-absent")
    del without["create"]
    with pytest.raises((tureen.HTTPError, tureen.NotFoundError)):
        store.sync_down(without, SOUP)


def test_target_builders() -> None:
    assert sync.kinto_target("http://h/v1", "b", "c") == {
        "type": "kinto", "url": "http://h/v1", "bucket": "b", "collection": "c",
    }
    assert sync.kinto_target("u", "b", "c", user="a", password="p", create=True, timeout_ms=5)[
        "auth"
    ] == {"user": "a", "password": "p"}
    assert sync.kinto_target("u", "b", "c", bearer="t")["auth"] == {"bearer": "t"}
    assert sync.rest_target("http://h/items", idField="uid") == {
        "type": "rest", "url": "http://h/items", "idField": "uid",
    }
    assert sync.callback_target("mem") == {"type": "callback", "name": "mem"}
    assert tureen.kinto_target is sync.kinto_target
    assert set(sync.MERGE_MODES) == {
        "OVERWRITE", "LEAVE_IF_CHANGED", "MERGE_ACCEPT_YOURS",
        "MERGE_FAIL_IF_CONFLICT", "MERGE_FAIL_IF_CHANGED",
    }


# ---------------------------------------------------------------------------
# PostgreSQL


def test_sync_down_and_up_on_postgresql(store: tureen.Store, kinto_pg: KintoServer) -> None:
    collection = new_kinto_collection(kinto_pg)
    target = dict(collection, type="kinto")
    other = kinto_client(collection)
    fill(other, [{"id": "pg%02d" % i, "name": "v1"} for i in range(30)])

    down = store.sync_down(target, SOUP, name="pg-down")
    assert down["status"] == "DONE" and len(entries(store, SOUP)) == 30
    store.local_upsert(SOUP, {"id": "pg00", "name": "v2"})
    created = store.local_upsert(SOUP, {"name": "made here"})
    store.local_delete(SOUP, [local_by_id(store)["pg01"]["_soupEntryId"]])
    up = store.sync_up(target, SOUP)
    assert up["status"] == "DONE" and up["synced"] == 3

    server = server_by_id(other)
    assert len(server) == 30 and "pg01" not in server
    assert server["pg00"]["name"] == "v2" and server[created["id"]]["name"] == "made here"
    other.patch_record(id="pg02", data={"name": "v3"})
    assert store.resync("pg-down")["status"] == "DONE"
    local = local_by_id(store)
    assert set(local) == set(server)
    assert local["pg02"]["name"] == "v3"


def test_progress_knows_the_total_from_the_first_page(store: tureen.Store, target: Dict[str, Any],
                                                       kinto_collection: Dict[str, Any]) -> None:
    """Kinto counts only for HEAD: sync down asks before the first page, so
    every report after it has the total, and progress climbs to 100."""
    fill(kinto_client(kinto_collection), [{"id": "p%02d" % i, "name": "n%d" % i} for i in range(12)])
    reports: List[Dict[str, Any]] = []
    store.sync_down(dict(target, page_size=5), SOUP, progress=reports.append)
    pages = [r for r in reports if r["done"] > 0]
    assert [r["totalSize"] for r in pages] == [12] * len(pages) and len(pages) >= 3
    assert [r["progress"] for r in pages[:3]] == [41, 83, 100]


def test_a_first_sync_of_one_page_asks_for_no_count(store: tureen.Store, target: Dict[str, Any],
                                                    kinto_collection: Dict[str, Any]) -> None:
    """The total is asked for (a HEAD) only once the first page says more
    are to come: a collection that fits one page costs one request, and its
    progress still ends with the total. One of several pages still counts."""
    fill(kinto_client(kinto_collection), [{"id": "o%02d" % i} for i in range(3)])
    reports: List[Dict[str, Any]] = []
    state = store.sync_down(target, SOUP, progress=reports.append)
    assert state["requests"] == 1, state["requests"]
    assert (state["done"], state["totalSize"], state["progress"]) == (3, 3, 100)
    # The page's report and the final one: both know the total.
    assert [(r["totalSize"], r["progress"]) for r in reports if r["done"] > 0] == [(3, 100)] * 2

    store.register_soup("second", [("id", "string")])
    state = store.sync_down(dict(target, page_size=2), "second")
    assert state["requests"] == 2 + 1, state["requests"]  # two pages and the count
    assert (state["done"], state["totalSize"]) == (3, 3)


def test_progress_goes_on_across_a_resume(store: tureen.Store, target: Dict[str, Any],
                                          kinto_collection: Dict[str, Any]) -> None:
    """A sync down stopped half-way and resumed reports progress as one
    download: the resumed run starts from the records already brought, knows
    the total, and ends at exactly the number of records (the record at the
    resume point, which comes again, is not counted twice)."""
    fill(kinto_client(kinto_collection), [{"id": "q%02d" % i, "name": "n%d" % i} for i in range(23)])

    class Enough(Exception):
        pass

    def until_ten(state: Dict[str, Any]) -> None:
        if state["done"] >= 10:
            raise Enough()

    with pytest.raises(Enough):
        store.sync_down(dict(target, page_size=5), SOUP, name="half", progress=until_ten)
    stopped = store.sync_status("half")
    assert stopped["status"] == "STOPPED" and stopped["done"] == 10 and stopped["totalSize"] == 23

    reports: List[Dict[str, Any]] = []
    final = store.resync("half", progress=reports.append)
    done = [r["done"] for r in reports]
    assert done[0] == 10 and done == sorted(done), done  # from where it stopped, never back
    assert all(r["totalSize"] == 23 for r in reports), [r["totalSize"] for r in reports]
    assert final["status"] == "DONE" and final["done"] == 23 and final["progress"] == 100
    assert store.count(query.all(SOUP)) == 23

    # A run after a DONE one is a new run: it counts from 0 again.
    assert store.resync("half")["done"] <= 1


def test_cancel_by_name_before_the_state_is_saved(
    store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    """Another thread cancels a new sync by its name while the sync cannot
    even save its state yet (this thread holds the store's write lock): the
    cancel is not lost, and the sync stops before its first page."""
    fill(kinto_client(kinto_collection), [{"id": "c%02d" % i} for i in range(5)])
    outcome: List[Any] = []
    cancelled_while_locked = False

    def sync() -> None:
        try:
            outcome.append(store.sync_down(target, SOUP, name="early"))
        except BaseException as exc:  # noqa: B902 - reported by the test
            outcome.append(exc)

    thread = threading.Thread(target=sync, daemon=True)
    with store.transaction():  # the sync's first write waits for this block
        thread.start()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            try:
                store.sync_cancel("early")
                cancelled_while_locked = True
                break
            except tureen.NotFoundError:  # the call has not begun yet
                time.sleep(0.001)
    thread.join(WAIT)
    assert not thread.is_alive()
    assert cancelled_while_locked, "the cancel found no sync named 'early' while it was starting"
    [result] = outcome
    assert isinstance(result, tureen.CancelledError), result
    assert result.state["status"] == "STOPPED" and result.state["done"] == 0
    assert store.count(query.all(SOUP)) == 0
    assert store.resync("early")["done"] == 5  # a resync continues it
