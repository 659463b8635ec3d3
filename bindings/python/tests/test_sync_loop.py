"""Managed syncs and the background sync loop ($fh.sync's manage and loop):
against a real Kinto (directly, or through hostile.KintoProxy to take it
away and bring it back) and hostile servers."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest

import tureen
from tureen import query, sync

from conftest import child_env
from hostile import (HostileServer, KintoProxy, Reply, Seen, TokenServer, json_reply, retry_after, with_backoff,
                     with_next_page)
from servers import KintoServer
from sync_support import WAIT, close_unless_stuck, kinto_client

RAW = "3d" * 32
SOUP = "notes"
FAST = {"sync_frequency_ms": 150, "debounce_ms": 20, "max_backoff_ms": 400}


def open_store(path: Path) -> tureen.Store:
    s = tureen.Store.open(path, raw_key=RAW)
    s.register_soup(SOUP, [("id", "string"), ("text", "string")])
    return s


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    s = open_store(tmp_path / "loop.db")
    try:
        yield s
    finally:
        close_unless_stuck(s)


def kinto_target(collection: Dict[str, Any], url: str = "", **extra: Any) -> Dict[str, Any]:
    return sync.kinto_target(url or collection["url"], collection["bucket"], collection["collection"],
                             user=collection["auth"]["user"], password=collection["auth"]["password"], **extra)


def define(store: tureen.Store, target: Dict[str, Any], prefix: str = "") -> None:
    """A sync up and a sync down of SOUP, defined without running them."""
    store.sync_up(target, SOUP, name=prefix + "up", options={"start": False})
    store.sync_down(target, SOUP, name=prefix + "down", options={"start": False})


def texts(store: tureen.Store) -> Dict[str, str]:
    return {e["id"]: e["text"] for e in store.iter_query(query.all(SOUP, page_size=500))
            if not e.get("__locally_deleted__")}


def eventually(check: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError("not within %s s: %s" % (timeout, what))


# ---------------------------------------------------------------------------
# managed syncs


def test_a_sync_can_be_defined_updated_listed_and_deleted(store: tureen.Store,
                                                           kinto_collection: Dict[str, Any]) -> None:
    server = kinto_client(kinto_collection)
    server.create_record(id="n1", data={"text": "one"})
    target = kinto_target(kinto_collection)
    state = store.sync_down(target, SOUP, name="down", options={"start": False})
    assert state["status"] == "NEW" and texts(store) == {}
    listed = store.syncs()
    assert [(s["name"], s["status"]) for s in listed] == [("down", "NEW")]
    assert listed[0]["target"]["auth"]["password"] == "<redacted>"
    assert store.resync("down")["status"] == "DONE" and texts(store) == {"n1": "one"}
    before = store.sync_status("down")["maxTimeStamp"]
    # New credentials, same collection: the position stays.
    same = dict(target, auth={"bearer": "not-a-real-token"})
    updated = store.sync_update("down", target=same)
    assert updated["maxTimeStamp"] == before and updated["target"]["auth"]["bearer"] == "<redacted>"
    store.sync_update("down", target=target, options={"mergeMode": "LEAVE_IF_CHANGED"})
    assert store.sync_status("down")["options"]["mergeMode"] == "LEAVE_IF_CHANGED"
    # Another collection starts from scratch.
    other = dict(target, collection="elsewhere")
    moved = store.sync_update("down", target=other)
    assert moved["maxTimeStamp"] == -1 and moved["status"] == "NEW"
    with pytest.raises(tureen.InvalidError):
        store.sync_update("down", options={"start": False})
    with pytest.raises(tureen.InvalidError):
        store.sync_update("down", target={"type": "kinto"})
    store.sync_delete("down")
    assert store.syncs() == [] and texts(store) == {"n1": "one"}
    with pytest.raises(tureen.NotFoundError):
        store.sync_status("down")


def test_reset_empties_synced_soups_and_forgets_syncs(store: tureen.Store,
                                                       kinto_collection: Dict[str, Any]) -> None:
    kinto_client(kinto_collection).create_record(id="n1", data={"text": "one"})
    store.register_soup("other", [("id", "string")])
    store.upsert("other", {"id": "keep"})
    store.sync_down(kinto_target(kinto_collection), SOUP, name="down")
    store.local_upsert(SOUP, {"id": "n2", "text": "local"})
    store.sync_loop_start(sync_frequency=60)
    store.sync_reset()
    assert store.syncs() == [] and texts(store) == {} and store.count(query.all("other")) == 1
    assert store.sync_loop_status()["running"] is False
    assert store.soup_exists(SOUP)


def test_an_engine_soup_cannot_be_synced(store: tureen.Store) -> None:
    """syncs_soup and cache_soup are the engines': a sync into one is
    refused before anything is saved or sent. It used to be saved (FAILED),
    and every sync_reset afterwards was refused over it."""
    with HostileServer(lambda r: json_reply({"items": []})) as server:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        store.sync_down(target, SOUP, name="fine")
        for soup in ("syncs_soup", "cache_soup"):
            with pytest.raises(tureen.InvalidError, match="belongs to"):
                store.sync_down(target, soup, name="into-" + soup)
            with pytest.raises(tureen.InvalidError, match="belongs to"):
                store.sync_up(target, soup)
        assert server.request_count() == 1 and [s["name"] for s in store.syncs()] == ["fine"]
        store.sync_reset()
        assert store.syncs() == []


# ---------------------------------------------------------------------------
# the loop


def test_two_devices_with_loops_converge(tmp_path: Path, kinto_collection: Dict[str, Any]) -> None:
    target = kinto_target(kinto_collection)
    a, b = open_store(tmp_path / "a.db"), open_store(tmp_path / "b.db")
    try:
        define(a, target)
        define(b, target)
        with a.sync_loop_start(FAST), b.sync_loop_start(FAST):
            for i in range(5):
                a.local_upsert(SOUP, {"id": "a%d" % i, "text": "from a"})
                b.local_upsert(SOUP, {"id": "b%d" % i, "text": "from b"})
            eventually(lambda: len(texts(a)) == 10 and texts(a) == texts(b), "both have all ten")
            first = a.iter_query(query.exact(SOUP, "id", "b0"))
            b_entry = next(iter(first))
            a.local_upsert(SOUP, dict(b_entry, text="edited on a"))
            a.local_delete(SOUP, [next(iter(a.iter_query(query.exact(SOUP, "id", "a1"))))["_soupEntryId"]])
            eventually(lambda: texts(b).get("b0") == "edited on a" and "a1" not in texts(b), "b sees a's edits")
            status = a.sync_loop_status()
            assert status["running"] and not status["offline"] and status["cycles"] > 0
            assert {s["name"] for s in status["syncs"]} == {"up", "down"}
        server = {r["id"]: r["text"] for r in kinto_client(kinto_collection).get_records()}
        assert server == texts(a) == texts(b)
        assert all(not e.get("__local__") for e in a.iter_query(query.all(SOUP)))
    finally:
        a.close()
        b.close()


def test_auto_sync_sends_a_local_change_without_a_cycle(store: tureen.Store,
                                                         kinto_collection: Dict[str, Any]) -> None:
    define(store, kinto_target(kinto_collection))
    server = kinto_client(kinto_collection)
    # A frequency of an hour: only the change itself can start the sync up.
    with store.sync_loop_start(sync_frequency=3600, debounce_ms=20):
        eventually(lambda: store.sync_loop_status()["cycles"] >= 1, "the first cycle")
        store.local_upsert(SOUP, {"id": "auto", "text": "sent by itself"})
        eventually(lambda: any(r["id"] == "auto" for r in server.get_records()), "the change reached Kinto")
    with store.sync_loop_start(sync_frequency=3600, auto_sync_local_updates=False):
        eventually(lambda: store.sync_loop_status()["cycles"] >= 1, "the first cycle")
        store.local_upsert(SOUP, {"id": "manual", "text": "waits"})
        time.sleep(0.5)
        assert not any(r["id"] == "manual" for r in server.get_records())
        store.sync_loop_force("up")
        eventually(lambda: any(r["id"] == "manual" for r in server.get_records()), "forced")


def test_a_paused_loop_waits_for_force(store: tureen.Store, kinto_collection: Dict[str, Any]) -> None:
    define(store, kinto_target(kinto_collection))
    store.local_upsert(SOUP, {"id": "p", "text": "x"})
    with store.sync_loop_start(FAST, sync_active=False) as loop:
        time.sleep(0.5)
        assert loop.status()["active"] is False and loop.status()["cycles"] == 0
        loop.force()
        eventually(lambda: any(r["id"] == "p" for r in kinto_client(kinto_collection).get_records()), "sent")


def test_a_server_that_goes_away_and_comes_back(store: tureen.Store, kinto: KintoServer,
                                                 kinto_collection: Dict[str, Any]) -> None:
    events: List[Dict[str, Any]] = []
    with KintoProxy(kinto.url) as proxy:
        define(store, kinto_target(kinto_collection, url=proxy.url, max_retries=0))
        with store.sync_listen(events.append), store.sync_loop_start(FAST):
            eventually(lambda: store.sync_loop_status()["cycles"] >= 2, "two cycles")
            port = proxy.down()
            eventually(lambda: store.sync_loop_status()["offline"], "offline")
            for i in range(3):
                store.local_upsert(SOUP, {"id": "off%d" % i, "text": "while away"})
            eventually(lambda: any(e["code"] == "offline_update" for e in events), "offline_update")
            assert any(e["code"] == "sync_failed" and e["errorCode"] == 10 for e in events)
            failures = max(s["failures"] for s in store.sync_loop_status()["syncs"])
            assert failures >= 1
            proxy.start(port)
            eventually(lambda: not store.sync_loop_status()["offline"], "back online")
            server = kinto_client(kinto_collection)
            eventually(lambda: {r["id"] for r in server.get_records()} >= {"off0", "off1", "off2"}, "nothing lost")


def test_a_lost_network_is_reported_at_once_and_retried_behind(store: tureen.Store, kinto: KintoServer,
                                                                kinto_collection: Dict[str, Any]) -> None:
    """$fh.sync reports sync_failed at the first cycle that finds the
    network gone: with the target's default max_retries (5), the loop's run
    does not spend seconds retrying before it says so; the loop keeps
    trying, and what was written meanwhile reaches the server once it is
    back, without the app doing anything."""
    events: List[Tuple[float, Dict[str, Any]]] = []
    with KintoProxy(kinto.url) as proxy:
        define(store, kinto_target(kinto_collection, url=proxy.url))
        with store.sync_listen(lambda e: events.append((time.monotonic(), e))), \
                store.sync_loop_start(sync_frequency_ms=200, debounce_ms=20, max_backoff_ms=400):
            eventually(lambda: store.sync_loop_status()["cycles"] >= 2, "two cycles")
            assert not store.sync_loop_status()["offline"]
            cut = time.monotonic()  # before the cut: the time measured is never less than the real one
            port = proxy.down()

            def failed() -> List[Tuple[float, Dict[str, Any]]]:
                return [(t, e) for t, e in list(events) if t >= cut and e["code"] == "sync_failed"]

            # Bounded well past the 6-7 s the report took when each run retried first.
            eventually(lambda: bool(failed()), "sync_failed after the cut", timeout=15)
            at, first = failed()[0]
            assert first["errorCode"] == 10  # TUREEN_E_NETWORK
            assert at - cut < 2.0, "sync_failed came %.2f s after the cut" % (at - cut)
            eventually(lambda: store.sync_loop_status()["offline"], "offline")
            store.local_upsert(SOUP, {"id": "cut", "text": "written while away"})
            eventually(lambda: any(e["code"] == "offline_update" for _, e in list(events)), "offline_update")
            # Tried again behind the report, not once and given up.
            eventually(lambda: len(failed()) >= 3, "more failed cycles while away")
            proxy.start(port)
            server = kinto_client(kinto_collection)
            eventually(lambda: any(r["id"] == "cut" for r in server.get_records()), "sent once back")
            eventually(lambda: not store.sync_loop_status()["offline"], "back online")


def endless_page(server: HostileServer, r: Seen) -> Reply:
    """One record and a Next-Page link to the page after it, for ever."""
    n = int(r.target.rsplit("=", 1)[-1]) if "page=" in r.target else 0
    return with_next_page(json_reply({"items": [{"id": "p%d" % n, "last_modified": n + 1}]}),
                          "%s/api/items?page=%d" % (server.url, n + 1))


def paging_target(server: HostileServer) -> Dict[str, Any]:
    return {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items",
            "nextPage": {"header": "Next-Page"}}


def test_stop_is_prompt_between_pages(store: tureen.Store) -> None:
    """A slow server (a page every 300 ms, endless): stop cancels at the next
    page and returns within a second."""
    def respond(r: Seen) -> Reply:
        time.sleep(0.3)
        return endless_page(server, r)
    with HostileServer(respond) as server:
        store.sync_down(paging_target(server), SOUP, name="slow", options={"start": False})
        store.sync_loop_start(FAST)
        eventually(lambda: store.sync_loop_status()["current"] is not None and server.request_count() >= 3,
                   "the run is paging")
        started = time.monotonic()
        store.sync_loop_stop()
        assert time.monotonic() - started < 1.0
        assert store.sync_status("slow")["status"] == "STOPPED"
        count = server.request_count()
        time.sleep(0.5)
        assert server.request_count() <= count + 1


def test_stop_waits_for_no_run_that_was_just_starting(store: tureen.Store) -> None:
    """Stopping the loop just as a run starts (20 syncs run back to back,
    the server then turning slow and endless): stop cancels that run too.
    It used to miss a run not yet registered, and then wait for all of it,
    for ever here (a hang within 53-65 tries)."""
    slow = {"on": False}

    def respond(r: Seen) -> Reply:
        if not slow["on"]:
            return json_reply({"items": []})
        time.sleep(0.2)
        return endless_page(server, r)
    with HostileServer(respond) as server:
        target = paging_target(server)
        for i in range(20):
            store.sync_down(target, SOUP, name="d%d" % i, options={"start": False})
        rng = random.Random(5)
        deadline = time.monotonic() + 60
        tries = 0
        while tries < 200 and time.monotonic() < deadline:
            tries += 1
            slow["on"] = False
            store.sync_loop_start(sync_frequency_ms=10)
            time.sleep(rng.uniform(0.02, 0.1))
            slow["on"] = True
            stopper = threading.Thread(target=store.sync_loop_stop, daemon=True)
            stopper.start()
            stopper.join(10)
            assert not stopper.is_alive(), "sync_loop_stop hung at try %d" % tries
        assert tries >= 100


def test_a_deleted_sync_leaves_the_loop_idle(store: tureen.Store) -> None:
    """A sync deleted while the loop runs is forgotten by it: the loop
    used to wake at once for ever once the deleted sync's time passed."""
    with HostileServer(lambda r: json_reply({"items": []})) as server:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        store.sync_down(target, SOUP, name="keep", options={"start": False})
        store.sync_down(target, SOUP, name="gone", options={"start": False})
        store.sync_loop_start(sync_frequency_ms=1000)
        eventually(lambda: store.sync_loop_status()["cycles"] >= 1, "a first cycle")
        store.sync_delete("gone")
        time.sleep(1.5)  # past the deleted sync's next run
        before = os.times()
        time.sleep(1.5)
        after = os.times()
        busy = (after.user + after.system) - (before.user + before.system)
        assert busy < 0.5, "the loop kept a CPU busy for %.2f s of 1.5 s" % busy
        assert [x["name"] for x in store.sync_loop_status()["syncs"]] == ["keep"]


