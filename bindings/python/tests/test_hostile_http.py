"""Servers that lie, stall, flood or plant odd data (issue 10). No answer may
crash the host or exhaust its memory, send a request outside the target's
collection, hold a call past the target's max_wait_ms, or get a change
marked synced without a readable confirmation; no target may inject headers.

Against the hostile servers of hostile.py, RestServer (which logs the raw
request-target) and a real Kinto behind hostile.KintoProxy (which logs every
request and every batched sub-request as the library wrote it).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import logging
import math
import re
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest

import tureen
from tureen import _library

from conftest import KINTO_AUTH, new_kinto_collection, run_python
from hostile import (LOOPING_NEXT_PAGE, KintoProxy, HostileServer, Reply, Seen, endless_chunks, gzip_bomb,
                     json_reply, kinto_integrity_conflict, looping_page, not_json, SlowTLSServer, truncated_json,
                     with_backoff, with_next_page)
from servers import KintoServer, RestServer, wait_until
from sync_support import close_unless_stuck, entries, is_clean, run_bounded

KEY = "e5" * 32
SOUP = "items"
# A call the fixed library ends at once; today's waited 300 s per retry.
BOUND = 10.0


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    s = tureen.Store.open(tmp_path / "hostile.db", raw_key=KEY)
    try:
        s.register_soup(SOUP, [("id", "string"), ("uid", "string")])
        yield s
    finally:
        close_unless_stuck(s)


def rest_target(server: RestServer, **extra: Any) -> Dict[str, Any]:
    """RestServer's API (see test_sync_rest.rest_target), no retries unless asked."""
    t: Dict[str, Any] = {
        "type": "rest", "url": server.items_url, "headers": {"X-Api-Key": "secret"}, "idField": "uid",
        "modifiedField": "version_ts", "recordsPath": "items", "since": {"param": "updated_after", "exclusive": True},
        "sortedByModification": True, "nextPage": {"cursorPath": "next_cursor", "cursorParam": "cursor"},
        "tombstone": {"field": "removed", "value": True}, "concurrency": {"versionField": "rev"},
        "conflictRecordPath": "current", "max_retries": 0,
    }
    t.update(extra)
    return t


def plain_target(server: HostileServer, **extra: Any) -> Dict[str, Any]:
    """A REST target at ``server``/api/items: ids in "id", stamps in
    "last_modified", records listed under "items", no batch."""
    t: Dict[str, Any] = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items", "max_retries": 0}
    t.update(extra)
    return t


def kinto_target(collection: Dict[str, Any], proxy: KintoProxy, **extra: Any) -> Dict[str, Any]:
    return dict(collection, type="kinto", url=proxy.url, max_retries=2, **extra)


def records_path(collection: Dict[str, Any]) -> str:
    return "/v1/buckets/%s/collections/%s/records" % (collection["bucket"], collection["collection"])


