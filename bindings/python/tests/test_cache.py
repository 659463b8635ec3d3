"""Cached reads (tureen.h, "Cached reads"): every policy against a server
that is up and changed, slow past the timeout, and down; time to live with
an injected clock; eviction by size; background refresh announced through
change events; a kill during a refresh; answers and secrets only inside the
encrypted store. The policy matrix runs against servers.RestServer (it can be
made slow); Kinto serves records, queries and a real outage."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

import tureen
from tureen import query

from conftest import KINTO_AUTH, assert_no_plaintext, child_env
from hostile import LOOPING_NEXT_PAGE, HostileServer, looping_page
from servers import KintoServer, RestServer, wait_until
from sync_support import close_unless_stuck, rest_target, run_bounded

RAW = "c4" * 32  # a raw key: no KDF, fast to open
T0 = 1_800_000_000_000  # the injected clock's start, epoch ms


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    s = tureen.Store.open(tmp_path / "cache.db", raw_key=RAW)
    try:
        yield s
    finally:
        close_unless_stuck(s)


def quick(server: RestServer) -> Dict[str, Any]:
    """The REST target with a short timeout and no retries: "the server
    cannot be used" is decided within a second."""
    return rest_target(server, timeout_ms=300, max_retries=0)


# ---------------------------------------------------------------------------
# The policy matrix. Each case caches v1 of a record (unless "empty"), the
# server changes it to v2, then the case makes the server up, slow or down
# and fetches with the policy. Expected: "server v2", "cache v1", "none"
# (nothing, source null), or an error status.

UP, SLOW, DOWN, EMPTY_DOWN = "up", "slow", "down", "empty-down"
NET = tureen.Status.NETWORK
NOT_FOUND = tureen.Status.NOT_FOUND

EXPECTED: Dict[str, Dict[str, Any]] = {
    "IgnoreCacheData":                   {UP: "server v2", SLOW: NET, DOWN: NET, EMPTY_DOWN: NET},
    "ReloadAndReturnCacheOnError":       {UP: "server v2", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NET},
    "ReturnCacheDataDontReload":         {UP: "cache v1", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NOT_FOUND},
    "ReturnCacheDataAndReload":          {UP: "cache v1", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NET},
    "ReloadAndReturnCacheData":          {UP: "server v2", SLOW: NET, DOWN: NET, EMPTY_DOWN: NET},
    "ReloadIfExpiredAndReturnCacheData": {UP: "cache v1", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NET},
    "InvalidateCacheDontReload":         {UP: "none", SLOW: "none", DOWN: "none", EMPTY_DOWN: "none"},
    "InvalidateCacheAndReload":          {UP: "server v2", SLOW: NET, DOWN: NET, EMPTY_DOWN: NET},
    "SERVER":                            {UP: "server v2", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NET},
    "LOCAL":                             {UP: "cache v1", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NET},
}


#: SmartSync's table (Mobile SDK guide, "Cache Policies"): each iOS name
#: with its Android spelling, which must do the same.
ANDROID = {
    "IGNORE_CACHE_DATA": "IgnoreCacheData",
    "RELOAD_AND_RETURN_CACHE_ON_FAILURE": "ReloadAndReturnCacheOnError",
    "RETURN_CACHE_DATA_DONT_RELOAD": "ReturnCacheDataDontReload",
    "RELOAD_AND_RETURN_CACHE_DATA": "ReloadAndReturnCacheData",
    "RELOAD_IF_EXPIRED_AND_RETURN_CACHE_DATA": "ReloadIfExpiredAndReturnCacheData",
    "INVALIDATE_CACHE_DONT_RELOAD": "InvalidateCacheDontReload",
    "INVALIDATE_CACHE_AND_RELOAD": "InvalidateCacheAndReload",
}


def outcome(store: tureen.Store, target: Dict[str, Any], policy: Any, **options: Any) -> Any:
    try:
        a = store.cached_fetch(target, id="r1", policy=policy, **options)
    except tureen.Error as e:
        return e.status
    if a["source"] is None:
        assert a["data"] is None
        return "none"
    return "%s %s" % (a["source"], a["data"]["v"])