def test_forcing_a_sync_the_loop_leaves_out_is_refused(store: tureen.Store) -> None:
    with HostileServer(lambda r: json_reply({"items": []})) as server:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        store.sync_down(target, SOUP, name="a", options={"start": False})
        store.sync_down(target, SOUP, name="b", options={"start": False})
        store.sync_loop_start(sync_frequency_ms=60_000, syncs=["a"])
        with pytest.raises(tureen.InvalidError, match="not one of the sync loop's"):
            store.sync_loop_force("b")
        store.sync_loop_force("a")
        with pytest.raises(tureen.NotFoundError):
            store.sync_loop_force("nowhere")


def test_a_loop_started_later_waits_as_the_server_asked(store: tureen.Store) -> None:
    """A run the server asked to wait (Retry-After past max_wait_ms) left
    retryAt in the sync's state; a loop started afterwards waits for it
    too (it used to call the server at once, at every start)."""
    with HostileServer(lambda r: retry_after(86400)) as server:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        store.sync_down(target, SOUP, name="d", options={"start": False})
        store.sync_loop_start(sync_frequency_ms=100)
        eventually(lambda: server.request_count() >= 1, "the first run")
        store.sync_loop_stop()
        assert store.sync_status("d")["retryAt"] > time.time() * 1000 + 3_600_000
        asked = server.request_count()
        for _ in range(2):
            store.sync_loop_start(sync_frequency_ms=100)
            time.sleep(0.6)
            store.sync_loop_stop()
        assert server.request_count() == asked