def kinto_records(kinto: KintoServer, collection: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    r = kinto.request("GET", records_path(collection)[len("/v1"):], auth=KINTO_AUTH)
    assert r.status == 200, r.body[:300]
    return {rec["id"]: rec for rec in r.json()["data"]}


def attempt(call: Callable[[], Any]) -> Tuple[Optional[Dict[str, Any]], Optional[tureen.Error]]:
    """(state, None) when ``call`` returned, (its state, the error) when it
    raised a tureen.Error: so a test can check what went over the wire
    before it checks how the call ended."""
    try:
        return call(), None
    except tureen.Error as e:
        return getattr(e, "state", None), e


def by_id(store: tureen.Store, field: str = "id") -> Dict[str, Dict[str, Any]]:
    return {e[field]: e for e in entries(store, SOUP)}


# ---------------------------------------------------------------------------
# 1. ids made of dots never move a request out of the collection

DOTS = re.compile(r"(?:%2E)+", re.I)


@pytest.mark.parametrize("rid", [".", ".."])
def test_dot_ids_stay_in_the_collection_on_a_rest_target(store: tureen.Store, rest_server: RestServer,
                                                         rid: str) -> None:
    """libcurl resolves dot segments: PUT /api/items/.. went to /api/. Every
    create, update and delete of "." or ".." (made by the app, or planted by
    the server) must go to /api/items/%2E%2E, which the server reads as ".."."""
    target = rest_target(rest_server)
    outcomes: List[Any] = []
    outcomes.append(attempt(lambda: store.local_upsert(SOUP, {"uid": rid, "v": 1}, id_field="uid")))
    outcomes.append(attempt(lambda: store.sync_up(target, SOUP, name="up")))           # create
    after_create = rest_server.get_record(rid)
    outcomes.append(attempt(lambda: store.local_upsert(SOUP, dict(by_id(store, "uid")[rid], v=2), id_field="uid")))
    outcomes.append(attempt(lambda: store.resync("up")))                                # update
    after_update = rest_server.get_record(rid)
    outcomes.append(attempt(lambda: store.local_delete(SOUP, [by_id(store, "uid")[rid]["_soupEntryId"]])))
    outcomes.append(attempt(lambda: store.resync("up")))                                # delete
    after_delete = rest_server.get_record(rid)
    # Planted by the server, pulled by sync down, changed here and deleted.
    rest_server.set_record({"uid": rid, "v": 10})
    outcomes.append(attempt(lambda: store.sync_down(target, SOUP, name="down")))
    outcomes.append(attempt(lambda: store.local_upsert(SOUP, dict(by_id(store, "uid")[rid], v=11), id_field="uid")))
    outcomes.append(attempt(lambda: store.resync("up")))                                # update
    after_planted_update = rest_server.get_record(rid)
    outcomes.append(attempt(lambda: store.local_delete(SOUP, [by_id(store, "uid")[rid]["_soupEntryId"]])))
    outcomes.append(attempt(lambda: store.resync("up")))                                # delete

    # What went over the wire first: every write named the record inside
    # the collection, with its dots encoded (nothing for libcurl to resolve).
    encoded = "/api/items/" + "%2E" * len(rid)
    writes = [(r.method, r.target) for r in rest_server.requests() if r.method != "GET"]
    for method, raw in writes:
        assert raw.split("?")[0].upper() == encoded.upper(), "%s went to %r, not %r" % (method, raw, encoded)
    for r in rest_server.requests("GET"):
        assert r.target.split("?")[0] == "/api/items", r.target
    assert [m for m, _ in writes] == ["PUT", "PUT", "DELETE", "PUT", "DELETE"], writes
    # And it all worked, on the record the server knows as `rid`.
    assert [e for _, e in outcomes if e is not None] == []
    assert after_create is not None and after_create["v"] == 1
    assert after_update is not None and after_update["v"] == 2
    assert after_delete is None
    assert after_planted_update is not None and after_planted_update["v"] == 11
    assert rest_server.get_record(rid) is None and entries(store, SOUP) == []


def test_dot_ids_stay_in_the_collection_on_kinto(store: tureen.Store, kinto: KintoServer) -> None:
    """On Kinto a lone change goes out as its own request (libcurl turned
    records/.. into a PUT on the collection itself), several go in a /batch
    (where "records/.." was written as is). Kinto refuses such ids (400), so
    each of those records fails alone; the others sync."""
    collection = new_kinto_collection(kinto)
    records = records_path(collection)
    kinto.request("PATCH", records[len("/v1"):].rsplit("/records", 1)[0], body={"data": {"title": "kept"}},
                  auth=KINTO_AUTH)
    with KintoProxy(kinto.url) as proxy:
        target = kinto_target(collection, proxy)

        proxy.plant(records, [{"id": "..", "last_modified": 1, "title": "planted"}], times=1)
        rounds: Dict[str, Any] = {}
        rounds["down"] = attempt(lambda: store.sync_down(target, SOUP, name="down"))
        planted = by_id(store).get("..")
        if planted is not None:
            store.local_upsert(SOUP, dict(planted, title="changed here"))
            rounds["update .."] = attempt(lambda: store.sync_up(target, SOUP, name="up"))       # alone
            store.local_delete(SOUP, [planted["_soupEntryId"]])
            rounds["delete .."] = attempt(lambda: store.resync("up"))                           # alone
        # A lone create goes out alone only from a soup with no other change.
        store.register_soup("solo", [("id", "string")])
        store.local_upsert("solo", {"id": ".", "v": 1})
        rounds["create ."] = attempt(lambda: store.sync_up(target, "solo"))                     # alone
        store.local_upsert(SOUP, [{"id": ".", "v": 1}, {"id": "ok", "v": 2}, {"id": "also-ok", "v": 3}])
        rounds["batch"] = attempt(lambda: store.resync("up"))  # delete "..", create ".", "ok", "also-ok"

        # No request and no batched sub-request left <collection>/records/<id>.
        allowed_writes = {records + "/" + seg for seg in ("ok", "also-ok")}
        for method, path in proxy.all_paths():
            if method in ("GET", "HEAD") and path in ("/v1/", records):
                continue
            if method == "POST" and path == "/v1/batch":
                continue
            assert path.startswith(records + "/"), "%s %s left the collection's records" % (method, path)
            seg = path[len(records) + 1:]
            assert path in allowed_writes or DOTS.fullmatch(seg), "%s %s: dots not encoded" % (method, path)
        assert proxy.batches(), "the last sync up sent no /batch"

    # Kinto kept its collection, has the good records and none of the dots.
    meta = kinto.request("GET", records[len("/v1"):].rsplit("/records", 1)[0], auth=KINTO_AUTH).json()["data"]
    assert meta.get("title") == "kept" and "v" not in meta, meta
    assert set(kinto_records(kinto, collection)) == {"ok", "also-ok"}
    assert rounds["down"][1] is None and planted is not None
    for name in ("update ..", "delete ..", "create ."):
        state, error = rounds[name]
        assert isinstance(error, tureen.HTTPError), (name, error)
        assert state["status"] == "FAILED" and state["failed"] == 1 and state["synced"] == 0, (name, state)
    state, error = rounds["batch"]
    assert isinstance(error, tureen.HTTPError) and state["failed"] == 2 and state["synced"] == 2, state
    local = by_id(store)
    assert is_clean(local["ok"]) and is_clean(local["also-ok"])
    assert local["."]["__local__"] and local["."]["__last_error__"]
    assert local[".."]["__locally_deleted__"] and local[".."]["__last_error__"]


# ---------------------------------------------------------------------------
# 2. bounded responses: a flood fails the call, not the process

CHILD = textwrap.dedent(
    """
    import json, resource, sys
    import tureen
    url, path, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    s = tureen.Store.open(path, raw_key=%r)
    s.register_soup("items", [("id", "string")])
    try:
        s.sync_down({"type": "rest", "url": url, "recordsPath": "items"}, "items")
        out = {"error": None}
    except tureen.Error as e:
        out = {"error": type(e).__name__, "message": str(e), "status": (getattr(e, "state", None) or {}).get("status")}
    peak = [l.split()[1] for l in open("/proc/self/status") if l.startswith("VmPeak")]
    out["vm_peak_kib"] = int(peak[0]) if peak else None
    print(json.dumps(out))
    """ % KEY
)

# The child's address space: a sync of a 20 MB page peaks near 190 MiB of
# address space, a refused flood near 220 MiB; 1 GiB is far above either
# and far below the GiBs the old library grew to (it aborted in curl).
AS_LIMIT = 1 << 30


@pytest.mark.parametrize("flood", [gzip_bomb, endless_chunks], ids=["gzip-bomb", "endless-chunked"])
def test_a_flood_fails_the_call_not_the_process(tmp_path: Path, flood: Callable[[], Any]) -> None:
    """8 MiB of gzip that inflate to 8 GiB, or a chunked body that never
    ends: under RLIMIT_AS the child survives and the sync raises HTTPError
    naming max_response_bytes, not retried (max_retries is the default 5)."""
    with HostileServer(lambda r: flood()) as server:
        done = run_python(CHILD, [server.url + "/api/items", str(tmp_path / "c.db"), str(AS_LIMIT)], timeout=60)
        sent = server.request_count()
    assert done.returncode == 0, "the child died (%d): %s" % (done.returncode, done.stderr[-1500:])
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["error"] == "HTTPError" and "max_response_bytes" in out["message"], out
    assert out["status"] == "FAILED" and sent == 1, (out, sent)


def test_max_response_bytes_is_the_targets_to_set(store: tureen.Store) -> None:
    big = json_reply({"items": [{"id": "r%d" % i, "last_modified": i + 1, "pad": "x" * 100} for i in range(50)]})
    with HostileServer(lambda r: big) as server:
        state, error = attempt(lambda: store.sync_down(plain_target(server, max_response_bytes=2048, max_retries=3),
                                                       SOUP))
        assert isinstance(error, tureen.HTTPError) and "max_response_bytes" in str(error), error
        assert state["status"] == "FAILED" and server.request_count() == 1  # not retried
        assert entries(store, SOUP) == []
        assert store.sync_down(plain_target(server, max_response_bytes=1 << 20), SOUP)["synced"] == 50
        for bad in (10, 1023, 2**40 + 1, -1, "lots", 1.5):
            with pytest.raises(tureen.InvalidError):
                store.sync_down(plain_target(server, max_response_bytes=bad), SOUP)
        assert server.request_count() == 2


# ---------------------------------------------------------------------------
# 6. a server cannot hold the call: Retry-After and Backoff beyond max_wait_ms


@pytest.mark.parametrize("status", [429, 503])
def test_a_day_long_retry_after_ends_the_call_at_once(store: tureen.Store, rest_server: RestServer,
                                                      status: int) -> None:
    rest_server.set_record({"uid": "r1"})
    rest_server.fail_next(1, status=status, retry_after=86400)
    target = rest_target(rest_server, max_retries=5)
    started = time.monotonic()
    with pytest.raises(tureen.HTTPError) as info:
        run_bounded(store, lambda: store.sync_down(target, SOUP, name="slow"), timeout=BOUND)
    assert time.monotonic() - started < 5
    asked_at = time.time() * 1000
    state = info.value.state  # type: ignore[attr-defined]
    assert "86400" in str(info.value) and "86400" in state["error"], state["error"]
    assert state["status"] == "FAILED"
    assert abs(state["retryAt"] - (asked_at + 86400 * 1000)) < 60_000, state["retryAt"] - asked_at
    assert store.sync_status("slow")["retryAt"] == state["retryAt"]
    assert rest_server.request_count() == 1  # no retry either

    # A wait within max_wait_ms is honoured, and the sync goes on.
    rest_server.fail_next(1, status=status, retry_after=1)
    started = time.monotonic()
    state = run_bounded(store, lambda: store.resync("slow"), timeout=BOUND)
    assert state["status"] == "DONE" and "r1" in by_id(store, "uid")
    assert time.monotonic() - started >= 0.95
    assert rest_server.request_count() == 3 and not store.sync_status("slow").get("retryAt")


@pytest.mark.parametrize("form", ["http-date", "past Int64"])
def test_a_retry_after_in_its_other_forms_ends_the_call_at_once(store: tureen.Store, form: str) -> None:
    """Retry-After may be an HTTP-date (RFC 9110), and a number may be past
    any integer: both ask for more than max_wait_ms here. They used to be
    ignored: the call retried max_retries times at its own pace."""
    a_day_on = time.gmtime(time.time() + 86400)
    value = (time.strftime("%a, %d %b %Y %H:%M:%S GMT", a_day_on) if form == "http-date"
             else "99999999999999999999")
    answer = json_reply({"error": "slow down"}, 429, {"Retry-After": value})
    with HostileServer(lambda r: answer) as server:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items", "max_retries": 3}
        with pytest.raises(tureen.HTTPError) as info:
            run_bounded(store, lambda: store.sync_down(target, SOUP, name="later"), timeout=BOUND)
        assert server.request_count() == 1
        retry_at = info.value.state["retryAt"]  # type: ignore[attr-defined]
        if form == "http-date":
            assert abs(retry_at - (time.time() + 86400) * 1000) < 60_000
        else:
            assert retry_at > (time.time() + 365 * 86400) * 1000


def test_a_day_long_backoff_ends_the_call_at_once(store: tureen.Store) -> None:
    """Kinto's Backoff header asks the client to wait before its next request
    (here: the next page)."""
    page1 = json_reply({"items": [{"id": "a", "last_modified": 1}]})

    def respond(r: Seen) -> Reply:
        if "page=2" in r.target:
            return json_reply({"items": [{"id": "b", "last_modified": 2}]})
        return with_backoff(with_next_page(page1, server.url + "/api/items?page=2"), 86400)

    with HostileServer(respond) as server:
        started = time.monotonic()
        with pytest.raises(tureen.HTTPError) as info:
            run_bounded(store, lambda: store.sync_down(plain_target(server, nextPage={"header": "Next-Page"}), SOUP),
                        timeout=BOUND)
        assert time.monotonic() - started < 5
        asked_at = time.time() * 1000
        assert [r.target for r in server.requests()] == ["/api/items"]
    state = info.value.state  # type: ignore[attr-defined]
    assert "86400" in str(info.value) and state["status"] == "FAILED"
    assert abs(state["retryAt"] - (asked_at + 86400 * 1000)) < 60_000


# ---------------------------------------------------------------------------
# 7. a confirmation must be readable to count

BAD_CONFIRMATIONS = {
    "not-json": lambda r: not_json(),
    "truncated": lambda r: truncated_json(dict(r.json(), last_modified=7)),
    "empty-object": lambda r: json_reply({}),
    "other-record": lambda r: json_reply(dict(r.json(), id="someone-else", last_modified=7)),
}


def sane(records: List[Dict[str, Any]], no_content: Tuple[str, ...] = ()) -> Callable[[Seen], Reply]:
    """A REST API that lists ``records`` and confirms what it is sent: with
    the stored record, or with a bare 204 for the ids in ``no_content``."""
    def respond(r: Seen) -> Reply:
        if r.method == "GET":
            return json_reply({"items": records})
        if r.method == "DELETE" or r.path.rsplit("/", 1)[-1] in no_content:
            return Reply(204)
        return json_reply(dict(r.json(), last_modified=int(time.time() * 1000)), 201)
    return respond


@pytest.mark.parametrize("lie", sorted(BAD_CONFIRMATIONS))
def test_an_unreadable_confirmation_leaves_the_change_local(store: tureen.Store, lie: str) -> None:
    """PUT of a create and of an update, each answered 200 with a body that
    is not JSON, cut short, empty or about another record: both stay local.
    Then a sane server confirms them (one with a bare 204): both are clean."""
    with HostileServer(sane([{"id": "u1", "last_modified": 1, "v": 1}])) as server:
        target = plain_target(server)
        store.sync_down(target, SOUP)
        store.local_upsert(SOUP, [dict(by_id(store)["u1"], v=2), {"id": "n1", "v": 1}])
        server.respond = lambda r: BAD_CONFIRMATIONS[lie](r) if r.method == "PUT" else sane([])(r)
        state, error = attempt(lambda: store.sync_up(target, SOUP, name="up"))
        local = by_id(store)
        assert sorted(local) == ["n1", "u1"], "the answer %s replaced a record: %s" % (lie, sorted(local))
        for rid, flag in (("u1", "__locally_updated__"), ("n1", "__locally_created__")):
            assert local[rid]["__local__"] is True and local[rid][flag] is True, \
                "%s marked clean by a %s answer: %s" % (rid, lie, local[rid])
            assert local[rid].get("__last_error__"), local[rid]
        assert isinstance(error, tureen.HTTPError), error
        assert state["status"] == "FAILED" and state["failed"] == 2 and state["synced"] == 0, state
        assert sorted(r.path for r in server.requests("PUT")) == ["/api/items/n1", "/api/items/u1"]

        server.respond = sane([], no_content=("u1",))
        state = store.resync("up")
        assert state["status"] == "DONE" and state["synced"] == 2
        assert all(is_clean(e) and not e.get("__last_error__") for e in entries(store, SOUP))
        assert server.request_count("PUT") == 4


# (name, answer to the /batch, whether it answers each request: then each
# record fails alone, with __last_error__).
BAD_BATCH_ANSWERS: List[Tuple[str, Callable[[Seen], Reply], bool]] = [
    ("records-not-named", lambda r: json_reply({"responses": [
        {"status": 201, "path": s["path"], "body": {"data": {}}} for s in r.json()["requests"]]}), True),
    ("records-swapped", lambda r: json_reply({"responses": [
        {"status": 201, "path": s["path"], "body": {"data": dict(s["body"]["data"], id="x" + s["body"]["data"]["id"],
                                                                 last_modified=5)}}
        for s in r.json()["requests"]]}), True),
    ("not-json", lambda r: not_json(), False),
    ("truncated", lambda r: truncated_json({"responses": [
        {"status": 201, "path": s["path"], "body": {"data": dict(s["body"]["data"], last_modified=5)}}
        for s in r.json()["requests"]]}), False),
    ("no-responses", lambda r: json_reply({"responses": []}), False),
]


def test_an_unreadable_batch_answer_leaves_every_change_local(store: tureen.Store, kinto: KintoServer) -> None:
    """Kinto behind the proxy; each /batch of the first runs answered 200 by
    the proxy with an answer that confirms nothing (Kinto never sees it);
    then Kinto answers, and everything is synced."""
    collection = new_kinto_collection(kinto)
    store.local_upsert(SOUP, [{"id": "b%d" % i, "v": i} for i in range(3)])
    with KintoProxy(kinto.url) as proxy:
        target = kinto_target(collection, proxy)
        for n, (lie, answer, per_record) in enumerate(BAD_BATCH_ANSWERS):
            proxy.intercept = lambda r: answer(r) if r.method == "POST" and r.path.endswith("/batch") else None
            state, error = attempt(lambda: store.sync_up(target, SOUP, name="up") if n == 0 else store.resync("up"))
            local = by_id(store)
            assert sorted(local) == ["b0", "b1", "b2"], "the %s answer replaced records: %s" % (lie, sorted(local))
            assert all(e["__local__"] and e["__locally_created__"] for e in local.values()), \
                "the %s answer marked changes clean: %s" % (lie, local)
            assert isinstance(error, tureen.HTTPError), (lie, error)
            assert state["status"] == "FAILED" and state["synced"] == 0, (lie, state)
            if per_record:
                assert state["failed"] == 3 and all(e.get("__last_error__") for e in local.values()), (lie, state)
            assert len(proxy.batches()) == n + 1 and len(proxy.batches()[-1]) == 3, lie
        assert kinto_records(kinto, collection) == {}
        proxy.intercept = lambda r: None
        state = store.resync("up")
    assert state["status"] == "DONE" and state["synced"] == 3
    assert all(is_clean(e) and not e.get("__last_error__") for e in entries(store, SOUP))
    assert set(kinto_records(kinto, collection)) == {"b0", "b1", "b2"}


# ---------------------------------------------------------------------------
# 9. header injection, and links that lead elsewhere

INJECTIONS: List[Tuple[str, Callable[[Dict[str, Any]], None]]] = [
    ("value CRLF", lambda t: t["headers"].update({"X-Api-Key": "secret\r\nX-Evil: 1"})),
    ("value LF", lambda t: t["headers"].update({"X-Api-Key": "secret\nX-Evil: 1"})),
    ("value CR", lambda t: t["headers"].update({"X-Api-Key": "secret\rX-Evil: 1"})),
    ("value NUL", lambda t: t["headers"].update({"X-Api-Key": "secret\x00"})),
    ("value trailing CRLF", lambda t: t["headers"].update({"X-Api-Key": "secret\r\n"})),
    ("name with colon", lambda t: t["headers"].update({"X-Evil: 1\r\nX-Api-Key": "secret"})),
    ("name colon only", lambda t: t["headers"].update({"X-Evil:": "1"})),
    ("name CRLF", lambda t: t["headers"].update({"X-A\r\nX-Evil": "1"})),
    ("name space", lambda t: t["headers"].update({"Bad Name": "x"})),
    ("empty name", lambda t: t["headers"].update({"": "x"})),
    ("bearer CRLF", lambda t: t.update(auth={"bearer": "token\r\nX-Evil: 1"})),
    ("bearer LF", lambda t: t.update(auth={"bearer": "token\nX-Evil: 1"})),
    ("url space", lambda t: t.update(url=t["url"] + " HTTP/1.1\r\nX-Evil: 1")),
    ("url inner space", lambda t: t.update(url=t["url"].replace("/items", "/it ems"))),
    ("url tab", lambda t: t.update(url=t["url"].replace("/items", "/\titems"))),
    ("url control", lambda t: t.update(url=t["url"] + "\x01")),
    ("url LF", lambda t: t.update(url=t["url"] + "\nX-Evil: 1")),
    ("url credentials", lambda t: t.update(url=t["url"].replace("http://", "http://user:pass@"))),
    ("url scheme", lambda t: t.update(url="file:///etc/passwd")),
]


def test_targets_that_would_inject_headers_are_refused(store: tureen.Store, rest_server: RestServer) -> None:
    """Each bad target: InvalidError before any request (the server's log
    stays empty), for sync down and sync up alike."""
    let_through: List[str] = []
    for n, (name, change) in enumerate(INJECTIONS):
        store.local_upsert(SOUP, {"uid": "u%d" % n}, id_field="uid")  # something to send up
        for call in ("sync_down", "sync_up"):
            target = rest_target(rest_server)
            change(target)
            _, error = attempt(lambda: getattr(store, call)(target, SOUP))
            if not isinstance(error, tureen.InvalidError) or rest_server.request_count():
                let_through.append("%s (%s): %r, %d request(s) %s" % (
                    name, call, error, rest_server.request_count(),
                    [r.headers.get("x-evil") for r in rest_server.requests()]))
            rest_server.clear_log()
    assert not let_through, "not refused before any request:\n" + "\n".join(let_through)
    # The same target without the injection works.
    assert store.sync_down(rest_target(rest_server), SOUP)["status"] == "DONE"


@pytest.mark.parametrize("refusal", [405, 501])
def test_a_count_head_the_server_lacks_leaves_the_total_unknown(store: tureen.Store, refusal: int) -> None:
    """A target that counts with HEAD ("countWithHead") on a server without
    HEAD, which says so with 405 or 501 (as Python's http.server does),
    syncs without a total, HEAD asked once: asking again cannot help (the
    library before retried a 501 and then failed the sync)."""
    def respond(r: Seen) -> Reply:
        if r.method == "HEAD":
            return json_reply({"error": "no HEAD here"}, status=refusal)
        if r.query.get("page") == ["2"]:
            return json_reply({"items": [{"id": "b", "last_modified": 2}]})
        return with_next_page(json_reply({"items": [{"id": "a", "last_modified": 1}]}),
                              server.url + "/api/items?page=2")

    with HostileServer(respond) as server:
        target = plain_target(server, nextPage={"header": "Next-Page"}, countWithHead=True, max_retries=2)
        state, error = attempt(lambda: run_bounded(store, lambda: store.sync_down(target, SOUP), timeout=BOUND))
        heads = [r.target for r in server.requests() if r.method == "HEAD"]
    assert error is None and state is not None and state["status"] == "DONE", (state, error)
    assert len(heads) == 1 and sorted(by_id(store)) == ["a", "b"], heads


@pytest.mark.parametrize("where", ["other-port", "other-path", "other-host"])
def test_a_next_page_link_elsewhere_is_not_followed(store: tureen.Store, where: str) -> None:
    with HostileServer(lambda r: json_reply({"items": [{"id": "z", "last_modified": 9}]})) as elsewhere:
        def respond(r: Seen) -> Reply:
            if r.target != "/api/items":  # where the link led: a last page
                return json_reply({"items": [{"id": "z", "last_modified": 9}]})
            link = {"other-port": elsewhere.url + "/api/items?page=2",
                    "other-path": server.url + "/api/secrets?page=2",
                    "other-host": server.url.replace("127.0.0.1", "localhost") + "/api/items?page=2"}[where]
            return with_next_page(json_reply({"items": [{"id": "a", "last_modified": 1}]}), link)

        with HostileServer(respond) as server:
            state, error = attempt(lambda: run_bounded(
                store, lambda: store.sync_down(plain_target(server, nextPage={"header": "Next-Page"}), SOUP),
                timeout=BOUND))
            assert elsewhere.requests() == [] and [r.target for r in server.requests()] == ["/api/items"], \
                "followed %s: %s" % (where, [r.line for r in elsewhere.requests() + server.requests()])
    assert isinstance(error, tureen.HTTPError), error
    assert state["status"] == "FAILED" and "z" not in by_id(store)


def test_a_kinto_next_page_elsewhere_is_not_followed(store: tureen.Store, kinto: KintoServer) -> None:
    collection = new_kinto_collection(kinto)
    kinto.request("PUT", records_path(collection)[len("/v1"):] + "/r1", body={"data": {}}, auth=KINTO_AUTH)
    with HostileServer(lambda r: json_reply({"data": [{"id": "z", "last_modified": 9}]})) as elsewhere, \
            KintoProxy(kinto.url) as proxy:
        def lead_away(r: Seen) -> Optional[Reply]:
            if r.method == "GET" and r.path == records_path(collection):
                status, headers, body = proxy.forward(r)
                return Reply(status, body, dict(headers, **{"Next-Page": elsewhere.url + r.target}))
            return None

        proxy.intercept = lead_away
        state, error = attempt(lambda: run_bounded(store, lambda: store.sync_down(kinto_target(collection, proxy),
                                                                                  SOUP), timeout=BOUND))
        assert elsewhere.requests() == [], [r.line for r in elsewhere.requests()]
    assert isinstance(error, tureen.HTTPError), error
    assert state["status"] == "FAILED" and "z" not in by_id(store)


# ---------------------------------------------------------------------------
# 15. Kinto's batch limit


@pytest.fixture(scope="module")
def small_batch_kinto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KintoServer]:
    server = KintoServer("memory", tmp_path_factory.mktemp("kinto5"), settings={"kinto.batch_max_requests": "5"})
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_sync_up_chunks_by_the_servers_batch_limit(store: tureen.Store, small_batch_kinto: KintoServer) -> None:
    collection = new_kinto_collection(small_batch_kinto)
    assert small_batch_kinto.request("GET", "/").json()["settings"]["batch_max_requests"] == 5
    with KintoProxy(small_batch_kinto.url) as proxy:
        store.local_upsert(SOUP, [{"id": "r%02d" % i, "v": i} for i in range(13)])
        state, error = attempt(lambda: store.sync_up(kinto_target(collection, proxy), SOUP))
        sizes = [len(b) for b in proxy.batches()]
    assert sizes and max(sizes) <= 5, "batches of %s (Kinto allows 5): %s" % (sizes, error)
    assert sum(sizes) == 13, sizes
    assert error is None and state["status"] == "DONE" and state["synced"] == 13, error
    assert set(kinto_records(small_batch_kinto, collection)) == {"r%02d" % i for i in range(13)}
    assert all(is_clean(e) for e in entries(store, SOUP))