@pytest.mark.parametrize("scenario", [UP, SLOW, DOWN, EMPTY_DOWN])
@pytest.mark.parametrize("name", sorted(EXPECTED) + sorted(ANDROID))
def test_policy(store: tureen.Store, rest_server: RestServer, name: str, scenario: str) -> None:
    target = quick(rest_server)
    policy = ANDROID.get(name, name)  # the expectations, by the iOS name
    rest_server.set_record({"uid": "r1", "v": "v1"})
    # Fresh for a minute by the injected clock: SERVER, LOCAL and
    # ReloadIfExpired see a fresh answer.
    options = {"ttl_ms": 60_000, "now_ms": T0 + 1000}
    if scenario != EMPTY_DOWN:
        first = store.cached_fetch(target, id="r1", now_ms=T0)
        assert first["source"] == "server" and first["cached"]
    rest_server.set_record({"uid": "r1", "v": "v2"})
    if scenario == SLOW:
        rest_server.delay_next(5, 2.0)
    elif scenario in (DOWN, EMPTY_DOWN):
        rest_server.stop()
    assert outcome(store, target, name, **options) == EXPECTED[policy][scenario]

    # What the cache holds afterwards, without asking the server. After
    # ReturnCacheDataAndReload with the server up, the background refresh
    # must bring v2: waited for (bounded), not assumed.
    held = lambda: outcome(store, target, "ReturnCacheDataDontReload")  # noqa: E731
    if HELD[policy][scenario] == "cache v2" and policy == "ReturnCacheDataAndReload":
        wait_until(lambda: held() == "cache v2", 10)
    assert held() == HELD[policy][scenario]


#: What ReturnCacheDataDontReload finds after each case of test_policy.
HELD: Dict[str, Dict[str, Any]] = {
    "IgnoreCacheData":                   {UP: "cache v1", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NOT_FOUND},
    "ReloadAndReturnCacheOnError":       {UP: "cache v2", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NOT_FOUND},
    "ReturnCacheDataDontReload":         {UP: "cache v1", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NOT_FOUND},
    "ReturnCacheDataAndReload":          {UP: "cache v2", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NOT_FOUND},
    "ReloadAndReturnCacheData":          {UP: "cache v2", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NOT_FOUND},
    "ReloadIfExpiredAndReturnCacheData": {UP: "cache v1", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NOT_FOUND},
    "InvalidateCacheDontReload":         {UP: NOT_FOUND, SLOW: NOT_FOUND, DOWN: NOT_FOUND, EMPTY_DOWN: NOT_FOUND},
    "InvalidateCacheAndReload":          {UP: "cache v2", SLOW: NOT_FOUND, DOWN: NOT_FOUND, EMPTY_DOWN: NOT_FOUND},
    "SERVER":                            {UP: "cache v2", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NOT_FOUND},
    "LOCAL":                             {UP: "cache v1", SLOW: "cache v1", DOWN: "cache v1", EMPTY_DOWN: NOT_FOUND},
}


def test_fallback_answer_says_why_and_how_old(store: tureen.Store, rest_server: RestServer) -> None:
    target = quick(rest_server)
    rest_server.set_record({"uid": "r1", "v": "v1"})
    store.cached_fetch(target, id="r1", now_ms=T0)
    rest_server.fail_next(1, status=503, retry_after=None)
    a = store.cached_fetch(target, id="r1", now_ms=T0 + 4321)
    assert (a["source"], a["ageMs"], a["storedAt"]) == ("cache", 4321, T0)
    assert a["error"] and "503" in a["error"]
    # A refusal is the server's answer, not an outage: no fallback.
    rest_server.set_unauthorized(True)
    with pytest.raises(tureen.Error) as e:
        store.cached_fetch(target, id="r1")
    assert e.value.status == tureen.Status.HTTP