def test_a_backoff_is_remembered_across_runs(store: tureen.Store) -> None:
    """Kinto's Backoff on one answer: the next run (direct or by the loop)
    waits for it or, past max_wait_ms, ends at once with retryAt."""
    def respond(r: Seen) -> Reply:
        return with_backoff(json_reply({"items": []}), 30)
    with HostileServer(respond) as server:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items", "max_wait_ms": 1000}
        assert store.sync_down(target, SOUP, name="b")["status"] == "DONE"
        with pytest.raises(tureen.HTTPError) as info:
            store.resync("b")
        assert server.request_count() == 1
        assert info.value.state["retryAt"] > time.time() * 1000 + 20_000  # type: ignore[attr-defined]
        with store.sync_loop_start(FAST):
            time.sleep(0.6)
            status = store.sync_loop_status()["syncs"][0]
            assert status["nextRunAt"] >= info.value.state["retryAt"] - 1000  # type: ignore[attr-defined]
        assert server.request_count() == 1


def test_a_backoff_holds_back_only_its_own_server(store: tureen.Store) -> None:
    """One server's Backoff must not stall the syncs of another."""
    with HostileServer(lambda r: with_backoff(json_reply({"items": []}), 30)) as slow, \
            HostileServer(lambda r: json_reply({"items": []})) as fine:
        for name, server in (("slow", slow), ("fine", fine)):
            store.sync_down({"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}, SOUP,
                            name=name, options={"start": False})
        with store.sync_loop_start(FAST):
            eventually(lambda: fine.request_count() >= 4, "the other server is still synced")
        assert slow.request_count() == 1


def test_an_unchanged_collection_costs_one_request(store: tureen.Store, kinto: KintoServer,
                                                    kinto_collection: Dict[str, Any]) -> None:
    kinto_client(kinto_collection).create_record(id="n", data={"text": "t"})
    with KintoProxy(kinto.url) as proxy:
        store.sync_down(kinto_target(kinto_collection, url=proxy.url), SOUP, name="down")
        proxy.clear_log()
        store.sync_up(kinto_target(kinto_collection, url=proxy.url), SOUP, name="up")
        assert proxy.requests() == []  # nothing to send: nothing sent
        store.resync("down")
        assert [r.method for r in proxy.requests()] == ["GET"]


LOOPER = """
import sys, time, tureen
s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2])
s.register_soup("notes", [("id", "string"), ("text", "string")])
s.sync_loop_start(sync_frequency_ms=100, debounce_ms=10)
i = 0
print("looping", flush=True)
while True:
    s.local_upsert("notes", {"id": "k%d" % i, "text": "killed"})
    i += 1
    time.sleep(0.01)
"""


def test_a_process_killed_with_the_loop_running_resumes(tmp_path: Path, kinto_collection: Dict[str, Any]) -> None:
    path = tmp_path / "killed.db"
    with open_store(path) as s:
        define(s, kinto_target(kinto_collection))
    child = subprocess.Popen([sys.executable, "-c", LOOPER, str(path), RAW], env=child_env(),
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "looping"
        time.sleep(1.5)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    with open_store(path) as s:
        s.check()
        with s.sync_loop_start(FAST):
            server = kinto_client(kinto_collection)
            eventually(lambda: not any(e.get("__local__") for e in s.iter_query(query.all(SOUP, page_size=500))),
                       "every local change sent")
            assert {r["id"] for r in server.get_records()} == set(texts(s))


# ---------------------------------------------------------------------------
# sessions: a token refreshed on 401


def test_an_expired_token_is_refreshed_once_and_kept(store: tureen.Store) -> None:
    api = TokenServer()
    asked: List[Dict[str, Any]] = []

    def refresh(request: Dict[str, Any]) -> Dict[str, Any]:
        asked.append(request)
        return {"bearer": api.valid}

    store.register_auth("login", refresh)
    with HostileServer(api) as server:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items",
                  "auth": {"bearer": "t0", "refresh": "login"}}
        assert store.sync_down(target, SOUP, name="down")["status"] == "DONE"
        assert texts(store) == {"s1": "secret"}
        assert len(asked) == 1 and asked[0]["status"] == 401
        assert asked[0]["target"]["auth"]["bearer"] == "<redacted>"  # the old token is not shown to the host
        assert api.seen_tokens == ["Bearer t0", "Bearer t1"]
        # The new token is kept: the next run needs no refresh.
        store.resync("down")
        assert len(asked) == 1 and api.seen_tokens[-1] == "Bearer t1"
        assert "t1" not in str(store.sync_status("down"))
        # Expired again: refreshed again, by the loop too.
        api.valid = "t2"
        with store.sync_loop_start(FAST):
            eventually(lambda: len(asked) == 2 and api.seen_tokens[-1] == "Bearer t2", "the loop refreshed the token")

        # A refresher that fails, or none registered: the sync fails clearly.
        def broken(request: Dict[str, Any]) -> Dict[str, Any]:
            raise tureen.HTTPError("the login server is down")
        store.register_auth("login", broken)
        api.valid = "t3"
        with pytest.raises(tureen.HTTPError) as info:
            store.resync("down")
        assert "login" in str(info.value)
        store.unregister_auth("login")
        with pytest.raises(tureen.NotFoundError):
            store.resync("down")


# ---------------------------------------------------------------------------
# a server that lost its data


class Collection:
    """A REST collection with a collection timestamp (an ETag, as Kinto):
    ``flush()`` loses every record and moves the timestamp back, as a
    server restored from an older backup."""

    def __init__(self) -> None:
        self.records: Dict[str, Dict[str, Any]] = {}
        self.stamp = 100

    def flush(self) -> None:
        self.records.clear()
        self.stamp = 50

    def __call__(self, r: Seen) -> Reply:
        headers = {"ETag": '"%d"' % self.stamp}
        if r.method == "GET":
            since = int(r.target.split("since=")[1].split("&")[0]) if "since=" in r.target else -1
            items = sorted((x for x in self.records.values() if x["last_modified"] > since),
                           key=lambda x: x["last_modified"])
            return Reply(200, {"items": items}, headers)
        rid = r.path.rsplit("/", 1)[-1]
        if r.method == "PUT" and r.headers.get("if-none-match") == "*" and rid in self.records:
            return json_reply({"error": "exists"}, 412)
        self.stamp += 1
        self.records[rid] = dict(r.json(), last_modified=self.stamp)
        return Reply(200, self.records[rid], headers)


def test_a_flushed_server_is_detected_and_republished(store: tureen.Store) -> None:
    api = Collection()
    with HostileServer(api) as server:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items",
                  "since": {"param": "since"}, "snapshotHeader": "ETag", "create": "PUT", "createIfNoneMatch": True}
        store.sync_down(target, SOUP, name="down", options={"start": False})
        store.sync_up(target, SOUP, name="up", options={"start": False})
        store.local_upsert(SOUP, [{"id": "k%d" % i, "text": "kept here"} for i in range(3)])
        assert store.resync("up")["status"] == "DONE"
        assert store.resync("down")["maxTimeStamp"] == api.stamp
        api.flush()
        with pytest.raises(tureen.ConflictError) as info:
            store.resync("down")
        state = info.value.state  # type: ignore[attr-defined]
        assert state["serverFlushed"] is True and "flushed" in state["error"]
        assert len(texts(store)) == 3  # nothing applied, nothing lost
        assert store.sync_republish("down") == 3
        assert store.sync_status("down")["status"] == "NEW" and store.sync_status("down")["maxTimeStamp"] == -1
        assert store.resync("up")["synced"] == 3
        assert sorted(api.records) == ["k0", "k1", "k2"]
        assert store.resync("down")["serverFlushed"] is False
        with pytest.raises(tureen.InvalidError):
            store.sync_republish("up")