# ---------------------------------------------------------------------------
# 16. Kinto's "integrity constraint violated, please retry" is retried


def refuse_once(proxy: KintoProxy, how: str) -> List[str]:
    """Makes the first write of the sync answer Kinto's 409 errno 122 (with
    Retry-After: 1): the whole /batch, one sub-request of it (the others go
    to Kinto), or a lone PUT. Returns the list the refused request is noted
    in (its request line, or "METHOD path" of the sub-request)."""
    refused: List[str] = []
    conflict = kinto_integrity_conflict(1)

    def intercept(r: Seen) -> Optional[Reply]:
        if refused:
            return None
        if how == "single" and r.method == "PUT":
            refused.append(r.line)
            return conflict
        if r.method != "POST" or not r.path.endswith("/batch"):
            return None
        if how == "batch":
            refused.append(r.line)
            return conflict
        payload = r.json()
        first, rest = payload["requests"][0], payload["requests"][1:]
        refused.append("%s %s" % (first["method"], first["path"]))
        status, _, body = proxy.forward(r, json.dumps(dict(payload, requests=rest)).encode())
        answers = json.loads(body)["responses"]
        answers.insert(0, {"path": first["path"], "status": 409, "body": conflict.body,
                           "headers": dict(conflict.headers)})
        return json_reply({"responses": answers}, status)

    proxy.intercept = intercept
    return refused