def test_accounts_told_apart_by_token_or_api_key_never_share_answers(store: tureen.Store,
                                                                      rest_server: RestServer) -> None:
    """Without a "user", a bearer token or an API key header is what tells
    accounts apart: an answer cached for one is not another's (it was: the
    key held only "user", null for both). The key holds neither secret."""
    rest_server.set_record({"uid": "r1", "v": "alice's"})
    alice = dict(quick(rest_server), auth={"bearer": "token-of-alice"})
    bob = dict(quick(rest_server), auth={"bearer": "token-of-bob"})
    assert store.cached_fetch(alice, id="r1")["data"]["v"] == "alice's"
    with pytest.raises(tureen.Error) as e:
        store.cached_fetch(bob, id="r1", policy="ReturnCacheDataDontReload")
    assert e.value.status == NOT_FOUND
    assert store.cached_fetch(alice, id="r1", policy="ReturnCacheDataDontReload")["source"] == "cache"
    other_key = dict(quick(rest_server), headers={"X-Api-Key": "another-key"})
    with pytest.raises(tureen.Error) as e:
        store.cached_fetch(other_key, id="r1", policy="ReturnCacheDataDontReload")
    assert e.value.status == NOT_FOUND
    keys = json.dumps(cache_entries(store))
    assert "token-of-alice" not in keys and "secret" not in keys


def test_an_id_too_long_is_refused_before_any_request(store: tureen.Store, rest_server: RestServer) -> None:
    """An 8 MiB id was TUREEN_E_INTERNAL (libcurl refused the URL), and ids
    of a few MiB were sent whole, each error message holding the id."""
    target = quick(rest_server)
    before = rest_server.request_count()
    for n in (4097, 1 << 20, 8 << 20):
        with pytest.raises(tureen.InvalidError, match="4096 bytes") as e:
            store.cached_fetch(target, id="i" * n)
        assert len(str(e.value)) < 1000
    assert rest_server.request_count() == before
    rest_server.set_record({"uid": "i" * 4096, "v": "long"})
    assert store.cached_fetch(target, id="i" * 4096)["data"]["v"] == "long"


def test_gone_record_is_not_found_and_leaves_the_cache(store: tureen.Store, rest_server: RestServer) -> None:
    target = quick(rest_server)
    rest_server.set_record({"uid": "r1", "v": "v1"})
    store.cached_fetch(target, id="r1")
    rest_server.delete_record("r1")
    with pytest.raises(tureen.NotFoundError):
        store.cached_fetch(target, id="r1")
    with pytest.raises(tureen.NotFoundError):
        store.cached_fetch(target, id="r1", policy="ReturnCacheDataDontReload")


# ---------------------------------------------------------------------------
# Time to live, with an injected clock


def test_ttl_expiry_by_the_injected_clock(store: tureen.Store, rest_server: RestServer) -> None:
    target = quick(rest_server)
    rest_server.set_record({"uid": "r1", "v": "v1"})
    stored = store.cached_fetch(target, id="r1", ttl_ms=1000, now_ms=T0)
    assert stored["expiresAt"] == T0 + 1000
    rest_server.set_record({"uid": "r1", "v": "v2"})

    fresh = store.cached_fetch(target, id="r1", policy="LOCAL", now_ms=T0 + 999)
    assert (fresh["source"], fresh["data"]["v"], fresh["expired"]) == ("cache", "v1", False)
    # A call's own ttl can ask for younger data than the entry's lifetime.
    younger = store.cached_fetch(target, id="r1", policy="LOCAL", ttl_ms=500, now_ms=T0 + 600)
    assert (younger["source"], younger["data"]["v"]) == ("server", "v2")

    rest_server.set_record({"uid": "r1", "v": "v3"})
    rest_server.stop()
    later = T0 + 600 + 1000  # v2 was stored at T0 + 600 with ttl 500
    old = store.cached_fetch(target, id="r1", policy="ReloadIfExpiredAndReturnCacheData", now_ms=later)
    assert (old["source"], old["data"]["v"], old["expired"]) == ("cache", "v2", True)
    assert old["error"]
    # C8o's SERVER priority never serves an expired answer; the SmartSync
    # fallback and ReturnCacheDataDontReload do, and say so.
    assert outcome(store, target, "SERVER", now_ms=later) == NET
    assert outcome(store, target, "LOCAL", now_ms=later) == NET
    kept = store.cached_fetch(target, id="r1", policy="ReturnCacheDataDontReload", now_ms=later)
    assert kept["expired"] and kept["ageMs"] == 1000


