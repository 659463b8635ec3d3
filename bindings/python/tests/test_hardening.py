"""Issue 10's store and sync-correctness items, end to end: queries that
never end, rekey beside the store's own readers, Smart SQL that would write
while it steps, secrets in sync states, poisoned modification stamps, a
delete after an unconfirmed create, deletions during a first sync down,
ties across page boundaries, MERGE_ACCEPT_YOURS against a deletion, and a
damaged store's check. Every wait is bounded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys as _sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from tureen import query, sync

from conftest import KINTO_AUTH, child_env, new_kinto_collection
from hostile import HostileServer, Reply, Seen, json_reply
from servers import KintoServer, RestServer
from sync_support import entries, kinto_client, run_bounded
from test_sync_rest import rest_target

KEY = "f6" * 32
SOUP = "items"
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    s = tureen.Store.open(tmp_path / "hard.db", raw_key=KEY)
    s.register_soup(SOUP, [("id", "string"), ("uid", "string"), ("n", "integer")])
    try:
        yield s
    finally:
        s.close()


# ---------------------------------------------------------------------------
# 3. queries that never end


def test_a_runaway_query_stops_at_query_timeout_ms(tmp_path: Path) -> None:
    with tureen.Store.open(tmp_path / "t.db", raw_key=KEY, query_timeout_ms=300) as s:
        for call in (s.query, s.count):
            started = time.monotonic()
            with pytest.raises(tureen.QueryError) as info:
                run_bounded(s, lambda: call(query.smart(ENDLESS)), timeout=10)
            assert "query_timeout_ms" in str(info.value) and time.monotonic() - started < 5
        assert s.query(query.smart("select 1")) == [[1]]  # the next query runs
    with pytest.raises(tureen.InvalidError):
        tureen.Store.open(tmp_path / "t.db", raw_key=KEY, query_timeout_ms=-1)


def test_interrupt_stops_the_queries_running_now(store: tureen.Store) -> None:
    errors: List[BaseException] = []

    def run() -> None:
        try:
            store.query(query.smart(ENDLESS))
        except BaseException as e:  # noqa: B902 - checked below
            errors.append(e)

    threads = [threading.Thread(target=run, daemon=True) for _ in range(3)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    store.interrupt()
    for t in threads:
        t.join(10)
    assert not any(t.is_alive() for t in threads)
    assert len(errors) == 3 and all(isinstance(e, tureen.CancelledError) for e in errors)
    assert store.count(query.all(SOUP)) == 0  # later queries are not affected


def test_close_interrupts_a_running_query_and_waits_for_it(tmp_path: Path) -> None:
    s = tureen.Store.open(tmp_path / "c.db", raw_key=KEY)
    outcome: List[Any] = []

    def run() -> None:
        try:
            s.count(query.smart(ENDLESS))
        except BaseException as e:  # noqa: B902 - checked below
            outcome.append((e, time.monotonic()))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    time.sleep(0.3)
    closer = threading.Thread(target=s.close, daemon=True)
    closer.start()
    closer.join(10)
    closed_at = time.monotonic()
    t.join(10)
    assert not closer.is_alive() and not t.is_alive()
    assert isinstance(outcome[0][0], tureen.CancelledError) and outcome[0][1] <= closed_at
    # The file is closed for good: it can be removed.
    tureen.remove_store(tmp_path / "c.db")


# ---------------------------------------------------------------------------
# 5. rekey beside the store's own readers


def test_rekey_waits_for_the_stores_own_readers(tmp_path: Path) -> None:
    path = tmp_path / "r.db"
    s = tureen.Store.open(path, raw_key=KEY)
    s.register_soup(SOUP, [("n", "integer")])
    s.upsert(SOUP, [{"n": i} for i in range(2000)])
    stop = threading.Event()
    errors: List[BaseException] = []
    reads = [0]

    def reader() -> None:
        while not stop.is_set():
            try:
                assert s.count(query.range(SOUP, "n", 0, 5000)) == 2000
                reads[0] += 1
            except BaseException as e:  # noqa: B902 - checked below
                errors.append(e)
                return

    threads = [threading.Thread(target=reader, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.2)
    for new_key in ("a1" * 32, "b2" * 32, "c3" * 32):
        s.rekey(raw_key=new_key)  # BusyError after 30 ms on the old library
    before = reads[0]
    time.sleep(0.2)
    stop.set()
    for t in threads:
        t.join(10)
    assert not errors and reads[0] > before  # reads go on, with the new key
    s.close()
    with pytest.raises(tureen.BadKeyError):
        tureen.Store.open(path, raw_key=KEY, create=False)
    with tureen.Store.open(path, raw_key="c3" * 32) as again:
        assert again.count(query.all(SOUP)) == 2000


HOLDER = textwrap.dedent(
    """
    import sys, time, tureen
    s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], query_timeout_ms=0)
    print("open", flush=True)
    try:
        s.count(tureen.query.smart("%s"))
    except tureen.Error:
        pass
    """ % ENDLESS
)


def test_rekey_is_busy_while_another_process_holds_the_store(tmp_path: Path) -> None:
    path = tmp_path / "b.db"
    with tureen.Store.open(path, raw_key=KEY, busy_timeout_ms=200) as s:
        s.register_soup(SOUP, [("n", "integer")])
        child = subprocess.Popen([_sys.executable, "-c", HOLDER, str(path), KEY], env=child_env(),
                                 stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "open"
            time.sleep(0.3)  # the child's endless read holds its snapshot
            with pytest.raises(tureen.BusyError):
                s.rekey(raw_key="d4" * 32)
        finally:
            child.kill()
            child.wait(10)
        assert s.count(query.all(SOUP)) == 0  # still open with the old key


# ---------------------------------------------------------------------------
# 8. Smart SQL may not write, even through a function while it steps


@pytest.mark.parametrize("sql", [
    "select sqlcipher_export('main')",
    "select sqlcipher_export('temp')",
    "select * from {items} where sqlcipher_export('main') is null",
    "with x as (select sqlcipher_export('main') as e) select e from x",
    "select (select sqlcipher_export('main'))",
    "select load_extension('libm.so.6')",
    "select fts3_tokenizer('simple', x'0000000000000000')",
])
def test_smart_sql_that_would_write_is_refused(store: tureen.Store, sql: str) -> None:
    store.upsert(SOUP, [{"id": "a", "n": 1}, {"id": "b", "n": 2}])
    before = (store.soup_names(), store.index_specs(SOUP), store.query(query.all(SOUP, page_size=100)))
    with pytest.raises(tureen.QueryError) as info:
        store.query(query.smart(sql))
    # Refused before it ran, not failed half-way through its DDL.
    assert "not authorized" in str(info.value), str(info.value)
    with pytest.raises(tureen.QueryError):
        store.count(query.smart(sql))
    assert (store.soup_names(), store.index_specs(SOUP), store.query(query.all(SOUP, page_size=100))) == before
    store.check()


def test_smart_sql_cannot_read_tureens_own_tables(store: tureen.Store) -> None:
    for table in ("tureen_sync_secrets", "tureen_meta", "tureen_soups", "sqlite_master"):
        with pytest.raises(tureen.QueryError):
            store.query(query.smart("select * from %s" % table))


# ---------------------------------------------------------------------------
# 10. secrets stay secret; only the sync engine writes sync states

SECRET = "s3cr3t-" + "x" * 12


def test_credentials_never_come_back(store: tureen.Store, kinto: KintoServer, rest_server: RestServer) -> None:
    states: List[str] = []
    collection = new_kinto_collection(kinto)
    kinto_client(collection).create_record(id="k1", data={"n": 1})
    # Kinto with basic auth: the password is the secret (the account's real one).
    secret_kinto = dict(collection, type="kinto")
    store.sync_down(secret_kinto, SOUP, name="kinto-down", progress=lambda st: states.append(json.dumps(st)))
    # A REST API key in a header, and a bearer token.
    rest = rest_target(rest_server, headers={"X-Api-Key": "secret", "X-Other": SECRET})
    rest_server.set_record({"uid": "r1", "n": 2})
    store.sync_down(rest, SOUP, name="rest-down", progress=lambda st: states.append(json.dumps(st)))
    bearer = rest_target(rest_server, auth={"bearer": SECRET}, url=rest_server.url + "/nowhere")
    with pytest.raises(tureen.HTTPError) as info:  # a 404: the error names the URL, not the token
        store.sync_down(bearer, SOUP, name="bearer-down", progress=lambda st: states.append(json.dumps(st)))
    states.append(json.dumps(info.value.state))  # type: ignore[attr-defined]
    states.append(str(info.value))
    assert rest_server.requests()[-1].headers["authorization"] == "Bearer " + SECRET  # it was used
    for name in ("kinto-down", "rest-down", "bearer-down"):
        states.append(json.dumps(store.sync_status(name)))
    states.append(json.dumps(store.query(query.all("syncs_soup", page_size=100))))
    states.append(json.dumps(store.query(query.smart("select {syncs_soup:_soup} from {syncs_soup}", page_size=100))))
    text = "\n".join(states)
    for secret in (KINTO_AUTH["password"], SECRET, "secret"):
        assert '"%s"' % secret not in text and "Bearer" not in text
    assert text.count('"<redacted>"') >= 6
    # The secrets are still there for the engine: resync authenticates.
    kinto_client(collection).create_record(id="k2", data={"n": 3})
    assert store.resync("kinto-down")["status"] == "DONE"
    assert {e.get("id") for e in entries(store, SOUP)} >= {"k1", "k2"}
    rest_server.set_record({"uid": "r2", "n": 4})
    assert store.resync("rest-down")["status"] == "DONE"


def test_the_app_cannot_write_sync_states(store: tureen.Store, rest_server: RestServer) -> None:
    state = store.sync_down(rest_target(rest_server), SOUP, name="down")
    sid = state["_soupEntryId"]
    forged = dict(state, target={"type": "rest", "url": "http://127.0.0.1:9/evil"})
    attempts = [
        lambda: store.upsert("syncs_soup", forged),
        lambda: store.upsert("syncs_soup", {"type": "junk"}),
        lambda: store.remove("syncs_soup", [sid]),
        lambda: store.remove_by_query(query.all("syncs_soup")),
        lambda: store.clear_soup("syncs_soup"),
        lambda: store.drop_soup("syncs_soup"),
        lambda: store.alter_soup("syncs_soup", [("name", "string")]),
        lambda: store.register_soup("syncs_soup", [("x", "string")]),
        lambda: store.local_upsert("syncs_soup", {"name": "x"}),
    ]
    for attempt in attempts:
        with pytest.raises(tureen.InvalidError):
            attempt()
    assert store.sync_status("down")["target"]["url"] == rest_server.items_url
    assert store.resync("down")["status"] == "DONE"


# ---------------------------------------------------------------------------
# 4. poisoned modification stamps


@pytest.mark.parametrize("stamp", [9223372036854775807, 1e308, 1.5, "123", True, {}, [], None, "missing"])
def test_a_record_with_a_poisoned_stamp_fails_alone(store: tureen.Store, stamp: Any) -> None:
    feed: List[Dict[str, Any]] = [{"id": "good1", "last_modified": 100}, {"id": "bad"}, {"id": "good2", "last_modified": 200}]
    if stamp != "missing":
        feed[1]["last_modified"] = stamp

    def respond(r: Seen) -> Reply:
        since = int(r.target.split("since=")[1]) if "since=" in r.target else -1
        return json_reply({"items": [x for x in feed if not isinstance(x.get("last_modified"), int)
                                     or isinstance(x.get("last_modified"), bool) or x["last_modified"] > since]})

    with HostileServer(respond) as server:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items",
                  "since": {"param": "since", "exclusive": False}, "max_retries": 0}
        with pytest.raises(tureen.HTTPError) as info:
            store.sync_down(target, SOUP, name="down")
        state = info.value.state  # type: ignore[attr-defined]
        assert state["status"] == "FAILED" and state["failed"] == 1 and state["failedRecordIds"] == ["bad"]
        assert state["synced"] == 2 and state["maxTimeStamp"] == 200
        assert sorted(e["id"] for e in entries(store, SOUP)) == ["good1", "good2"]
        feed.append({"id": "later", "last_modified": 300})  # a later change is still fetched
        with pytest.raises(tureen.HTTPError):
            store.resync("down")
        assert "later" in {e["id"] for e in entries(store, SOUP)}
        assert store.sync_status("down")["maxTimeStamp"] == 300


# ---------------------------------------------------------------------------
# 11. a delete after an unconfirmed create reaches the server


def test_a_delete_after_an_unconfirmed_create_is_sent(store: tureen.Store) -> None:
    on_server: Dict[str, Any] = {}

    def respond(r: Seen) -> Any:
        rid = r.path.rsplit("/", 1)[-1]
        if r.method == "GET":
            return json_reply({"items": list(on_server.values())})
        if r.method == "PUT":
            on_server[rid] = dict(json.loads(r.body), last_modified=len(on_server) + 1)
            return lambda h: None  # applied, then the connection drops unanswered
        if r.method == "DELETE":
            gone = on_server.pop(rid, None)
            return json_reply(dict(gone, deleted=True) if gone else {"error": "not found"}, status=200 if gone else 404)
        return Reply(405)

    with HostileServer(respond) as server:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items", "max_retries": 0}
        created = store.local_upsert(SOUP, {"id": "u1", "n": 1})
        never_sent = store.local_upsert(SOUP, {"id": "u2", "n": 2})
        store.local_delete(SOUP, [never_sent["_soupEntryId"]])  # never sent: gone at once
        assert [e["id"] for e in entries(store, SOUP)] == ["u1"]
        with pytest.raises(tureen.NetworkError):
            store.sync_up(target, SOUP, name="up")
        assert "u1" in on_server  # the server has it, unconfirmed
        store.local_delete(SOUP, [created["_soupEntryId"]])
        left = entries(store, SOUP)
        assert len(left) == 1 and left[0]["__locally_deleted__"] is True  # waits for the sync
        assert store.resync("up")["status"] == "DONE"
        assert on_server == {} and entries(store, SOUP) == []
        assert [r.method for r in server.requests()].count("DELETE") == 1


# ---------------------------------------------------------------------------
# 12, 13, 14: with a real Kinto


@pytest.fixture
def collection(kinto: KintoServer) -> Dict[str, Any]:
    return new_kinto_collection(kinto)


def test_a_deletion_during_the_first_sync_down_reaches_the_device(store: tureen.Store,
                                                                   collection: Dict[str, Any]) -> None:
    client = kinto_client(collection)
    with client.batch() as b:
        for i in range(12):
            b.create_record(id="r%02d" % i, data={"n": i})
    pages = [0]

    def meanwhile(state: Dict[str, Any]) -> None:
        if state["done"] == 5 and pages[0] == 0:  # page 1 is in
            pages[0] += 1
            client.delete_record(id="r00")             # fetched already
            client.update_record(id="r07", data={"n": 700})  # a change after the deletion

    target = dict(collection, type="kinto", page_size=5)
    store.sync_down(target, SOUP, name="first", progress=meanwhile)
    assert pages[0] == 1
    state = store.sync_status("first")
    store.resync("first")
    ids = {e["id"] for e in entries(store, SOUP)}
    assert "r00" not in ids and len(ids) == 11, (state["maxTimeStamp"], sorted(ids))


def test_a_killed_first_sync_down_resumes_with_the_deletions(store: tureen.Store, collection: Dict[str, Any]) -> None:
    client = kinto_client(collection)
    with client.batch() as b:
        for i in range(12):
            b.create_record(id="k%02d" % i, data={"n": i})
    changed: List[bool] = []

    def meanwhile(state: Dict[str, Any]) -> None:
        if state["done"] == 5 and not changed:
            changed.append(True)
            client.delete_record(id="k01")                    # fetched with page 1
            client.update_record(id="k03", data={"n": 300})   # comes again on the last page
        if state["done"] >= 12 and state["status"] == "RUNNING":
            raise KeyboardInterrupt  # the app dies after the last page, before the end
    with pytest.raises(KeyboardInterrupt):
        store.sync_down(dict(collection, type="kinto", page_size=5), SOUP, name="first", progress=meanwhile)
    assert changed
    store.resync("first")
    ids = {e["id"] for e in entries(store, SOUP)}
    assert "k01" not in ids and len(ids) == 11


def test_a_first_sync_down_of_an_empty_collection_keeps_its_position(store: tureen.Store,
                                                                      collection: Dict[str, Any]) -> None:
    # Device A starts on an empty collection, makes a record and sends it;
    # device B deletes it. A's resync must bring the deletion: a run from
    # no position would receive no tombstone and keep a ghost for good.
    target = dict(collection, type="kinto")
    state = store.sync_down(target, SOUP, name="down")
    other = kinto_client(collection)
    assert state["status"] == "DONE" and state["maxTimeStamp"] == int(other.get_records_timestamp().strip('"'))
    store.local_upsert(SOUP, {"id": "r1", "n": 1})
    assert store.sync_up(target, SOUP)["status"] == "DONE"
    other.delete_record(id="r1")
    assert store.resync("down")["status"] == "DONE"
    assert entries(store, SOUP) == []


def test_records_sharing_a_stamp_across_page_boundaries_all_arrive(store: tureen.Store,
                                                                    collection: Dict[str, Any]) -> None:
    client = kinto_client(collection)
    client.create_record(id="first", data={"n": -1})  # the collection's timestamp moves ahead
    with client.batch() as b:
        for i in range(12):
            b.create_record(id="t%02d" % i, data={"n": i, "last_modified": 1000})
        for i in range(6):  # groups of three on one stamp
            for j in range(3):
                b.create_record(id="g%d%d" % (i, j), data={"n": 100 + i, "last_modified": 2000 + i})
    records = client.get_records()
    assert sum(1 for r in records if r["last_modified"] == 1000) == 12
    for page_size in (2, 4, 5):
        store.clear_soup(SOUP)
        store.sync_down(dict(collection, type="kinto", page_size=page_size), SOUP)
        assert len(entries(store, SOUP)) == len(records), page_size


def _records_listings(server: KintoServer, collection: Dict[str, Any]) -> List[Dict[str, str]]:
    """The query strings of the records listings of ``collection`` Kinto logged."""
    path = "/buckets/%s/collections/%s/records" % (collection["bucket"], collection["collection"])
    out = []
    for line in server.log_path.read_text().splitlines():
        if '"request.summary"' in line and '"GET"' in line:
            fields = json.loads(line)["Fields"]
            if fields.get("path", "").endswith(path):
                out.append(fields.get("querystring", {}))
    return out


def test_kinto_pages_are_asked_by_stamp_from_the_last_page_on(store: tureen.Store, kinto: KintoServer,
                                                              collection: Dict[str, Any]) -> None:
    # Pages sorted by stamp and id make Kinto filter on an OR of two ranges
    # for every page, 1.25-2.5x its time; with unique stamps (Kinto's own)
    # each page starts at the last one's highest stamp, sorted by stamp alone.
    client = kinto_client(collection)
    with client.batch() as b:
        for i in range(23):
            b.create_record(id="s%02d" % i, data={"n": i})
    stamps = sorted(r["last_modified"] for r in client.get_records())
    before = len(_records_listings(kinto, collection))
    state = store.sync_down(dict(collection, type="kinto", page_size=10), SOUP)
    assert state["status"] == "DONE" and state["synced"] == 23 and state["done"] == 23
    asked = _records_listings(kinto, collection)[before:]
    assert [q.get("_sort") for q in asked] == ["last_modified"] * 3
    # Each page asks again for the last one's last record, one more, and drops it.
    assert [q.get("min_last_modified") for q in asked] == [None, str(stamps[9]), str(stamps[19])]
    assert [q.get("_limit") for q in asked] == ["10", "11", "11"]
    assert not any("_token" in q for q in asked)
    assert sorted(e["n"] for e in entries(store, SOUP)) == list(range(23))


def test_records_sharing_a_stamp_at_a_page_boundary_come_once(store: tureen.Store,
                                                              collection: Dict[str, Any]) -> None:
    # A run of one stamp across a page boundary, shorter than a page: the
    # next page starts at that stamp and drops the ones it has.
    client = kinto_client(collection)
    client.create_record(id="first", data={"n": -1})
    with client.batch() as b:
        for i in range(8):
            b.create_record(id="a%d" % i, data={"n": i, "last_modified": 1000 + i})
        for i in range(4):
            b.create_record(id="t%d" % i, data={"n": 10 + i, "last_modified": 1008})
        for i in range(5):
            b.create_record(id="z%d" % i, data={"n": 20 + i, "last_modified": 1009 + i})
    total = len(client.get_records())
    for page_size in (3, 5, 9, 10):
        store.clear_soup(SOUP)
        state = store.sync_down(dict(collection, type="kinto", page_size=page_size), SOUP)
        assert state["status"] == "DONE", page_size
        assert (state["synced"], state["done"]) == (total, total), page_size
        assert len(entries(store, SOUP)) == total, page_size


def test_merge_accept_yours_republishes_a_record_deleted_on_the_server(store: tureen.Store,
                                                                       collection: Dict[str, Any]) -> None:
    client = kinto_client(collection)
    client.create_record(id="m1", data={"n": 1, "title": "old"})
    target = dict(collection, type="kinto")
    store.sync_down(target, SOUP)
    entry = entries(store, SOUP)[0]
    store.local_upsert(SOUP, dict(entry, title="mine"))
    client.delete_record(id="m1")
    state = store.sync_up(target, SOUP, merge_mode=sync.MERGE_ACCEPT_YOURS)
    assert state["status"] == "DONE" and state["conflicts"] == 0
    assert client.get_record(id="m1")["data"]["title"] == "mine"
    assert store.conflicts(SOUP) == []


# ---------------------------------------------------------------------------
# 16. a damaged store says CORRUPT


def test_check_of_a_damaged_store_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "d.db"
    with tureen.Store.open(path, raw_key=KEY) as s:
        s.register_soup(SOUP, [("n", "integer")])
        s.upsert(SOUP, [{"n": i, "pad": "y" * 500} for i in range(300)])
    size = path.stat().st_size
    assert size > 20 * 4096
    with open(path, "r+b") as f:
        f.seek(10 * 4096 + 100)
        f.write(os.urandom(64))
    with tureen.Store.open(path, raw_key=KEY) as s:
        with pytest.raises(tureen.CorruptError):
            s.check()