# ---------------------------------------------------------------------------
# crashed updates ($fh.sync's crashed_count_wait / resend_crashed_updates)


PUSHER = """
import sys, tureen
s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2])
print("pushing", flush=True)
s.resync("up")
"""


def push_in_a_child(path: Path, server: HostileServer) -> "subprocess.Popen[str]":
    """Defines sync "up" of the store at `path` with one new record, to
    `server`, and starts a process that runs it; returns once it runs."""
    target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items", "timeout_ms": 60000}
    with open_store(path) as s:
        s.sync_up(target, SOUP, name="up", options={"start": False})
        s.local_upsert(SOUP, {"id": "c1", "text": "in flight"})
    child = subprocess.Popen([sys.executable, "-c", PUSHER, str(path), RAW], env=child_env(),
                             stdout=subprocess.PIPE, text=True)
    if child.stdout is None or child.stdout.readline().strip() != "pushing":
        child.kill()
        child.wait(10)
        raise AssertionError("the child did not start its sync up")
    return child


def test_crashed_updates_wait_for_the_app_or_are_resent(tmp_path: Path) -> None:
    """A process killed while its sync up waits for the server's answer
    leaves that sync RUNNING: its changes are "crashed updates"."""
    stall = {"on": True}

    def respond(r: Seen) -> Reply:
        if r.method == "PUT" and stall["on"]:
            time.sleep(30)  # the answer never comes: the process dies first
        if r.method == "GET":
            return json_reply({"items": []})
        return json_reply(dict(r.json(), last_modified=int(time.time() * 1000)))

    path = tmp_path / "crashed.db"
    with HostileServer(respond) as server:
        child = push_in_a_child(path, server)
        try:
            eventually(lambda: server.request_count("PUT") == 1, "the PUT is out")
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(10)
        stall["on"] = False
        with open_store(path) as s:
            assert s.sync_status("up")["status"] == "RUNNING"
            with s.sync_loop_start(FAST, resend_crashed_updates=False):
                eventually(lambda: "waits for the app" in str(s.sync_loop_status()["syncs"][0]["lastError"]),
                           "the loop leaves the crashed sync to the app")
                time.sleep(0.4)
                assert server.request_count("PUT") == 1
            with s.sync_loop_start(FAST, crashed_count_wait=2) as loop:
                eventually(lambda: server.request_count("PUT") == 2, "resent after two cycles")
                assert loop.status()["cycles"] >= 2
                # The server has the PUT; the run commits its answer after
                # that, and stopping the loop before would stop the run.
                eventually(lambda: s.sync_status("up")["status"] == "DONE", "the resent run ends")
            assert s.sync_status("up")["status"] == "DONE"
            assert not any(e.get("__local__") for e in s.iter_query(query.all(SOUP)))


# ---------------------------------------------------------------------------
# one run of a sync at a time, across handles and processes


def stalling_server(release: threading.Event) -> Callable[[Seen], Reply]:
    """Answers a REST sync up; its first PUT waits for `release`."""
    puts = {"n": 0}

    def respond(r: Seen) -> Reply:
        if r.method == "PUT":
            puts["n"] += 1
            if puts["n"] == 1:
                release.wait(WAIT)
        if r.method == "GET":
            return json_reply({"items": []})
        return json_reply(dict(r.json(), last_modified=int(time.time() * 1000)))

    return respond