# ---------------------------------------------------------------------------
# Size budget


def cache_entries(store: tureen.Store) -> List[Dict[str, Any]]:
    return list(store.iter_query(query.all(tureen.CACHE_SOUP, order_path="key")))


def test_eviction_by_size_is_least_recently_used(store: tureen.Store, rest_server: RestServer) -> None:
    target = quick(rest_server)
    for i in range(6):
        rest_server.set_record({"uid": "r%d" % i, "pad": "x" * 500})
    store.configure_cache(max_bytes=2200)  # room for three or four answers of ~570 bytes
    for i in range(3):
        store.cached_fetch(target, id="r%d" % i)
    store.cached_fetch(target, id="r0", policy="ReturnCacheDataDontReload")  # r0 is used again
    store.cached_fetch(target, id="r3")
    store.cached_fetch(target, id="r4")
    held = {e["id"] for e in cache_entries(store)}
    assert held == {"r0", "r3", "r4"}, held  # r1 and r2 were the least recently used
    assert sum(e["bytes"] for e in cache_entries(store)) <= 2200
    with pytest.raises(tureen.NotFoundError):
        store.cached_fetch(target, id="r1", policy="ReturnCacheDataDontReload")

    # A smaller budget evicts at once; an answer larger than the budget is
    # returned but not cached.
    store.configure_cache(max_bytes=1024)
    assert {e["id"] for e in cache_entries(store)} == {"r4"}
    rest_server.set_record({"uid": "big", "pad": "y" * 4000})
    big = store.cached_fetch(target, id="big")
    assert big["source"] == "server" and not big["cached"] and len(big["data"]["pad"]) == 4000
    assert {e["id"] for e in cache_entries(store)} == {"r4"}

    assert store.clear_cache(target, id="r4") == 1
    assert cache_entries(store) == []
    with pytest.raises(tureen.InvalidError):
        store.configure_cache(max_bytes=10)


def test_a_refresh_queued_before_the_budget_was_lowered_keeps_within_it(store: tureen.Store,
                                                                         rest_server: RestServer) -> None:
    """The budget is the one in force when an answer is written: before, a
    refresh queued under a larger budget wrote its answer under that one,
    and the cache ended over the max_bytes the app had set since."""
    target = rest_target(rest_server, timeout_ms=10_000, max_retries=0)
    for uid in ("r0", "r1", "r2", "grow"):
        rest_server.set_record({"uid": uid, "pad": "x" * 1000})
        store.cached_fetch(target, id=uid)
    rest_server.set_record({"uid": "grow", "pad": "y" * 6000})
    rest_server.delay_next(1, 2.0)  # the refresh waits at the server while the budget is lowered
    assert store.cached_fetch(target, id="grow", policy="ReturnCacheDataAndReload")["refreshing"]
    store.configure_cache(max_bytes=8000)
    assert sum(e["bytes"] for e in cache_entries(store)) <= 8000

    def grown() -> bool:
        return any(e["id"] == "grow" and len(e["data"]["pad"]) == 6000 for e in cache_entries(store))

    assert wait_until(grown, 10), "the refresh never stored its answer"
    held = {e["id"]: e["bytes"] for e in cache_entries(store)}
    assert sum(held.values()) <= 8000, held


def test_cache_soup_is_read_only_for_the_app(store: tureen.Store, rest_server: RestServer) -> None:
    rest_server.set_record({"uid": "r1", "v": "v1"})
    store.cached_fetch(quick(rest_server), id="r1")
    with pytest.raises(tureen.InvalidError, match=r"store\.clear_cache"):
        store.upsert(tureen.CACHE_SOUP, {"key": "forged", "data": {"v": "evil"}, "storedAt": 0})
    with pytest.raises(tureen.InvalidError):
        store.clear_soup(tureen.CACHE_SOUP)