@pytest.mark.parametrize("how", ["batch", "sub-request", "single"])
def test_kintos_integrity_conflict_is_retried(store: tureen.Store, kinto: KintoServer, how: str) -> None:
    """The refused write is sent again as it was (Retry-After honoured for a
    whole request), not taken for a conflict or a failure; the sync is DONE."""
    collection = new_kinto_collection(kinto)
    ids = ["c1"] if how == "single" else ["c1", "c2", "c3"]
    store.local_upsert(SOUP, [{"id": i, "v": 1} for i in ids])
    with KintoProxy(kinto.url) as proxy:
        refused = refuse_once(proxy, how)
        state, error = attempt(lambda: run_bounded(store, lambda: store.sync_up(kinto_target(collection, proxy),
                                                                                SOUP), timeout=30))
        seen = proxy.requests()
    assert refused, "no write was refused: the test did not test anything"
    first = next(i for i, r in enumerate(seen) if r.method in ("POST", "PUT"))
    again = seen[first + 1] if first + 1 < len(seen) else None
    resent = refused[0] if how == "sub-request" else seen[first].line
    assert again is not None and again.line.startswith(resent.rsplit(" HTTP/", 1)[0]), \
        "after the 409 on %s the library sent %s" % (refused[0], again.line if again else "nothing")
    if how != "sub-request":
        assert again.at - seen[first].at >= 0.9  # Retry-After: 1
    assert error is None, "%s after Kinto's 409 errno 122 on %s" % (error, refused)
    assert state["status"] == "DONE" and state["synced"] == len(ids)
    assert set(kinto_records(kinto, collection)) == set(ids)
    assert all(is_clean(e) for e in entries(store, SOUP))


# ---------------------------------------------------------------------------
# 17. A Kinto page cut short; records that would write another entry or none

def _seed(kinto: KintoServer, collection: Dict[str, Any], n: int) -> List[int]:
    """``n`` records, each with a stamp of its own; their stamps, sorted."""
    path = records_path(collection)[len("/v1"):]
    for i in range(n):
        r = kinto.request("POST", path, body={"data": {"id": "r%02d" % i, "n": i}}, auth=KINTO_AUTH)
        assert r.status == 201, r.body[:300]
    return sorted(rec["last_modified"] for rec in kinto_records(kinto, collection).values())


