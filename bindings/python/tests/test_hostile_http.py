"""Servers that lie, stall, flood or plant odd data (issue 10): no answer may
crash the host, exhaust its memory, send a request outside the target's
collection, hold a call past the target's limits, or get a change marked
synced without a readable confirmation. Against the hostile servers of
hostile.py, RestServer and a real Kinto behind a logging proxy.
"""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from tureen import sync

from conftest import KINTO_AUTH, new_kinto_collection, run_python
from hostile import HostileServer, KintoProxy, Reply, Seen, endless_chunks, gzip_bomb, json_reply
from servers import KintoServer, RestServer
from sync_support import entries
from test_sync_rest import rest_target

KEY = "e5" * 32
SOUP = "items"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    with tureen.Store.open(tmp_path / "hostile.db", raw_key=KEY) as s:
        s.register_soup(SOUP, [("id", "string"), ("uid", "string")])
        yield s


def plain_target(server: HostileServer, **extra: Any) -> Dict[str, Any]:
    """A REST target for a HostileServer at /api/items (no batch, cursor-less)."""
    t = {"type": "rest", "url": server.url + "/api/items", "idField": "id", "recordsPath": "items",
         "max_retries": 0}
    t.update(extra)
    return t


def empty_list(r: Seen) -> Reply:
    return json_reply({"items": []})


# ---------------------------------------------------------------------------
# 1. ids that are dot segments never move a request out of the collection


@pytest.mark.parametrize("rid", [".", ".."])
def test_dot_ids_stay_in_the_collection_on_a_rest_target(store: tureen.Store, rest_server: RestServer,
                                                         rid: str) -> None:
    target = rest_target(rest_server)
    store.local_upsert(SOUP, {"uid": rid, "v": 1}, id_field="uid")            # create
    store.sync_up(target, SOUP, name="up")
    entry = entries(store, SOUP)[0]
    store.local_upsert(SOUP, dict(entry, v=2), id_field="uid")                # update
    store.resync("up")
    store.local_delete(SOUP, [entry["_soupEntryId"]])                         # delete
    store.resync("up")
    # Planted by the server, then changed here and sent back.
    rest_server.set_record({"uid": rid + rid, "v": 0})
    store.sync_down(target, SOUP)
    planted = [e for e in entries(store, SOUP) if e["uid"] == rid + rid][0]
    store.local_upsert(SOUP, dict(planted, v=5), id_field="uid")
    store.resync("up")
    raw = [r.target for r in rest_server.requests() if r.method != "GET"]
    assert len(raw) >= 4, raw
    for t in raw:
        assert t.startswith("/api/items/") and t[len("/api/items/"):].strip("%2E") == "", t
    assert rest_server.get_record(rid + rid)["v"] == 5 and rest_server.get_record(rid) is None


def test_dot_ids_stay_in_the_collection_on_kinto(store: tureen.Store, kinto: KintoServer) -> None:
    collection = new_kinto_collection(kinto)
    with KintoProxy(kinto.url) as proxy:
        target = dict(collection, type="kinto", url=proxy.url, max_retries=0)
        records = "/v1/buckets/%s/collections/%s/records" % (collection["bucket"], collection["collection"])

        def plant(r: Seen, status: int, body: bytes) -> Any:
            if r.method == "GET" and r.path == records and status == 200:
                data = json.loads(body)
                data["data"].append({"id": "..", "last_modified": 1})
                return status, json.dumps(data).encode()
            return status, body

        proxy.rewrite = plant
        store.sync_down(target, SOUP, name="down")
        assert {e["id"] for e in entries(store, SOUP)} == {".."}
        planted = entries(store, SOUP)[0]
        store.local_upsert(SOUP, dict(planted, v=1))
        store.local_upsert(SOUP, [{"id": ".", "v": 2}, {"id": "ok", "v": 3}])
        with pytest.raises(tureen.HTTPError) as info:
            store.sync_up(target, SOUP)
        assert info.value.state["failed"] == 2 and info.value.state["synced"] == 1  # type: ignore[attr-defined]
        for path in proxy.batch_paths():
            assert path.startswith("/v1/") and "/../" not in path + "/" and "/./" not in path + "/", path
            if path.startswith(records + "/"):
                assert path[len(records) + 1:] in ("ok", "%2E", "%2E%2E"), path


# ---------------------------------------------------------------------------
# 2. bounded responses: a child process under an address-space limit


CHILD = textwrap.dedent(
    """
    import resource, sys, tureen
    url, path, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    s = tureen.Store.open(path, raw_key="%s")
    s.register_soup("items", [("id", "string")])
    try:
        s.sync_down({"type": "rest", "url": url, "recordsPath": "items", "max_retries": 0}, "items")
        print("NO ERROR")
    except tureen.Error as e:
        print(type(e).__name__, str(e))
    """ % KEY
)