def test_bad_requests_are_refused_clearly(store: tureen.Store, rest_server: RestServer) -> None:
    target = quick(rest_server)
    with pytest.raises(tureen.InvalidError, match="unknown cache policy 'Sometimes'"):
        store.cached_fetch(target, id="r1", policy="Sometimes")  # type: ignore[arg-type]
    for near in ("ignore_cache_data", "IGNORECACHEDATA", "Ignore_Cache_Data"):  # neither iOS's nor Android's
        with pytest.raises(tureen.InvalidError, match="Android"):
            store.cached_fetch(target, id="r1", policy=near)  # type: ignore[arg-type]
    with pytest.raises(tureen.InvalidError, match="callback"):
        store.cached_fetch(tureen.callback_target("anything"), id="r1")
    for both in ({"a": "b"}, {}):  # an empty query asks for every record: no less a contradiction
        with pytest.raises(tureen.InvalidError, match="not both"):
            store.cached_fetch(target, id="r1", query=both)
    with pytest.raises(tureen.InvalidError):
        store.cached_fetch(target, query={"a": ["not", "a", "scalar"]})  # type: ignore[dict-item]
    with pytest.raises(tureen.InvalidError):
        store.cached_fetch(target, id="r1", ttl_ms=0)


@pytest.mark.parametrize("paging", ["header", "cursor"])
def test_a_server_looping_its_pages_is_refused_at_the_first_repeat(store: tureen.Store, paging: str) -> None:
    """Every page names the same next page: before, the fetch asked for it
    again and again, up to 10000 pages (minutes), counting its record each
    time. Sync down stops at the first repeat; so does a cached fetch."""
    with HostileServer(lambda r: looping_page(server, paging)) as server:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items", "max_retries": 0,
                  "nextPage": LOOPING_NEXT_PAGE[paging]}
        with pytest.raises(tureen.HTTPError, match="already read"):
            run_bounded(store, lambda: store.cached_fetch(target, query={"q": "x"}), timeout=10)
        assert len(server.requests()) == 2, [r.line for r in server.requests()]
    with pytest.raises(tureen.NotFoundError):
        store.cached_fetch(target, query={"q": "x"}, policy="ReturnCacheDataDontReload")


# ---------------------------------------------------------------------------
# Kinto: records, queries, a real outage, refresh in the background


@pytest.fixture
def own_kinto(tmp_path: Path) -> Iterator[KintoServer]:
    """A Kinto of this test's own, so that it can be stopped."""
    server = KintoServer("memory", tmp_path / "kinto")
    server.start()
    try:
        yield server
    finally:
        server.stop()


#: Long enough that finding it in ciphertext by chance is out of the question.
PASSWORD = "cache-test-password-5e1f0c"


def kinto_target(server: KintoServer, **extra: Any) -> Dict[str, Any]:
    t = tureen.kinto_target(server.url, "cache", "notes", user=KINTO_AUTH["user"],
                            password=PASSWORD, create=True, timeout_ms=2000, max_retries=0)
    t.update(extra)
    return t


def publish(server: KintoServer, tmp_path: Path, records: List[Dict[str, Any]]) -> None:
    """Puts records on the server the way a device would: a sync up."""
    path = tmp_path / ("publisher-%d.db" % time.time_ns())
    with tureen.Store.open(path, raw_key=RAW) as p:
        p.register_soup("notes", [("id", "string")])
        p.local_upsert("notes", records)
        p.sync_up(kinto_target(server), "notes")