def test_a_sync_running_on_one_handle_is_refused_on_another(tmp_path: Path) -> None:
    """Two runs of one sync up at once send the same change twice, and the
    later answer can leave the server with a stale copy of an edit: a
    second handle of the store must not start a sync the first one runs."""
    release = threading.Event()
    path = tmp_path / "two.db"
    with HostileServer(stalling_server(release)) as server, open_store(path) as first, open_store(path) as second:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        first.sync_up(target, SOUP, name="up", options={"start": False})
        first.local_upsert(SOUP, {"id": "c1", "text": "in flight"})
        ended: Dict[str, Any] = {}
        worker = threading.Thread(target=lambda: ended.update(state=first.resync("up")), daemon=True)
        worker.start()
        try:
            eventually(lambda: server.request_count("PUT") == 1, "the first handle's PUT is out")
            with pytest.raises(tureen.MisuseError, match="another store handle or in another process"):
                second.resync("up")
            with pytest.raises(tureen.MisuseError):
                second.sync_delete("up")
            with pytest.raises(tureen.MisuseError):
                second.sync_update("up", options={"maxAttempts": 3})
            with pytest.raises(tureen.MisuseError):
                second.sync_reset()
            assert server.request_count("PUT") == 1
        finally:
            release.set()
            worker.join(WAIT)
        assert not worker.is_alive() and ended["state"]["status"] == "DONE"
        # Once the run ended, the sync is anyone's again.
        second.local_upsert(SOUP, {"id": "c2", "text": "after"})
        assert second.resync("up")["status"] == "DONE"
        assert server.request_count("PUT") == 2


def test_a_sync_up_running_in_another_process_is_not_taken_for_a_crashed_one(tmp_path: Path) -> None:
    """A loop seeing a sync up RUNNING resends it as crashed only once the
    process running it is gone."""
    release = threading.Event()
    path = tmp_path / "shared.db"
    with HostileServer(stalling_server(release)) as server:
        child = push_in_a_child(path, server)
        try:
            eventually(lambda: server.request_count("PUT") == 1, "the other process's PUT is out")
            with open_store(path) as s:
                assert s.sync_status("up")["status"] == "RUNNING"
                with pytest.raises(tureen.MisuseError):
                    s.resync("up")
                with s.sync_loop_start(FAST, crashed_count_wait=0) as loop:
                    eventually(lambda: loop.status()["cycles"] >= 4, "the loop goes round")
                    assert "another process" in str(s.sync_loop_status()["syncs"][0]["lastError"])
                    assert server.request_count("PUT") == 1  # nothing sent twice
                    child.send_signal(signal.SIGKILL)
                    child.wait(10)
                    # Gone: now it is a crashed sync up, and the loop resends it.
                    eventually(lambda: s.sync_status("up")["status"] == "DONE", "the crashed run is resent")
                assert server.request_count("PUT") == 2
        finally:
            release.set()
            if child.poll() is None:
                child.send_signal(signal.SIGKILL)
            child.wait(10)


def test_a_soups_sync_down_waits_for_its_sync_up_on_another_handle(tmp_path: Path) -> None:
    """A sync down running while a sync up's change is on the server but not
    yet recorded here would take the device's own change for the server's
    and write it over a newer edit (the default merge mode overwrites local
    changes the server moved past). A soup's syncs run one at a time: the
    down waits for the up."""
    records: Dict[str, Dict[str, Any]] = {}
    stall, reached, release = threading.Event(), threading.Event(), threading.Event()

    def respond(r: Seen) -> Reply:
        if r.method == "GET":
            return json_reply({"items": sorted(records.values(), key=lambda x: x["id"])})
        stored = dict(r.json(), last_modified=int(time.time() * 1000))
        records[stored["id"]] = stored
        if stall.is_set():  # applied on the server; the answer is late
            stall.clear()
            reached.set()
            release.wait(WAIT)
        return json_reply(stored)

    path = tmp_path / "updown.db"
    with HostileServer(respond) as server, open_store(path) as first, open_store(path) as second:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        first.sync_up(target, SOUP, name="up", options={"start": False})
        first.sync_down(target, SOUP, name="down", options={"start": False})
        first.local_upsert(SOUP, {"id": "r1", "text": "v1"})
        first.resync("up")
        first.resync("down")
        first.local_upsert(SOUP, {"id": "r1", "text": "v2"})
        stall.set()
        ended: Dict[str, Any] = {}
        up = threading.Thread(target=lambda: ended.update(up=first.resync("up")), daemon=True)
        down = threading.Thread(target=lambda: ended.update(down=second.resync("down")), daemon=True)
        up.start()
        try:
            assert reached.wait(WAIT), "the sync up's PUT never came"
            first.local_upsert(SOUP, {"id": "r1", "text": "v3"})  # the app's newest edit
            down.start()
            time.sleep(0.5)
            assert down.is_alive(), "the sync down did not wait for the sync up"
        finally:
            release.set()
            up.join(WAIT)
            down.join(WAIT)
        assert ended["up"]["status"] == "DONE" and ended["down"]["status"] == "DONE"
        assert texts(first) == {"r1": "v3"}
        first.resync("up")
        first.resync("down")
        assert texts(first) == {"r1": "v3"} and records["r1"]["text"] == "v3"