# Well above what the child needs (Python, the library and its threads),
# well below what the old library asked for: it grew the body to GiBs.
AS_LIMIT = 1536 << 20


@pytest.mark.parametrize("writer", [gzip_bomb, endless_chunks], ids=["gzip-bomb", "endless-chunked"])
def test_a_flood_fails_the_call_not_the_process(tmp_path: Path, writer: Any) -> None:
    with HostileServer(lambda r: writer()) as server:
        done = run_python(CHILD, [server.url + "/api/items", str(tmp_path / "c.db"), str(AS_LIMIT)], timeout=120)
    assert done.returncode == 0, (done.returncode, done.stdout[-500:], done.stderr[-2000:])
    assert done.stdout.startswith("HTTPError") and "max_response_bytes" in done.stdout, done.stdout


def test_max_response_bytes_is_the_targets_to_set(store: tureen.Store) -> None:
    big = json_reply({"items": [{"id": "r%d" % i, "last_modified": i, "pad": "x" * 100} for i in range(50)]})
    with HostileServer(lambda r: big) as server:
        with pytest.raises(tureen.HTTPError) as info:
            store.sync_down(plain_target(server, max_response_bytes=2048), SOUP)
        assert "max_response_bytes" in str(info.value) and len(server.requests()) == 1  # not retried
        assert store.sync_down(plain_target(server), SOUP)["synced"] == 50
        with pytest.raises(tureen.InvalidError):
            store.sync_down(plain_target(server, max_response_bytes=10), SOUP)


# ---------------------------------------------------------------------------
# 6. a server cannot hold the call: Retry-After beyond max_wait_ms


def test_a_long_retry_after_ends_the_call_with_the_time_in_the_state(store: tureen.Store,
                                                                      rest_server: RestServer) -> None:
    rest_server.set_record({"uid": "r1"})
    rest_server.throttle_next(1, retry_after=86400)
    started = time.monotonic()
    with pytest.raises(tureen.HTTPError) as info:
        store.sync_down(rest_target(rest_server), SOUP, name="slow")
    assert time.monotonic() - started < 5
    state = info.value.state  # type: ignore[attr-defined]
    assert "86400 s" in state["error"] and state["status"] == "FAILED"
    assert abs(state["retryAt"] - (time.time() * 1000 + 86400 * 1000)) < 60_000
    rest_server.throttle_next(1, retry_after=1)  # within max_wait_ms: honoured, then it goes on
    started = time.monotonic()
    assert store.resync("slow")["status"] == "DONE"
    assert time.monotonic() - started >= 0.9
    assert store.sync_status("slow")["retryAt"] is None


def test_a_long_backoff_ends_the_call(store: tureen.Store) -> None:
    answer = json_reply({"items": [{"id": "a", "last_modified": 1}]}, headers={"Backoff": "7200"})
    with HostileServer(lambda r: answer) as server:
        with pytest.raises(tureen.HTTPError) as info:
            store.sync_down(plain_target(server, max_wait_ms=1000), SOUP)
    assert "7200 s" in str(info.value) and "Backoff" in str(info.value)


# ---------------------------------------------------------------------------
# 7. a confirmation must be readable to count


def confirm_with(body: Any, status: int = 200) -> Any:
    def respond(r: Seen) -> Reply:
        if r.method == "GET":
            return json_reply({"items": []})
        return Reply(status, body, {"Content-Type": "application/json"})
    return respond


@pytest.mark.parametrize("body", [b"OK", b'{"id": "n1", "v"', json.dumps({"ok": True}).encode(),
                                  json.dumps({"id": "someone-else"}).encode()],
                         ids=["not-json", "truncated", "no-record", "other-record"])
def test_an_unreadable_confirmation_leaves_the_change_local(store: tureen.Store, body: bytes) -> None:
    store.local_upsert(SOUP, {"id": "n1", "v": 1})
    with HostileServer(confirm_with(body)) as server:
        with pytest.raises(tureen.HTTPError) as info:
            store.sync_up(plain_target(server), SOUP)
    assert info.value.state["status"] == "FAILED" and info.value.state["failed"] == 1  # type: ignore[attr-defined]
    entry = entries(store, SOUP)[0]
    assert entry["__local__"] is True and entry["__locally_created__"] is True and entry["__last_error__"]
    # A sane server later: the change goes through and is clean.
    with HostileServer(lambda r: json_reply({"items": []}) if r.method == "GET"
                       else json_reply(dict(json.loads(r.body), last_modified=5), status=201)) as good:
        assert store.sync_up(plain_target(good), SOUP)["status"] == "DONE"
    assert entries(store, SOUP)[0]["__local__"] is False