def test_kinto_record_and_query_then_offline(store: tureen.Store, own_kinto: KintoServer, tmp_path: Path) -> None:
    publish(own_kinto, tmp_path, [{"id": "n%d" % i, "topic": "tea" if i % 2 else "rice", "n": i} for i in range(7)])
    target = kinto_target(own_kinto)
    one = store.cached_fetch(target, id="n3")
    assert one["source"] == "server" and one["data"]["topic"] == "tea"
    tea = store.cached_fetch(target, query={"topic": "tea", "_sort": "n"})
    assert [r["n"] for r in tea["data"]] == [1, 3, 5]
    # The size counted for the budget is the answer's compact JSON text.
    sizes = {json.dumps(e["query"], sort_keys=True): e["bytes"] for e in cache_entries(store) if e["query"]}
    assert sizes['{"_sort": "n", "topic": "tea"}'] == len(json.dumps(tea["data"], separators=(",", ":")))
    # Kinto's pages of two: every page is read.
    paged = store.cached_fetch(kinto_target(own_kinto, page_size=2), query={"_sort": "-n"})
    assert [r["n"] for r in paged["data"]] == [6, 5, 4, 3, 2, 1, 0]

    own_kinto.stop()
    offline = store.cached_fetch(target, query={"_sort": "n", "topic": "tea"})  # same query, other order
    assert offline["source"] == "cache" and [r["n"] for r in offline["data"]] == [1, 3, 5]
    assert offline["error"]
    assert store.cached_fetch(target, id="n3", policy="SERVER")["source"] == "cache"
    with pytest.raises(tureen.NetworkError):
        store.cached_fetch(target, id="n4")  # never cached

    # The answers and the password stay inside the encrypted store.
    assert all(PASSWORD not in json.dumps(e) for e in cache_entries(store))
    store.close()
    assert_no_plaintext(tmp_path / "cache.db")
    for marker in (b'"topic"', b'"rice"', PASSWORD.encode()):
        for p in (tmp_path / "cache.db", tmp_path / "cache.db-wal"):
            assert marker not in (p.read_bytes() if p.exists() else b"")


def test_background_refresh_is_announced(store: tureen.Store, own_kinto: KintoServer, tmp_path: Path) -> None:
    publish(own_kinto, tmp_path, [{"id": "note", "text": "old"}])
    target = kinto_target(own_kinto)
    store.cached_fetch(target, id="note")
    publish(own_kinto, tmp_path, [{"id": "note", "text": "new"}])

    events: List[Dict[str, Any]] = []
    arrived = threading.Event()

    def on_change(event: Dict[str, Any]) -> None:
        events.append(event)
        arrived.set()

    with store.listen(tureen.CACHE_SOUP, on_change):
        a = store.cached_fetch(target, id="note", policy="ReturnCacheDataAndReload")
        assert (a["source"], a["data"]["text"], a["refreshing"]) == ("cache", "old", True)
        assert arrived.wait(10), "no change event for the refreshed answer"
    assert events[0]["origin"] == "sync" and events[0]["updated"]
    now = store.cached_fetch(target, id="note", policy="ReturnCacheDataDontReload")
    assert now["data"]["text"] == "new"


KILL_CHILD = r"""
import sys, time, tureen
path, url = sys.argv[1], sys.argv[2]
target = {"type": "rest", "url": url, "headers": {"X-Api-Key": "secret"}, "idField": "uid",
          "modifiedField": "version_ts", "timeout_ms": 30000, "max_retries": 0}
with tureen.Store.open(path, raw_key="%s") as s:
    a = s.cached_fetch(target, id="r1", policy="ReturnCacheDataAndReload")
    print(a["source"], a["data"]["v"], a["refreshing"], flush=True)
    time.sleep(60)
""" % RAW


def test_kill_during_refresh_keeps_the_old_answer(tmp_path: Path, rest_server: RestServer) -> None:
    path = tmp_path / "cache.db"
    target = rest_target(rest_server, timeout_ms=30000, max_retries=0)
    rest_server.set_record({"uid": "r1", "v": "v1"})
    with tureen.Store.open(path, raw_key=RAW) as s:
        s.cached_fetch(target, id="r1")
    rest_server.set_record({"uid": "r1", "v": "v2"})
    rest_server.delay_next(1, 30.0)  # the refresh hangs in its request
    before = len(rest_server.requests("GET"))
    child = subprocess.Popen([sys.executable, "-c", KILL_CHILD, str(path), target["url"]],
                             env=child_env(), stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().split() == ["cache", "v1", "True"]
        assert wait_until(lambda: len(rest_server.requests("GET")) > before, 10), "the refresh never asked"
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    with tureen.Store.open(path, raw_key=RAW) as s:
        s.check()
        kept = s.cached_fetch(target, id="r1", policy="ReturnCacheDataDontReload")
        assert kept["data"]["v"] == "v1"
        # and the next reload works
        assert s.cached_fetch(target, id="r1")["data"]["v"] == "v2"