def talking_child(code: str, path: Path, first: str) -> "subprocess.Popen[str]":
    """Starts `code` on the store at `path`, its stdin and stdout piped;
    returns once it printed `first`."""
    child = subprocess.Popen([sys.executable, "-c", code, str(path), RAW], env=child_env(),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if child.stdout is None or child.stdout.readline().strip() != first:
        child.kill()
        child.wait(10)
        raise AssertionError("the child did not print %r" % first)
    return child


def go_on(child: "subprocess.Popen[str]") -> str:
    """Lets a child waiting on its stdin go on; returns the line it prints next."""
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write("\n")
    child.stdin.flush()
    return child.stdout.readline().strip()


HOLDER_OF_A_CLAIM = """
import sys, tureen
s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], busy_timeout_ms=300)
print("pushing", flush=True)
try:
    s.resync("up")
    print("DONE", flush=True)
except tureen.Error as e:
    print(type(e).__name__, flush=True)
sys.stdin.readline()
s.close()
print("closed", flush=True)
sys.stdin.readline()  # lives on, its store closed
"""


def test_a_claim_a_busy_store_kept_is_removed_by_the_handles_close(tmp_path: Path) -> None:
    """A run whose end met a store locked past its busy timeout could not
    delete its claim: other processes took the sync for running for as long
    as its process lived, though it ran nothing. The handle deletes it with
    its next write of claims, at the latest when it closes."""
    release = threading.Event()

    def respond(r: Seen) -> Reply:
        if r.method == "PUT":
            release.wait(WAIT)
        return json_reply(dict(r.json(), last_modified=int(time.time() * 1000)) if r.method == "PUT" else {"items": []})

    path = tmp_path / "busy.db"
    with HostileServer(respond) as server, open_store(path) as s:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        s.sync_up(target, SOUP, name="up", options={"start": False})
        s.local_upsert(SOUP, {"id": "c1", "text": "sent while the store is locked"})
        child = talking_child(HOLDER_OF_A_CLAIM, path, "pushing")
        try:
            eventually(lambda: server.request_count("PUT") == 1, "the child's PUT is out")
            with open_store(path) as holder, holder.transaction():
                release.set()  # the answer comes while this handle holds the write lock
                assert child.stdout.readline().strip() == "BusyError"
            assert go_on(child) == "closed"
            assert s.resync("up")["status"] == "DONE"  # the child lives; its claim does not
        finally:
            child.kill()
            child.wait(10)


def may_run(store: tureen.Store, sync: str) -> bool:
    """Runs `sync` on `store`: False while it is refused as running now."""
    try:
        return bool(store.resync(sync)["status"] == "DONE")
    except tureen.MisuseError:
        return False


END_KEEPER = """
import sys, tureen
s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], busy_timeout_ms=300)
print("pushing", flush=True)

def progress(state):
    if state["status"] == "RUNNING" and state["done"] == 1:
        print("committed", flush=True)
        sys.stdin.readline()  # another process takes the write lock meanwhile

try:
    s.resync("up", progress=progress)
    print("DONE", flush=True)
except tureen.Error as e:
    print(type(e).__name__, e.state["status"], flush=True)
sys.stdin.readline()  # lives on, its store open and idle
"""


def test_an_end_a_locked_store_refused_is_saved_once_the_lock_frees(tmp_path: Path) -> None:
    """A run whose end met the store locked past its busy timeout kept its
    outcome and its claim until its handle next ran or changed a sync, or
    closed: an idle handle left the sync RUNNING for other processes, and
    its soup held, for as long as it stayed open. They are written once the
    lock frees, the handle doing nothing more."""
    def respond(r: Seen) -> Reply:
        return json_reply(dict(r.json(), last_modified=int(time.time() * 1000)) if r.method == "PUT" else {"items": []})

    path = tmp_path / "idle.db"
    with HostileServer(respond) as server, open_store(path) as s:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        define(s, target)
        s.local_upsert(SOUP, {"id": "c1", "text": "sent once"})
        child = talking_child(END_KEEPER, path, "pushing")
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "committed"
            with open_store(path) as holder, holder.transaction():
                assert go_on(child) == "BusyError DONE"  # its end met the lock
            # The child's handle stays open and idle from here on.
            eventually(lambda: s.sync_status("up")["status"] == "DONE", "the child's outcome is saved", timeout=10)
            eventually(lambda: may_run(s, "down"), "the soup's other sync runs here", timeout=10)
            assert s.resync("up")["status"] == "DONE"
            assert server.request_count("PUT") == 1  # nothing sent twice
            assert child.poll() is None
        finally:
            child.kill()
            child.wait(10)


GHOST_CLEANER = """
import sys, tureen
s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], busy_timeout_ms=300)
print("cleaning", flush=True)
try:
    s.clean_ghosts("down")
    print("cleaned", flush=True)
except tureen.Error as e:
    print(type(e).__name__, flush=True)
sys.stdin.readline()  # lives on, its store open and idle
"""


def test_a_claim_a_locked_store_kept_goes_once_the_lock_frees(tmp_path: Path) -> None:
    """A claim whose row could not be deleted (the store locked past the
    busy timeout) stayed until its handle's next claim or close: an idle
    handle kept other processes from the sync and its soup indefinitely.
    The row goes once the lock frees, the handle doing nothing more."""
    release = threading.Event()

    def respond(r: Seen) -> Reply:
        if r.method == "GET" and not release.is_set():
            release.wait(WAIT)
        return json_reply({"items": []} if r.method == "GET" else dict(r.json(), last_modified=int(time.time() * 1000)))

    path = tmp_path / "ghosts.db"
    with HostileServer(respond) as server, open_store(path) as s:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        define(s, target)
        child = talking_child(GHOST_CLEANER, path, "cleaning")
        try:
            eventually(lambda: server.request_count("GET") == 1, "the child's clean_ghosts asks for the ids")
            with open_store(path) as holder, holder.transaction():
                release.set()  # the ids come while this handle holds the write lock
                assert child.stdout is not None and child.stdout.readline().strip() == "BusyError"
            eventually(lambda: may_run(s, "down"), "the sync runs in another process", timeout=10)
            s.local_upsert(SOUP, {"id": "c1", "text": "after"})
            assert s.resync("up")["status"] == "DONE"  # and the soup's other sync
            assert child.poll() is None
        finally:
            child.kill()
            child.wait(10)


@pytest.mark.parametrize("kind", ["up", "down"])
def test_a_run_whose_end_met_a_locked_store_is_not_left_running(tmp_path: Path, kind: str) -> None:
    """A run saves RUNNING as it starts and its outcome as it ends. An end
    that met the store locked past its busy timeout left the sync RUNNING
    for good: its status and the list of syncs said running, and a sync
    loop took a sync up for a crashed one. The call says the outcome is not
    saved yet; the handle shows it, and saves it once the store lets it,
    at the latest when it closes. Nothing is sent twice."""
    def respond(r: Seen) -> Reply:
        if r.method == "PUT":
            return json_reply(dict(r.json(), last_modified=int(time.time() * 1000)))
        return json_reply({"items": [{"id": "r1", "text": "from the server", "last_modified": 1234}]})

    path = tmp_path / "end.db"
    with HostileServer(respond) as server, open_store(path) as holder:
        s = tureen.Store.open(path, raw_key=RAW, busy_timeout_ms=200)
        try:
            target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
            define(s, target)
            s.local_upsert(SOUP, {"id": "c1", "text": "sent once"})
            lock = contextlib.ExitStack()

            def progress(state: Dict[str, Any]) -> None:
                if state["status"] == "RUNNING" and state["done"] == 1:
                    lock.enter_context(holder.transaction())  # held past the run's end
                elif state["status"] != "RUNNING":
                    lock.close()

            with pytest.raises(tureen.BusyError) as ended:
                s.resync(kind, progress=progress)
            outcome = ended.value.state
            assert outcome is not None and outcome["status"] == "DONE"
            assert s.sync_status(kind)["status"] == "DONE"
            assert {x["name"]: x["status"] for x in s.syncs()}[kind] == "DONE"
            assert "not saved yet" in str(ended.value)
        finally:
            s.close()
        saved = holder.sync_status(kind)
        assert (saved["status"], saved["maxTimeStamp"]) == ("DONE", outcome["maxTimeStamp"])
        assert holder.resync(kind)["status"] == "DONE"
        assert server.request_count("PUT") == (1 if kind == "up" else 0)


CLOSER_IN_A_CALLBACK = """
import ctypes, json, sys
from tureen import _library
lib = _library.lib
handle = _library.StoreHandle()
assert lib.tureen_store_open(sys.argv[1].encode(), json.dumps({"raw_key": sys.argv[2]}).encode(), ctypes.byref(handle)) == 0
closed = []

@_library.ProgressFn
def progress(ctx, state):
    if not closed:
        closed.append(lib.tureen_store_close(handle))

out = ctypes.c_void_p()
rc = lib.tureen_resync(handle, b"up", progress, None, ctypes.byref(out))
print("returned", closed, flush=True)
sys.stdin.readline()  # lives on, its store closed
"""


def test_a_claim_of_a_run_whose_callback_closed_the_store_goes_with_the_store(tmp_path: Path) -> None:
    """tureen_store_close from a sync's progress callback: the run goes on
    once the callback returns but can write nothing more, so its claim went
    unreleased and other processes took the sync for running, and waited
    for its soup, for as long as the process lived."""
    def respond(r: Seen) -> Reply:
        return json_reply(dict(r.json(), last_modified=int(time.time() * 1000)) if r.method == "PUT" else {"items": []})

    path = tmp_path / "closed.db"
    with HostileServer(respond) as server, open_store(path) as s:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        s.sync_up(target, SOUP, name="up", options={"start": False})
        s.sync_down(target, SOUP, name="down", options={"start": False})
        s.local_upsert(SOUP, [{"id": "c%d" % i, "text": "t"} for i in range(60)])
        child = subprocess.Popen([sys.executable, "-c", CLOSER_IN_A_CALLBACK, str(path), RAW], env=child_env(),
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert child.stdout is not None and child.stdout.readline().strip() == "returned [0]"
            assert s.resync("up")["status"] == "DONE"
            ended: Dict[str, Any] = {}
            down = threading.Thread(target=lambda: ended.update(down=s.resync("down")), daemon=True)
            down.start()
            down.join(WAIT)
            assert not down.is_alive() and ended["down"]["status"] == "DONE"
        finally:
            child.kill()
            child.wait(10)


LOOP_THEN_CLOSE = """
import sys, tureen
s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2])
loop = s.sync_loop_start({"sync_frequency_ms": 150, "syncs": ["down"]})
print("looping", flush=True)
sys.stdin.readline()
s.close()  # the loop's run of "down" waits on the server
print("closed", flush=True)
sys.stdin.readline()  # lives on, its store closed
"""


def test_a_loops_claim_goes_when_its_store_closes_mid_run(tmp_path: Path) -> None:
    """Closing a store whose loop was running a sync left that run's claim
    in the store: other processes waited for the soup for as long as the
    closing process lived."""
    stall = threading.Event()

    def respond(r: Seen) -> Reply:
        if r.method == "GET":
            stall.wait(WAIT)
            return json_reply({"items": []})
        return json_reply(dict(r.json(), last_modified=int(time.time() * 1000)))

    path = tmp_path / "loopclose.db"
    with HostileServer(respond) as server, open_store(path) as s:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        s.sync_down(target, SOUP, name="down", options={"start": False})
        s.sync_up(target, SOUP, name="up", options={"start": False})
        child = talking_child(LOOP_THEN_CLOSE, path, "looping")
        try:
            eventually(lambda: server.request_count("GET") == 1, "the loop's sync down is out")
            assert go_on(child) == "closed"
            stall.set()
            s.local_upsert(SOUP, {"id": "u1", "text": "after"})
            ended: Dict[str, Any] = {}
            up = threading.Thread(target=lambda: ended.update(up=s.resync("up")), daemon=True)
            up.start()
            up.join(WAIT)
            if up.is_alive():
                s.sync_cancel("up")
                up.join(WAIT)
            assert ended.get("up", {}).get("status") == "DONE", "the soup stayed held by the closed store's loop"
        finally:
            stall.set()
            child.kill()
            child.wait(10)


def test_a_soup_wait_outlasts_a_writer_holding_the_store_past_its_busy_timeout(tmp_path: Path) -> None:
    """A call waiting for another sync of its soup polled with a write
    transaction every 20 ms: against a writer that held the store longer
    than the waiting handle's busy timeout (a long run elsewhere), a poll
    met SQLITE_BUSY and the wait ended as a failed run. The wait polls by
    reading and goes on until the soup is free."""
    release = threading.Event()
    path = tmp_path / "busywait.db"
    with HostileServer(stalling_server(release)) as server, open_store(path) as first:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        first.sync_up(target, SOUP, name="up", options={"start": False})
        first.sync_down(target, SOUP, name="down", options={"start": False})
        first.local_upsert(SOUP, {"id": "c1", "text": "in flight"})
        ended: Dict[str, Any] = {}

        def running(key: str, call: Callable[[], Any]) -> threading.Thread:
            def body() -> None:
                try:
                    ended[key] = call()
                except tureen.Error as e:
                    ended[key] = e
            t = threading.Thread(target=body, daemon=True)
            t.start()
            return t

        with tureen.Store.open(path, raw_key=RAW, busy_timeout_ms=200) as second:
            up = running("up", lambda: first.resync("up"))
            down: Any = None
            try:
                eventually(lambda: server.request_count("PUT") == 1, "the sync up's PUT is out")
                down = running("down", lambda: second.resync("down"))
                time.sleep(0.2)  # the down waits for the up
                with open_store(path) as writer, writer.transaction():
                    time.sleep(1.0)  # five times the waiting handle's busy timeout
                time.sleep(0.1)
                assert "down" not in ended, "the wait ended while a writer held the store: %r" % ended.get("down")
                assert down.is_alive()
            finally:
                release.set()
                up.join(WAIT)
                if down is not None:
                    down.join(WAIT)
            assert ended["up"]["status"] == "DONE"
            assert isinstance(ended["down"], dict) and ended["down"]["status"] == "DONE", ended["down"]


@contextlib.contextmanager
def a_sync_down_waiting_for_a_sync_up(
    tmp_path: Path, name: Optional[str]
) -> Iterator[Tuple[Any, Any, Dict[str, Any], threading.Thread, Callable[[], None]]]:
    """A new sync down (named `name`, or unnamed) on a second handle, waiting
    for a sync up of its soup on the first whose PUT a server holds: yields
    (second handle, target, what each call ended with, the waiting thread,
    a function that lets the server answer and waits for the sync up); it
    is called on leaving too."""
    release = threading.Event()
    with HostileServer(stalling_server(release)) as server, open_store(tmp_path / "wait.db") as first, \
            open_store(tmp_path / "wait.db") as second:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        first.sync_up(target, SOUP, name="up", options={"start": False})
        first.local_upsert(SOUP, {"id": "c1", "text": "in flight"})
        ended: Dict[str, Any] = {}

        def down() -> None:
            try:
                ended["down"] = second.sync_down(target, SOUP, name=name)
            except tureen.Error as e:
                ended["down"] = e

        up = threading.Thread(target=lambda: ended.update(up=first.resync("up")), daemon=True)
        up.start()
        waiting = threading.Thread(target=down, daemon=True)

        def finish_up() -> None:
            release.set()
            up.join(WAIT)

        try:
            eventually(lambda: server.request_count("PUT") == 1, "the sync up's PUT is out")
            waiting.start()
            eventually(lambda: len(first.syncs()) == 2, "the sync down is defined")
            time.sleep(0.2)
            assert waiting.is_alive(), "the new sync down did not wait for the sync up"
            yield second, target, ended, waiting, finish_up
        finally:
            finish_up()


def test_a_new_sync_whose_wait_is_cancelled_stays_defined_and_says_so(tmp_path: Path) -> None:
    """A new sync that waits for another sync of its soup and is cancelled
    meanwhile ran nothing: it stays defined, NEW, and its call hands back its
    state (it came back with none), so that it can be run again by id."""
    with a_sync_down_waiting_for_a_sync_up(tmp_path, "down") as (second, target, ended, waiting, finish_up):
        second.sync_cancel("down")
        waiting.join(WAIT)
        assert not waiting.is_alive()
        finish_up()
        e = ended["down"]
        assert isinstance(e, tureen.CancelledError), e
        assert e.state is not None, "a cancelled wait handed back no state"
        assert e.state["name"] == "down" and e.state["status"] == "NEW"
        assert second.sync_status("down")["status"] == "NEW"
        # Defined: given again (or by id to resync), it runs.
        assert second.sync_down(target, SOUP, name="down")["status"] == "DONE"
        assert second.resync(str(e.state["_soupEntryId"]))["status"] == "DONE"


def test_closing_a_store_ends_an_unnamed_sync_waiting_for_its_soup(tmp_path: Path) -> None:
    """Store.close while an unnamed new sync of this store waits for another
    handle's sync of its soup: the binding has no id or name to cancel it
    by, so it leaves it to the library's close, which ends the wait; close
    returns at once and the call raises CancelledError."""
    with a_sync_down_waiting_for_a_sync_up(tmp_path, None) as (second, _, ended, waiting, _finish):
        closing = threading.Thread(target=second.close, daemon=True)
        closing.start()
        closing.join(10)
        assert not closing.is_alive(), "close waited for the sync's wait"
        waiting.join(WAIT)
        assert not waiting.is_alive()
    assert isinstance(ended["down"], tureen.CancelledError), ended["down"]
    assert ended["up"]["status"] == "DONE"


UNNAMED_DOWN_THEN_CLOSE = """
import ctypes, json, sys, threading
from tureen import _library
lib = _library.lib
handle = _library.StoreHandle()
assert lib.tureen_store_open(sys.argv[1].encode(), json.dumps({"raw_key": sys.argv[2]}).encode(), ctypes.byref(handle)) == 0
target = sys.stdin.readline().strip().encode()
got = {}
def down():
    out = ctypes.c_void_p()
    got["rc"] = lib.tureen_sync_down(handle, target, b"notes", None, _library.ProgressFn(), None, ctypes.byref(out))
    got["state"] = ctypes.string_at(out.value).decode() if out.value else None
t = threading.Thread(target=down)
t.start()
print("waiting", flush=True)
sys.stdin.readline()
print("close", lib.tureen_store_close(handle), flush=True)
t.join()
print(json.dumps(got), flush=True)
"""


def test_an_unnamed_new_sync_whose_wait_close_ended_hands_back_its_id(tmp_path: Path) -> None:
    """Without a name, the state a cancelled wait hands back is the only way
    to the sync it left defined (not run, NEW)."""
    import json

    release = threading.Event()
    path = tmp_path / "unnamed.db"
    with HostileServer(stalling_server(release)) as server, open_store(path) as first:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items"}
        first.sync_up(target, SOUP, name="up", options={"start": False})
        first.local_upsert(SOUP, {"id": "c1", "text": "in flight"})
        ended: Dict[str, Any] = {}
        up = threading.Thread(target=lambda: ended.update(up=first.resync("up")), daemon=True)
        up.start()
        child = subprocess.Popen([sys.executable, "-c", UNNAMED_DOWN_THEN_CLOSE, str(path), RAW], env=child_env(),
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            eventually(lambda: server.request_count("PUT") == 1, "the sync up's PUT is out")
            assert child.stdin is not None and child.stdout is not None
            child.stdin.write(json.dumps(target) + "\n")
            child.stdin.flush()
            assert child.stdout.readline().strip() == "waiting"
            eventually(lambda: len(first.syncs()) == 2, "the child's sync down is defined")
            time.sleep(0.2)
            assert go_on(child) == "close 0"
            got = json.loads(child.stdout.readline())
            assert got["rc"] == 13  # TUREEN_E_CANCELLED
            assert got["state"] is not None, "the cancelled wait handed back no state"
            state = json.loads(got["state"])
            assert state["status"] == "NEW" and first.sync_status(str(state["_soupEntryId"]))["status"] == "NEW"
        finally:
            release.set()
            up.join(WAIT)
            child.kill()
            child.wait(10)
        assert ended["up"]["status"] == "DONE"
        assert first.resync(str(state["_soupEntryId"]))["status"] == "DONE"


@pytest.mark.parametrize("config,expected", [
    ({}, {SOUP: ["syncUp", "syncDown"], "extra": ["syncUp", "syncDown"]}),
    ({"order": "down_up"}, {SOUP: ["syncDown", "syncUp"], "extra": ["syncDown", "syncUp"]}),
    ({"order": "down_up", "order_by_soup": {"extra": "up_down"}},
     {SOUP: ["syncDown", "syncUp"], "extra": ["syncUp", "syncDown"]}),
])
def test_a_cycle_runs_each_soups_syncs_in_its_order(store: tureen.Store, kinto_collection: Dict[str, Any],
                                                    config: Dict[str, Any], expected: Dict[str, List[str]]) -> None:
    """"order" (default up_down) and "order_by_soup": within a cycle, each
    soup's syncs run together, up then down or the other way round."""
    store.register_soup("extra", [("id", "string")])
    target = kinto_target(kinto_collection)
    define(store, target)
    store.sync_down(target, "extra", name="extra-down", options={"start": False})
    store.sync_up(target, "extra", name="extra-up", options={"start": False})
    started: List[Tuple[str, str]] = []
    lock = threading.Lock()

    def on_event(e: Dict[str, Any]) -> None:
        with lock:
            started.append((e["soup"], e["type"]))

    with store.sync_listen(on_event, ["sync_started"]):
        # An hour between cycles: the first cycle alone runs the four syncs.
        with store.sync_loop_start(dict(config, sync_frequency=3600)):
            eventually(lambda: len(started) >= 4, "the first cycle started the four syncs")
    with lock:
        first = started[:4]
    for soup, kinds in expected.items():
        assert [k for s, k in first if s == soup] == kinds, first
    # A soup's syncs run together: no other soup's sync between them.
    soups = [s for s, _ in first]
    assert soups in ([SOUP, SOUP, "extra", "extra"], ["extra", "extra", SOUP, SOUP]), first


def test_an_unknown_cycle_order_is_refused(store: tureen.Store) -> None:
    for bad in ({"order": "sideways"}, {"order_by_soup": {SOUP: "sideways"}}, {"order_by_soup": ["up_down"]}):
        with pytest.raises(tureen.InvalidError):
            store.sync_loop_start(bad)
    assert store.sync_loop_status()["running"] is False