def test_a_204_confirms_without_a_copy(store: tureen.Store) -> None:
    store.local_upsert(SOUP, {"id": "n1"})
    with HostileServer(confirm_with(b"", status=204)) as server:
        assert store.sync_up(plain_target(server), SOUP)["status"] == "DONE"


@pytest.mark.parametrize("answer", [b"<html>oops</html>",
                                    json.dumps({"responses": [{"status": 200, "body": {"data": {}}}] * 2}).encode(),
                                    json.dumps({"responses": []}).encode()],
                         ids=["not-json", "no-records", "too-few"])
def test_an_unreadable_batch_answer_leaves_every_change_local(store: tureen.Store, answer: bytes) -> None:
    store.local_upsert(SOUP, [{"id": "b1"}, {"id": "b2"}])
    def respond(r: Seen) -> Reply:
        return Reply(200, answer, {"Content-Type": "application/json"})
    with HostileServer(respond) as server:
        t = plain_target(server, recordPath="data", batch={"url": server.url + "/batch"})
        with pytest.raises(tureen.HTTPError):
            store.sync_up(t, SOUP)
    assert all(e["__local__"] for e in entries(store, SOUP))


# ---------------------------------------------------------------------------
# 9. header injection and links elsewhere


@pytest.mark.parametrize("change", [
    {"headers": {"X-Api-Key": "secret\r\nX-Evil: 1"}},
    {"headers": {"X-Api-Key": "secret\nX-Evil: 1"}},
    {"headers": {"X-Api-Key": "secret\rX-Evil: 1"}},
    {"headers": {"X-Api-Key": "secret\x00"}},
    {"headers": {"X-Evil: 1\r\nX-Api-Key": "secret"}},
    {"headers": {"Bad Name": "x"}},
    {"auth": {"bearer": "token\r\nX-Evil: 1"}},
    {"url": "http://127.0.0.1:9/api/items x"},
    {"url": "http://127.0.0.1:9/api/\titems"},
    {"url": "http://user:pass@127.0.0.1:9/api/items"},
    {"url": "file:///etc/passwd"},
])
def test_targets_that_would_inject_headers_are_refused(store: tureen.Store, rest_server: RestServer,
                                                       change: Dict[str, Any]) -> None:
    target = rest_target(rest_server)
    target.update(change)
    with pytest.raises(tureen.InvalidError):
        store.sync_down(target, SOUP)
    assert rest_server.request_count() == 0


def test_a_next_page_link_elsewhere_is_not_followed(store: tureen.Store) -> None:
    with HostileServer(empty_list) as elsewhere:
        def respond(r: Seen) -> Reply:
            return json_reply({"items": [{"id": "a", "last_modified": 1}]},
                              headers={"Next-Page": elsewhere.url + "/api/items?page=2"})
        with HostileServer(respond) as server:
            with pytest.raises(tureen.HTTPError) as info:
                store.sync_down(plain_target(server, nextPage={"header": "Next-Page"}), SOUP)
            assert "leaves the target" in str(info.value)
        assert elsewhere.requests() == []


# ---------------------------------------------------------------------------
# 15, 16. Kinto's batch limit, and its "please retry" conflict


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
    with KintoProxy(small_batch_kinto.url) as proxy:
        store.local_upsert(SOUP, [{"id": "r%02d" % i} for i in range(12)])
        state = store.sync_up(dict(collection, type="kinto", url=proxy.url), SOUP)
        assert state["status"] == "DONE" and state["synced"] == 12
        sizes = [len(r.json()["requests"]) for r in proxy.requests() if r.path.endswith("/batch")]
        assert sizes and max(sizes) <= 5 and sum(sizes) == 12, sizes


def test_kintos_integrity_conflict_is_retried(store: tureen.Store, kinto: KintoServer) -> None:
    collection = new_kinto_collection(kinto)
    with KintoProxy(kinto.url) as proxy:
        refused: List[str] = []

        def once(r: Seen) -> Any:
            if r.method == "POST" and r.path.endswith("/batch") and not refused:
                refused.append(r.path)
                return json_reply({"code": 409, "errno": 122, "error": "Conflict",
                                   "message": "Integrity constraint violated, please retry."},
                                  status=409, headers={"Retry-After": "0"})
            return None

        proxy.intercept = once
        store.local_upsert(SOUP, [{"id": "c1"}, {"id": "c2"}])
        state = store.sync_up(dict(collection, type="kinto", url=proxy.url), SOUP)
        assert refused and state["status"] == "DONE" and state["synced"] == 2
        auth = (KINTO_AUTH["user"], KINTO_AUTH["password"])
        got = kinto.request("GET", "/buckets/%s/collections/%s/records" % (collection["bucket"], collection["collection"]),
                            auth=auth)
        assert {r["id"] for r in got.json()["data"]} == {"c1", "c2"}