def test_a_kinto_page_cut_short_fails_the_run_after_the_pages_before_it(store: tureen.Store,
                                                                        kinto: KintoServer) -> None:
    """The page after a good one is cut off mid-record: the run fails with
    the parser's error, the good page stays committed, and the next run
    brings the rest."""
    collection = new_kinto_collection(kinto)
    _seed(kinto, collection, 12)
    records = records_path(collection)
    pages = [0]
    with KintoProxy(kinto.url) as proxy:
        def rewrite(r: Seen, status: int, body: bytes) -> Tuple[int, bytes]:
            if r.method == "GET" and r.path == records and status == 200:
                pages[0] += 1
                if pages[0] == 2:
                    return status, body[:len(body) * 2 // 3]
            return status, body

        proxy.rewrite = rewrite
        state, error = attempt(lambda: store.sync_down(kinto_target(collection, proxy, page_size=5), SOUP,
                                                       name="cut"))
        assert error is not None and "malformed JSON" in str(error), error
        assert state is not None and state["status"] == "FAILED" and state["done"] == 5, state
        assert sorted(e["n"] for e in entries(store, SOUP)) == list(range(5))
        proxy.rewrite = lambda r, s, b: (s, b)
        state = store.resync("cut")
    assert state["status"] == "DONE"
    assert sorted(e["n"] for e in entries(store, SOUP)) == list(range(12))


def test_a_record_naming_an_entry_id_gets_an_entry_of_its_own(store: tureen.Store, kinto: KintoServer) -> None:
    """A record carrying "_soupEntryId" (the server's data, not this
    store's) becomes an entry of its own; the entry it names is untouched."""
    collection = new_kinto_collection(kinto)
    stamps = _seed(kinto, collection, 3)
    with KintoProxy(kinto.url) as proxy:
        proxy.plant(records_path(collection),
                    [{"id": "intruder", "n": 99, "_soupEntryId": 1, "last_modified": stamps[-1] + 1}], times=1)
        state = store.sync_down(kinto_target(collection, proxy), SOUP)
    assert state["status"] == "DONE", state
    local = by_id(store)
    assert set(local) == {"r00", "r01", "r02", "intruder"}, sorted(local)
    assert [local["r%02d" % i]["n"] for i in range(3)] == [0, 1, 2]
    assert local["intruder"]["n"] == 99
    assert len({e["_soupEntryId"] for e in local.values()}) == 4


def test_ids_the_id_index_cannot_hold_fail_the_page_and_add_nothing(tmp_path: Path, kinto: KintoServer) -> None:
    """Kinto's ids are strings; a soup indexing "id" as an integer holds no
    value for "r00". The page fails as a whole, each run the same way, and
    no entry without an id is written (one would be written again by every
    later run)."""
    collection = new_kinto_collection(kinto)
    _seed(kinto, collection, 3)
    with tureen.Store.open(tmp_path / "ints.db", raw_key=KEY) as s:
        s.register_soup("ints", [("id", "integer")])
        target = dict(collection, type="kinto")
        for _ in range(2):
            state, error = attempt(lambda: s.sync_down(target, "ints"))
            assert error is not None and "no integer value at external id path 'id'" in str(error), error
            assert s.count(tureen.query.all("ints")) == 0



# ---------------------------------------------------------------------------
# A page that leads back to itself, a conflict copy of another record, and
# credentials a server repeats (found by an adversarial test pass)


@pytest.mark.parametrize("paging", ["header", "cursor"])
def test_a_next_page_that_repeats_a_page_fails_the_run(store: tureen.Store, paging: str) -> None:
    """Every page names the same next page: before, the run asked for it
    until cancelled, counting its record again each time."""
    with HostileServer(lambda r: looping_page(server, paging)) as server:
        target = plain_target(server, nextPage=LOOPING_NEXT_PAGE[paging])
        state, error = attempt(lambda: run_bounded(store, lambda: store.sync_down(target, SOUP), timeout=BOUND))
        assert len(server.requests()) == 2, [r.line for r in server.requests()]
    assert isinstance(error, tureen.HTTPError) and "already read" in str(error), error
    assert state["status"] == "FAILED"
    # The first pages were committed as they came; the record is there once.
    assert list(by_id(store)) == ["a"]


def test_a_page_listing_a_record_twice_keeps_its_latest_copy(store: tureen.Store) -> None:
    """Before, the last copy in the page was stored whatever its stamp: an
    older copy after a newer one undid it, and the run's position had moved
    past both, so no later run brought the newer back."""
    page = {"items": [
        {"id": "a", "last_modified": 20, "v": "new"}, {"id": "a", "last_modified": 10, "v": "old"},
        {"id": "b", "last_modified": 30, "deleted": True}, {"id": "b", "last_modified": 5, "v": "stale"},
        {"id": "c", "last_modified": 7, "v": "first"}, {"id": "c", "last_modified": 7, "v": "second"},
        {"id": "d", "last_modified": 1, "v": "old"}, {"id": "d", "last_modified": 2, "v": "new"},
        {"id": "e", "last_modified": 3, "v": "once"},
    ]}
    with HostileServer(lambda r: json_reply(page)) as server:
        target = plain_target(server, tombstone={"field": "deleted", "value": True})
        state = run_bounded(store, lambda: store.sync_down(target, SOUP), timeout=BOUND)
    assert state["status"] == "DONE" and state["maxTimeStamp"] == 30, state
    local = by_id(store)
    assert sorted(local) == ["a", "c", "d", "e"]
    assert [local[i]["v"] for i in ("a", "c", "d", "e")] == ["new", "second", "new", "once"]
    assert all(not local[i]["__local__"] for i in local)


def test_a_record_is_stored_as_sent_only_where_its_text_is_its_members(store: tureen.Store) -> None:
    """Sync down keeps a record's text as the server sent it, flags added,
    instead of writing it out again; but not where the text holds more than
    the record's members: an object in it that repeats a name (the tree
    keeps the last), a name starting with "_" (flags and error fields are
    replaced or dropped), or a list of records the page names twice (the
    last one counts)."""
    body = (b'{"items": [{"id": "x", "last_modified": 1, "v": "first list"}],\n'
            b' "items" : [ {"id":"a" , "last_modified":2,"n":1.50e1,"s":"\\u00e9\\n\\"q\\"",\n'
            b'   "nested":{"k":[1, {"z":null}]}} ,\n'
            b'  {"id": "b", "last_modified": 3, "o": {"k": 1, "k": 2}},\n'
            b'  {"\\u0069d": "c", "last_modified": 4, "_own": true, "__local__": true},\n'
            b'  {"id": "d", "last_modified": 5, "v": [] } ]}')
    sent = json.loads(body)["items"]  # as Python reads it: the last "items", the last "k"
    with HostileServer(lambda r: Reply(200, body, {"Content-Type": "application/json"})) as server:
        state = run_bounded(store, lambda: store.sync_down(plain_target(server), SOUP), timeout=BOUND)
    assert state["status"] == "DONE" and state["synced"] == 4, state
    local = by_id(store)
    assert sorted(local) == ["a", "b", "c", "d"]
    for record in sent:
        entry = local[record["id"]]
        assert is_clean(entry), entry
        assert {k: v for k, v in entry.items() if not k.startswith(("_soup", "__"))} == \
            {k: v for k, v in record.items() if not k.startswith("__")}

    def times(rid: str, text: str) -> int:
        """How often ``text`` occurs in entry ``rid`` as stored and read back,
        counted in its bytes (Python's parser would hide a repeated name)."""
        sql = "select hex({items:_soup}) from {items} where {items:id} = '%s'" % rid
        return bytes.fromhex(store.query(tureen.query.smart(sql))[0][0]).count(text.encode())

    assert times("a", "1.50e1") == 1  # as sent
    assert times("b", '"k"') == 1 and times("c", '"__local__"') == 1 and times("c", '"_own"') == 1
    assert all(times(rid, '"_soupEntryId"') == 1 for rid in local)


@pytest.mark.parametrize("blobs", ["eager", "lazy"])
def test_a_record_whose_text_byte_readers_would_misread_is_written_out_again(store: tureen.Store, blobs: str) -> None:
    """Two spellings a record kept as sent would carry into the store, where
    its text is read by its bytes:
    - a blob digest written with a \\u escape ("sha256\\u002d..."). Blob
      collection finds the blobs entries name in their stored text, found no
      "sha256-" there, and took the blob the entry names;
    - an integer beyond 64 bits: read back exact from the text, but rounded
      in the index, in Smart SQL and in what sync up sends.
    Both records are stored written out from their tree instead."""
    data = b"a photo named with escapes"
    hexd = hashlib.sha256(data).hexdigest()
    body = ('{"items":[{"id":"a","last_modified":1,"photo":{"@type":"blob","digest":"sha256\\u002d%s",'
            '"length":%d,"content_type":"text/plain"}},'
            '{"id":"b","last_modified":2,"big":123456789012345678901234567890}]}' % (hexd, len(data))).encode()

    def respond(r: Seen) -> Optional[Reply]:
        if r.method == "GET" and r.path == "/api/items":
            return Reply(200, body, {"Content-Type": "application/json"})
        if r.method == "GET" and r.path == "/api/blobs/" + hexd:
            return Reply(200, data, {"Content-Type": "text/plain"})
        return None

    with HostileServer(respond) as server:
        target = plain_target(server, blobs={"url": server.url + "/api/blobs/{hex}"})
        state = run_bounded(store, lambda: store.sync_down(target, SOUP, blobs=blobs), timeout=BOUND)
        assert state["status"] == "DONE" and state["synced"] == 2, state
        assert store.collect_blobs(min_age_ms=0) == 0
        local = by_id(store)
        assert store.blob_get(local["a"]["photo"]) == data
    rows = store.query(tureen.query.smart("select {items:big}, hex({items:_soup}) from {items} where {items:id} = 'b'"))
    assert local["b"]["big"] == rows[0][0] == float(123456789012345678901234567890)
    assert b"123456789012345678901234567890" not in bytes.fromhex(rows[0][1])


NFC, NFD = "caf\u00e9", "cafe\u0301"  # one name to a reader, two ids to a server


def test_ids_that_differ_only_in_normalisation_are_two_records(store: tureen.Store) -> None:
    """Swift's String equality is canonical equivalence, so "café" spelled
    with a precomposed "é" and with "e" and U+0301 were one id to sync down:
    in one page, the first was dropped as the second's repeat; and ghost
    cleaning kept an entry whose id the server no longer lists because an
    equivalent one was listed. The soup, like the server, tells them apart
    by their bytes, and now so does sync down."""
    pages = [[{"id": NFC, "last_modified": 1, "v": "nfc"}, {"id": NFD, "last_modified": 2, "v": "nfd"}]]

    def respond(r: Seen) -> Reply:
        return json_reply({"items": pages[0]})

    with HostileServer(respond) as server:
        state = run_bounded(store, lambda: store.sync_down(plain_target(server), SOUP, name="norm"), timeout=BOUND)
        assert state["status"] == "DONE" and state["synced"] == 2, state
        local = by_id(store)
        assert sorted(local) == sorted([NFC, NFD]) and local[NFC]["v"] == "nfc" and local[NFD]["v"] == "nfd"
        pages[0] = [{"id": NFD, "last_modified": 2, "v": "nfd"}]
        assert store.clean_ghosts("norm") == 1
        assert list(by_id(store)) == [NFD]


def test_a_value_changed_only_in_its_bytes_is_stored_again(store: tureen.Store) -> None:
    """A record read again with the same stamp is written again only when
    it changed. Sync down compared values as Swift does, so a string
    respelled in NFD, or 0.0 turned to -0.0, was "unchanged": the entry
    kept the old bytes, unlike the server's copy. Values are now equal
    only when they would be written out alike."""
    page = [{"id": "a", "last_modified": 1, "v": NFC, "z": 0.0}]

    def respond(r: Seen) -> Reply:
        return json_reply({"items": page})

    with HostileServer(respond) as server:
        assert store.sync_down(plain_target(server), SOUP, name="bytes")["status"] == "DONE"
        assert by_id(store)["a"]["v"] == NFC
        page[0] = {"id": "a", "last_modified": 1, "v": NFD, "z": -0.0}
        assert store.resync("bytes")["status"] == "DONE"
        a = by_id(store)["a"]
        assert a["v"] == NFD and math.copysign(1.0, a["z"]) == -1.0, a


def one_text_in_many_spellings(count: int) -> List[str]:
    """``count`` names, each "é" 12 times, every "é" precomposed or "e" and
    U+0301: one text to Swift's String ==, ``count`` names in bytes."""
    return ["".join("\u00e9" if bit == "0" else "e\u0301" for bit in format(i, "012b")) for i in range(count)]


@pytest.mark.parametrize("path", ["sync down", "upsert"])
def test_names_spelled_many_ways_are_read_in_linear_time(store: tureen.Store, path: str) -> None:
    """Names are told apart by their bytes but were hashed as Strings, whose
    hash is canonical: a record of 4,096 spellings of one text put them all
    in one bucket, and each was compared with the others, normalising both
    each time (minutes for a record of 170 KB). The bound guards a hang."""
    names = one_text_in_many_spellings(4096)
    record: Dict[str, Any] = {"id": "a", "last_modified": 1, **{n: i for i, n in enumerate(names)}}

    def respond(r: Seen) -> Reply:
        return json_reply({"items": [record]})

    with HostileServer(respond) as server:
        if path == "sync down":
            state = run_bounded(store, lambda: store.sync_down(plain_target(server), SOUP), timeout=BOUND)
            assert state["status"] == "DONE", state
        else:
            # The escaped name sends the entry through the full parse.
            run_bounded(store, lambda: store.upsert(SOUP, dict(record, **{"line\nbreak": 0})), timeout=BOUND)
    stored = by_id(store)["a"]
    assert [stored[n] for n in names] == list(range(4096))


def conflict_server(listed: List[Dict[str, Any]], current: Dict[str, Any], copy: str) -> HostileServer:
    """Lists ``listed``; a PUT of record "a" gets a 412 whose current copy,
    ``current``, comes "in the 412" or must be "fetched" with a GET."""
    def respond(r: Seen) -> Reply:
        if r.method == "GET" and r.path == "/api/items":
            return json_reply({"items": listed})
        if r.method == "GET" and r.path == "/api/items/a":
            return json_reply(current)
        if r.method == "PUT" and r.path == "/api/items/a":
            return json_reply({"current": current} if copy == "in the 412" else {"message": "changed"}, status=412)
        return json_reply({}, status=404)

    return HostileServer(respond)


def update_a_into_a_conflict(store: tureen.Store, server: HostileServer,
                             copy: str) -> Tuple[Dict[str, Any], Optional[Dict[str, Any]], Optional[tureen.Error]]:
    """Syncs down, changes entry "a" locally and syncs it up against
    ``conflict_server``: the target, and sync up's state and error."""
    target = plain_target(server, concurrency={"versionField": "rev"},
                          **({"conflictRecordPath": "current"} if copy == "in the 412" else {}))
    assert store.sync_down(target, SOUP)["status"] == "DONE"
    store.local_upsert(SOUP, dict(by_id(store)["a"], v="a-local"))
    state, error = attempt(lambda: store.sync_up(target, SOUP, merge_mode="MERGE_FAIL_IF_CHANGED"))
    return target, state, error


@pytest.mark.parametrize("copy", ["in the 412", "fetched"])
def test_a_conflict_copy_naming_another_record_fails_the_change_alone(store: tureen.Store, copy: str) -> None:
    """The server's current copy of record "a" is record "b". Kept as a's
    conflict, resolving it would have turned entry a into a second "b"
    (record a gone from the device, every later sync down failing on two
    entries with one id). The change fails alone and stays local."""
    listed = [{"id": "a", "last_modified": 1, "rev": 1, "v": "a0"},
              {"id": "b", "last_modified": 2, "rev": 1, "v": "b0"}]
    hijack = {"id": "b", "last_modified": 50, "rev": 9, "v": "hijack"}
    with conflict_server(listed, hijack, copy) as server:
        target, state, error = update_a_into_a_conflict(store, server, copy)
        assert state is not None and state["status"] == "FAILED", (state, error)
        assert store.conflicts(SOUP) == []
        a, b = by_id(store)["a"], by_id(store)["b"]
        assert a["v"] == "a-local" and a["__local__"] and "names record 'b'" in a["__last_error__"]
        assert b["v"] == "b0" and not b["__local__"]
        # Nothing local is confused: a later sync down still runs.
        assert store.sync_down(target, SOUP)["status"] == "DONE"
        assert sorted(by_id(store)) == ["a", "b"]


@pytest.mark.parametrize("copy", ["in the 412", "fetched"])
def test_a_conflict_copy_naming_no_record_is_taken_as_the_records(store: tureen.Store, copy: str) -> None:
    """The server's current copy of record "a" has no id. Kept as it was,
    resolving the conflict with it (theirs) left entry a with no id at all,
    cut off from its record. It is the record at a's URL, so it takes a's id."""
    anonymous = {"last_modified": 50, "rev": 9, "v": "theirs"}
    with conflict_server([{"id": "a", "last_modified": 1, "rev": 1, "v": "a0"}], anonymous, copy) as server:
        target, state, error = update_a_into_a_conflict(store, server, copy)
        assert state is not None and state["status"] != "DONE", (state, error)
        [conflict] = store.conflicts(SOUP)
        assert conflict["theirs"]["id"] == "a" and conflict["theirs"]["v"] == "theirs"
        store.resolve_conflict(SOUP, conflict["entryId"], "theirs")
        assert by_id(store)["a"]["v"] == "theirs"
        assert store.sync_down(target, SOUP)["status"] == "DONE"
        assert sorted(by_id(store)) == ["a"] and store.count(tureen.query.all(SOUP)) == 1


# A record of 300,000 fields: before, reading it (checking its names for
# repeats, then comparing it with the entry on the next sync) took a scan
# per field, and the run took well over a minute. A few seconds now.
MANY_FIELDS = 300_000
MANY_BOUND = 60.0


def many_fields(**fields: Any) -> Dict[str, Any]:
    record = {"f%d" % i: i for i in range(MANY_FIELDS)}
    record.update(fields)
    return record


def test_a_record_with_very_many_fields_is_read_in_bounded_time(store: tureen.Store) -> None:
    """Synced down twice: the first run stores it, the second finds the
    entry already holds it."""
    body = json.dumps({"items": [many_fields(id="a", last_modified=1)]}).encode()

    with HostileServer(lambda r: Reply(200, body, {"Content-Type": "application/json"})) as server:
        target = plain_target(server)
        for _ in range(2):
            state = run_bounded(store, lambda: store.sync_down(target, SOUP), timeout=MANY_BOUND)
            assert state["status"] == "DONE", state
    entry = by_id(store)["a"]
    assert len(entry) >= MANY_FIELDS and entry["f299999"] == 299999 and not entry["__local__"]


def test_a_conflict_copy_with_very_many_fields_is_compared_in_bounded_time(store: tureen.Store) -> None:
    """The 412's current copy of record "a" has 300,000 fields: comparing
    it with the entry field by field took a scan per field."""
    huge = many_fields(id="a", last_modified=50, rev=9, v="theirs")
    with conflict_server([{"id": "a", "last_modified": 1, "rev": 1, "v": "a0"}], huge, "in the 412") as server:
        target, state, error = run_bounded(store, lambda: update_a_into_a_conflict(store, server, "in the 412"),
                                           timeout=MANY_BOUND)
        assert state is not None and state["status"] != "DONE", (state, error)
        [conflict] = store.conflicts(SOUP)
        assert conflict["theirs"]["f299999"] == 299999 and conflict["theirs"]["v"] == "theirs"
        assert conflict["localChanges"] == ["v"] and conflict["conflictingChanges"] == ["v"]
        assert len(conflict["remoteChanges"]) == MANY_FIELDS + 2  # the fields, rev and v


@pytest.mark.parametrize("auth", ["bearer", "basic"])
def test_credentials_a_server_repeats_are_redacted(store: tureen.Store, auth: str,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    """Error pages and proxies repeat the request's Authorization and API
    key. Before, they reached the exception, the state, syncs_soup, the
    log (a warning) and an entry's __last_error__ as sent."""
    token, api_key, password = "tok-" + "q" * 24, "key-" + "w" * 24, "pw-" + "e" * 24
    sent: List[str] = []

    def respond(r: Seen) -> Reply:
        echo = "Authorization=%s X-Api-Key=%s" % (r.header("Authorization"), r.header("X-Api-Key"))
        sent.append(r.header("Authorization") or "")
        if r.method == "GET" and r.path == "/api/items":
            return json_reply({"message": "denied for " + echo}, status=401,
                              headers={"WWW-Authenticate": "Bearer realm=%s" % r.header("Authorization")})
        return Reply(400, "<html>bad request: %s</html>" % echo, {"Content-Type": "text/html"})

    credentials = {"bearer": token} if auth == "bearer" else {"user": "alice", "password": password}
    with HostileServer(respond) as server, caplog.at_level(logging.DEBUG, logger="tureen"):
        target = plain_target(server, auth=credentials, headers={"X-Api-Key": api_key})
        down, down_error = attempt(lambda: store.sync_down(target, SOUP, name="down"))
        store.local_upsert(SOUP, {"id": "n1"})
        up, up_error = attempt(lambda: store.sync_up(target, SOUP, name="up"))
    assert isinstance(down_error, tureen.Error) and down is not None and up is not None
    assert sent[0].startswith("Bearer " if auth == "bearer" else "Basic ")  # the server did see them
    texts = [str(down_error), str(up_error), json.dumps(down), json.dumps(up),
             json.dumps(store.sync_status("down")), json.dumps(list(store.iter_query(tureen.query.all("syncs_soup")))),
             json.dumps(by_id(store)["n1"]), "\n".join(r.getMessage() for r in caplog.records)]
    text = "\n".join(texts)
    assert "<redacted>" in str(down_error) and "<redacted>" in by_id(store)["n1"]["__last_error__"]
    for secret in (token, api_key, password, sent[0], sent[0].split(" ", 1)[1]):
        assert secret not in text


# ---------------------------------------------------------------------------
# Closing the store while another thread's call waits on a server


@pytest.mark.parametrize("call", ["cache_fetch", "sync_down"])
def test_close_stops_a_call_waiting_on_a_server_and_waits_for_it(tmp_path: Path, call: str) -> None:
    """tureen.h: close returns only after every call in progress has
    returned. A call waiting on a server was not waited for: close returned
    at once, the call failed seconds later with MISUSE (the store closed
    under it), and a sync stayed RUNNING. Raw C calls: the Python Store
    waits for its own calls before it closes."""
    path = tmp_path / "close.db"
    with tureen.Store.open(path, raw_key=KEY) as s:
        s.register_soup(SOUP, [("id", "string")])
    lib = _library.lib
    handle = _library.StoreHandle()
    assert lib.tureen_store_open(str(path).encode(), json.dumps({"raw_key": KEY}).encode(), ctypes.byref(handle)) == 0

    def respond(r: Seen) -> Reply:
        time.sleep(20)  # far longer than close may take
        return json_reply({"items": []})

    with HostileServer(respond) as server:
        target = plain_target(server, timeout_ms=60_000)
        done: Dict[str, Any] = {}

        def run() -> None:
            out = ctypes.c_void_p()
            if call == "cache_fetch":
                rc = lib.tureen_cache_fetch(handle, json.dumps({"target": target}).encode(), None, ctypes.byref(out))
            else:
                rc = lib.tureen_sync_down(handle, json.dumps(target).encode(), SOUP.encode(), b'{"name": "slow"}',
                                          _library.ProgressFn(), None, ctypes.byref(out))
            done.update(rc=rc, message=_library.errmsg(), at=time.monotonic())
            if out.value:
                lib.tureen_free(out.value)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        assert wait_until(lambda: server.request_count() > 0, 10)
        started = time.monotonic()
        assert lib.tureen_store_close(handle) == 0
        closed = time.monotonic()
        assert "at" in done, "close returned while the other thread's call still ran"
        assert closed - started < 5
        assert done["rc"] == tureen.Status.CANCELLED, done
        thread.join(5)
    if call == "sync_down":
        with tureen.Store.open(path, raw_key=KEY) as s:
            assert s.sync_status("slow")["status"] == "STOPPED"


@pytest.mark.parametrize("named", [True, False])
def test_a_python_close_stops_a_sync_waiting_on_a_server(tmp_path: Path, named: bool) -> None:
    """Store.close waits for its own calls before the library's close, so
    a sync waiting on a slow server kept it waiting as long as the server
    did. close cancels such syncs first (by name, or by the id the first
    report gave): they end STOPPED and close returns at once."""
    release = threading.Event()

    def respond(r: Seen) -> Reply:
        if "cursor" in r.target:
            release.wait(30)  # the second page is slow
            return json_reply({"items": []})
        return json_reply({"items": [{"id": "a", "last_modified": 1}], "next": "c2"})

    path = tmp_path / "pyclose.db"
    s = tureen.Store.open(path, raw_key=KEY)
    s.register_soup(SOUP, [("id", "string")])
    try:
        with HostileServer(respond) as server:
            target = plain_target(server, timeout_ms=60_000, nextPage={"cursorPath": "next", "cursorParam": "cursor"})
            ended: Dict[str, Any] = {}

            def sync() -> None:
                try:
                    s.sync_down(target, SOUP, name="slow" if named else None)
                except tureen.Error as e:
                    ended["error"] = e

            worker = threading.Thread(target=sync, daemon=True)
            worker.start()
            assert wait_until(lambda: server.request_count() == 2, 10)
            started = time.monotonic()
            s.close()
            took = time.monotonic() - started
            worker.join(5)
    finally:
        release.set()
        close_unless_stuck(s)
    assert took < 5, took
    assert isinstance(ended.get("error"), tureen.CancelledError), ended
    with tureen.Store.open(path, raw_key=KEY) as again:
        (state,) = again.syncs()
        assert state["status"] == "STOPPED"


# ---------------------------------------------------------------------------
# timeout_ms bounds a request that stalls or trickles half way


def half_then(kind: str, body: bytes, content_type: str = "application/json") -> Callable[[Any], None]:
    """A raw response with the whole Content-Length that sends half the
    body at once, then nothing ("stall") or one byte a second ("trickle"),
    until the client goes away or the server stops."""

    def write(h: Any) -> None:
        stopping: threading.Event = h.server.stopping
        h.send_response(200)
        h.send_header("Content-Type", content_type)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body[:len(body) // 2])
        h.wfile.flush()
        for i in range(len(body) // 2, len(body)):
            if stopping.wait(1.0 if kind == "trickle" else 60.0):
                return
            h.wfile.write(body[i:i + 1])
            h.wfile.flush()

    return write


# tureen.h: an attempt ends within timeout_ms, a blob's "at most about a
# second later"; 1.5 s more leaves room for a loaded machine. The library
# before let a blob that stalled after a burst go about 6 s past timeout_ms
# (libcurl's low-speed check averages over 5 s).
STALL_SLACK = 2.5


@pytest.mark.parametrize("timeout_ms", [1000, 3000])
@pytest.mark.parametrize("kind", ["stall", "trickle"])
def test_a_blob_download_that_stalls_half_way_ends_within_timeout_ms(tmp_path: Path, kind: str,
                                                                     timeout_ms: int) -> None:
    from sync_support import photo
    blob = photo(64 * 1024, "half-way")
    with tureen.Store.open(tmp_path / "src.db", raw_key=KEY) as src:
        ref = src.blob_put(blob, "image/jpeg")
    page = {"items": [{"id": "a", "last_modified": 1, "photo": ref}]}

    def respond(r: Seen) -> Any:
        if r.path.startswith("/api/blobs/"):
            return half_then(kind, blob, "image/jpeg")
        return json_reply(page)

    with HostileServer(respond) as server, tureen.Store.open(tmp_path / "stall.db", raw_key=KEY) as s:
        s.register_soup(SOUP, [("id", "string")])
        target = plain_target(server, timeout_ms=timeout_ms, blobs={"url": server.url + "/api/blobs/{hex}"})
        started = time.monotonic()
        with pytest.raises(tureen.NetworkError, match="stalled|Timeout"):
            run_bounded(s, lambda: s.sync_down(target, SOUP), timeout=60)
        took = time.monotonic() - started
        assert server.request_count("GET") == 2  # the page, then the blob once (max_retries 0)
        assert s.blob_info(ref) is None
    assert timeout_ms / 1000 - 0.2 <= took <= timeout_ms / 1000 + STALL_SLACK, took


@pytest.mark.parametrize("call", ["sync_down", "cached_fetch"])
@pytest.mark.parametrize("kind", ["stall", "trickle"])
def test_a_response_that_stalls_half_way_ends_within_timeout_ms(tmp_path: Path, call: str, kind: str) -> None:
    """A request that is not a blob transfer has timeout_ms as its total
    limit: a stalled or trickling body ends it then (a guard, not a fix)."""
    body = json.dumps({"items": [{"id": "a", "last_modified": 1, "pad": "x" * 4000}]}).encode()
    with HostileServer(lambda r: half_then(kind, body)) as server, \
            tureen.Store.open(tmp_path / "stall.db", raw_key=KEY) as s:
        s.register_soup(SOUP, [("id", "string")])
        target = plain_target(server, timeout_ms=1000)
        started = time.monotonic()
        with pytest.raises(tureen.NetworkError):
            if call == "sync_down":
                run_bounded(s, lambda: s.sync_down(target, SOUP), timeout=60)
            else:
                run_bounded(s, lambda: s.cached_fetch(target, query={"q": "1"}, policy="IgnoreCacheData"),
                            timeout=60)
        took = time.monotonic() - started
    assert 0.8 <= took <= 1 + STALL_SLACK, took



def blob_from(tls: SlowTLSServer, records: HostileServer, tmp_path: Path, timeout_ms: int,
              seed: str) -> Tuple[tureen.Store, Dict[str, Any], Dict[str, Any]]:
    """A store and a target whose records (one, referring to ``tls.body``)
    come from ``records`` and whose blobs from ``tls``."""
    with tureen.Store.open(tmp_path / "src.db", raw_key=KEY) as src:
        ref = src.blob_put(tls.body, "image/jpeg")
    records.respond = lambda r: json_reply({"items": [{"id": "a", "last_modified": 1, "photo": ref}]})
    s = tureen.Store.open(tmp_path / (seed + ".db"), raw_key=KEY)
    s.register_soup(SOUP, [("id", "string")])
    target = plain_target(records, timeout_ms=timeout_ms, verify_tls=False,
                          blobs={"url": tls.url + "/api/blobs/{hex}"})
    return s, target, ref


def test_a_slow_connection_set_up_is_not_taken_for_a_stalled_blob(tmp_path: Path) -> None:
    """tureen.h: a blob's time without progress counts from when its
    connection is set up; setting it up (TLS here) has its own limit. A
    handshake that takes 70% of timeout_ms, then a first byte 70% of it
    later, is no stall: the blob comes (the library before counted both
    together, 140% of timeout_ms without a byte, and failed it as stalled).
    Each wait is 1.2 s short of its limit, and the sum 1.6 s past the old
    one, more than the second the progress callback may come late."""
    from sync_support import photo
    blob = photo(64 * 1024, "slow set-up")
    with SlowTLSServer(blob, handshake_delay=2.8, reply_delay=2.8) as tls, HostileServer() as records:
        s, target, ref = blob_from(tls, records, tmp_path, 4000, "slow")
        try:
            down = run_bounded(s, lambda: s.sync_down(target, SOUP), timeout=60)
            assert down["status"] == "DONE" and down["blobs"] == 1, down
            assert s.blob_get(ref) == blob and tls.gets == 1  # one attempt (max_retries 0)
        finally:
            close_unless_stuck(s)


@pytest.mark.parametrize("silent", ["before its handshake", "after its handshake"])
def test_a_blob_server_silent_after_accepting_ends_within_timeout_ms(tmp_path: Path, silent: str) -> None:
    """A server that takes the connection and then sends nothing ends the
    blob's attempt within timeout_ms (and the callback's second): the
    connection limit before the handshake, the stall limit after it (a
    guard: both ended so before too)."""
    from sync_support import photo
    blob = photo(16 * 1024, "silent")
    handshake, reply = (60.0, 0.0) if silent == "before its handshake" else (0.0, 60.0)
    with SlowTLSServer(blob, handshake_delay=handshake, reply_delay=reply) as tls, HostileServer() as records:
        s, target, ref = blob_from(tls, records, tmp_path, 1000, "silent")
        try:
            started = time.monotonic()
            with pytest.raises(tureen.NetworkError, match="stalled" if reply else "[Tt]ime"):
                run_bounded(s, lambda: s.sync_down(target, SOUP), timeout=60)
            took = time.monotonic() - started
            assert s.blob_info(ref) is None
        finally:
            close_unless_stuck(s)
    assert took <= 1 + STALL_SLACK, took


# ---------------------------------------------------------------------------
# A Python close while a cached fetch or a blob download waits on a server


@pytest.mark.parametrize("call", ["cached_fetch", "blob_get", "blob_fetch"])
def test_a_python_close_stops_a_cached_fetch_or_blob_download_waiting_on_a_server(tmp_path: Path,
                                                                                  call: str) -> None:
    """Store.close cancelled its syncs but waited for its cached fetches and
    blob calls, as long as the server held them. The library's close
    cancels those: close now leaves them to it, and the call raises
    CancelledError within seconds."""
    from sync_support import photo
    release = threading.Event()
    blob = photo(16 * 1024, "lazy")
    with tureen.Store.open(tmp_path / "src.db", raw_key=KEY) as src:
        ref = src.blob_put(blob, "image/jpeg")

    def respond(r: Seen) -> Any:
        if r.path.startswith("/api/blobs/") or "q=" in r.target:
            release.wait(20)  # far longer than close may take
            return Reply(200, blob, {"Content-Type": "image/jpeg"})
        return json_reply({"items": [{"id": "a", "last_modified": 1, "photo": ref}]})

    s = tureen.Store.open(tmp_path / "pyclose.db", raw_key=KEY)
    s.register_soup(SOUP, [("id", "string")])
    try:
        with HostileServer(respond) as server:
            target = plain_target(server, timeout_ms=60_000, blobs={"url": server.url + "/api/blobs/{hex}"})
            if call != "cached_fetch":
                assert s.sync_down(target, SOUP, blobs="lazy")["status"] == "DONE"
                assert s.blob_info(ref) is None
            server.clear_log()
            ended: Dict[str, Any] = {}

            def work() -> None:
                try:
                    if call == "cached_fetch":
                        ended["value"] = s.cached_fetch(target, query={"q": "1"}, policy="IgnoreCacheData")
                    elif call == "blob_get":
                        ended["value"] = s.blob_get(ref)
                    else:
                        ended["value"] = s.blob_fetch(ref)
                except tureen.Error as e:
                    ended["error"] = e

            worker = threading.Thread(target=work, daemon=True)
            worker.start()
            assert wait_until(lambda: server.request_count("GET") == 1, 10)
            time.sleep(0.2)  # the request is on the wire
            started = time.monotonic()
            s.close()
            took = time.monotonic() - started
            worker.join(5)
            assert not worker.is_alive()
    finally:
        release.set()
        close_unless_stuck(s)
    assert took < 5, took
    assert s.closed
    assert isinstance(ended.get("error"), tureen.CancelledError), ended
    with pytest.raises(tureen.MisuseError):
        s.cached_fetch(target, query={"q": "1"})


@pytest.mark.parametrize("status", [500, 502, 504])
def test_a_record_the_server_always_answers_5xx_fails_alone(store: tureen.Store, status: int) -> None:
    """A 500, 502 or 504 may come after the write was applied, so sync up
    never sends it again as it was; but a record the server answers so every
    time must fail alone (its __last_error_status__, counted toward
    max_attempts), not end every run before the records behind it go."""
    with HostileServer(sane([])) as server:
        target = plain_target(server, max_retries=1)
        store.local_upsert(SOUP, [{"id": "bad", "v": 1}, {"id": "good", "v": 1}])
        server.respond = lambda r: Reply(status) if r.path.endswith("/bad") else sane([])(r)
        state, error = attempt(lambda: store.sync_up(target, SOUP, name="up"))
        assert state is not None and state["synced"] == 1 and state["failed"] == 1, (state, error)
        local = by_id(store)
        assert is_clean(local["good"])
        assert local["bad"]["__local__"] is True and local["bad"]["__last_error_status__"] == status, local["bad"]
        assert server.request_count("PUT") >= 3  # good once; bad first, then again under its precondition
