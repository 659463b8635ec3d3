"""Syncs run again without tureen_resync: a named sync given again to
sync_down / sync_up ($fh.sync's manage, called at every start), and a
forced cycle with no loop running ($fh.sync's forceSync, RhoConnect's
syncAll), against a real Kinto and hostile servers."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from tureen import query, sync

from hostile import HostileServer, Reply, Seen, TokenServer, json_reply, with_next_page
from servers import RestServer
from sync_support import close_unless_stuck, kinto_client, rest_target
from test_ctrl_c import assert_keyboard_interrupt, interrupted

RAW = "5e" * 32
SOUP = "notes"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    s = tureen.Store.open(tmp_path / "again.db", raw_key=RAW)
    s.register_soup(SOUP, [("id", "string"), ("text", "string")])
    try:
        yield s
    finally:
        close_unless_stuck(s)


def kinto_target(collection: Dict[str, Any], **auth: str) -> Dict[str, Any]:
    given = dict(collection["auth"], **auth)
    return sync.kinto_target(collection["url"], collection["bucket"], collection["collection"],
                             user=given["user"], password=given["password"])


def texts(store: tureen.Store) -> Dict[str, str]:
    return {e["id"]: e["text"] for e in store.iter_query(query.all(SOUP, page_size=500))}


def server_texts(collection: Dict[str, Any]) -> Dict[str, str]:
    return {r["id"]: r["text"] for r in kinto_client(collection).get_records()}


# ---------------------------------------------------------------------------
# a named sync given again


def test_a_named_sync_down_given_again_fetches_what_changed(store: tureen.Store,
                                                            kinto_collection: Dict[str, Any]) -> None:
    server = kinto_client(kinto_collection)
    server.create_record(id="n1", data={"text": "one"})
    target = kinto_target(kinto_collection)
    first = store.sync_down(target, SOUP, name="down")
    assert first["status"] == "DONE" and texts(store) == {"n1": "one"}
    server.create_record(id="n2", data={"text": "two"})
    again = store.sync_down(target, SOUP, name="down")
    assert again["status"] == "DONE" and texts(store) == {"n1": "one", "n2": "two"}
    # The same sync, run from where it was: one state, only n2 counted.
    assert again["_soupEntryId"] == first["_soupEntryId"] and again["done"] == 1
    assert [s["name"] for s in store.syncs()] == ["down"]


def test_a_named_sync_up_given_again_sends_the_new_changes(store: tureen.Store,
                                                           kinto_collection: Dict[str, Any]) -> None:
    target = kinto_target(kinto_collection)
    store.local_upsert(SOUP, {"id": "a", "text": "first"})
    first = store.sync_up(target, SOUP, name="up", merge_mode="OVERWRITE")
    store.local_upsert(SOUP, {"id": "b", "text": "second"})
    again = store.sync_up(target, SOUP, name="up", merge_mode="OVERWRITE")
    assert again["status"] == "DONE" and again["_soupEntryId"] == first["_soupEntryId"] and again["synced"] == 1
    assert server_texts(kinto_collection) == {"a": "first", "b": "second"}
    assert len(store.syncs()) == 1


def test_given_again_with_start_false_it_is_left_as_it_is(store: tureen.Store,
                                                          kinto_collection: Dict[str, Any]) -> None:
    kinto_client(kinto_collection).create_record(id="n1", data={"text": "one"})
    target = kinto_target(kinto_collection)
    defined = store.sync_down(target, SOUP, name="down", options={"start": False})
    again = store.sync_down(target, SOUP, name="down", options={"start": False})
    assert again["status"] == "NEW" and again["_soupEntryId"] == defined["_soupEntryId"] and texts(store) == {}
    assert again["target"]["auth"]["password"] == "<redacted>"
    done = store.sync_down(target, SOUP, name="down")
    assert done["status"] == "DONE" and texts(store) == {"n1": "one"}
    untouched = store.sync_down(target, SOUP, name="down", options={"start": False})
    assert (untouched["status"], untouched["endTime"]) == ("DONE", done["endTime"])


@pytest.mark.parametrize("change", ["collection", "password", "soup", "options", "direction"])
def test_another_definition_under_the_name_is_refused(store: tureen.Store, kinto_collection: Dict[str, Any],
                                                      change: str) -> None:
    kinto_client(kinto_collection).create_record(id="n1", data={"text": "one"})
    target = kinto_target(kinto_collection)
    store.register_soup("other", [("id", "string")])
    defined = store.sync_down(target, SOUP, name="down", options={"start": False})
    calls = {
        "collection": lambda: store.sync_down(dict(target, collection="elsewhere"), SOUP, name="down"),
        "password": lambda: store.sync_down(kinto_target(kinto_collection, password="n3w-s3cret"), SOUP, name="down"),
        "soup": lambda: store.sync_down(target, "other", name="down"),
        "options": lambda: store.sync_down(target, SOUP, name="down", merge_mode="LEAVE_IF_CHANGED"),
        "direction": lambda: store.sync_up(target, SOUP, name="down"),
    }
    with pytest.raises(tureen.InvalidError) as info:
        calls[change]()
    message = str(info.value)
    # The Python call to make, not the C one; what differs; never a secret.
    wanted = "store.sync_delete" if change == "direction" else "store.sync_update"
    assert wanted in message and "tureen_" not in message, message
    assert {"collection": "target", "password": "target", "soup": "soup ('notes')",
            "options": "options", "direction": "sync down"}[change] in message
    assert "n3w-s3cret" not in message
    # Nothing ran, nothing changed.
    assert store.syncs() == [dict(defined)] and texts(store) == {}


def test_credentials_a_refresher_gave_do_not_make_another_target(store: tureen.Store) -> None:
    api = TokenServer()
    asked: List[Dict[str, Any]] = []

    def refresh(request: Dict[str, Any]) -> Dict[str, Any]:
        asked.append(request)
        return {"bearer": "t1"}

    store.register_auth("login", refresh)
    store.register_auth("other", refresh)
    with HostileServer(api) as server:
        target = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items",
                  "auth": {"bearer": "t0", "refresh": "login"}}
        assert store.sync_down(target, SOUP, name="down")["status"] == "DONE" and len(asked) == 1
        # Given again as the app wrote it (the stale t0): the kept t1 is used.
        assert store.sync_down(target, SOUP, name="down")["status"] == "DONE"
        assert len(asked) == 1 and api.seen_tokens[-1] == "Bearer t1"
        with pytest.raises(tureen.InvalidError, match="store.sync_update"):
            store.sync_down(dict(target, auth={"bearer": "t0", "refresh": "other"}), SOUP, name="down")


# ---------------------------------------------------------------------------
# a forced cycle without a loop


def test_forcing_without_a_loop_runs_the_sync_here_once(store: tureen.Store,
                                                        kinto_collection: Dict[str, Any]) -> None:
    kinto_client(kinto_collection).create_record(id="n1", data={"text": "one"})
    target = kinto_target(kinto_collection)
    store.sync_up(target, SOUP, name="up", options={"start": False})
    store.sync_down(target, SOUP, name="down", options={"start": False})
    store.local_upsert(SOUP, {"id": "mine", "text": "local"})
    store.sync_loop_force("down")
    # Done when the call returns; the sync up was not run.
    assert store.sync_status("down")["status"] == "DONE" and store.sync_status("up")["status"] == "NEW"
    assert texts(store) == {"n1": "one", "mine": "local"} and "mine" not in server_texts(kinto_collection)
    assert store.sync_loop_status()["running"] is False


def test_forcing_every_sync_without_a_loop_runs_each_soup_up_then_down(store: tureen.Store,
                                                                       kinto_collection: Dict[str, Any]) -> None:
    server = kinto_client(kinto_collection)
    server.create_record(id="n1", data={"text": "one"})
    target = kinto_target(kinto_collection)
    # Defined down first: the cycle still sends before it fetches.
    store.sync_down(target, SOUP, name="down", options={"start": False})
    store.sync_up(target, SOUP, name="up", options={"start": False})
    store.local_upsert(SOUP, {"id": "mine", "text": "local"})
    events: List[Dict[str, Any]] = []
    with store.sync_listen(events.append, ["sync_complete"]):
        store.sync_loop_force()
    up, down = store.sync_status("up"), store.sync_status("down")
    assert (up["status"], down["status"]) == ("DONE", "DONE")
    assert up["endTime"] <= down["startTime"]
    assert server_texts(kinto_collection) == {"n1": "one", "mine": "local"}
    assert texts(store) == {"n1": "one", "mine": "local"}
    assert not any(e.get("__local__") for e in store.iter_query(query.all(SOUP)))
    # A second cycle runs both again, from where they were.
    server.create_record(id="n2", data={"text": "two"})
    store.sync_loop_force(None)
    assert texts(store)["n2"] == "two" and store.sync_status("down")["done"] == 1


def test_a_failing_sync_does_not_keep_the_cycle_from_the_others(store: tureen.Store,
                                                                kinto_collection: Dict[str, Any]) -> None:
    kinto_client(kinto_collection).create_record(id="n1", data={"text": "one"})
    store.register_soup("far", [("id", "string")])
    # Nothing listens on port 9 of loopback: refused at once, no retries.
    unreachable = {"type": "rest", "url": "http://127.0.0.1:9/api/items", "recordsPath": "items", "max_retries": 0}
    store.sync_down(unreachable, "far", name="far", options={"start": False})
    store.sync_down(kinto_target(kinto_collection), SOUP, name="down", options={"start": False})
    with pytest.raises(tureen.NetworkError) as info:
        store.sync_loop_force()
    assert "'far'" in str(info.value)
    assert store.sync_status("far")["status"] == "FAILED"
    assert store.sync_status("down")["status"] == "DONE" and texts(store) == {"n1": "one"}
    # One sync forced: its own error, as resync raises it.
    with pytest.raises(tureen.NetworkError) as one:
        store.sync_loop_force("far")
    assert store.sync_status("far")["status"] == "FAILED"
    with pytest.raises(tureen.NotFoundError):
        store.sync_loop_force("nowhere")



def test_a_cancelled_run_ends_the_cycle(store: tureen.Store) -> None:
    store.register_soup("later", [("id", "string")])

    def cancelling(r: Seen) -> Reply:
        # On the server's thread: the sync reading this page is cancelled
        # meanwhile, and there is a next page to stop before.
        store.sync_cancel("first")
        return with_next_page(json_reply({"items": []}), server.url + "/api/items?page=2")

    with HostileServer(cancelling) as server:
        first = {"type": "rest", "url": server.url + "/api/items", "recordsPath": "items",
                 "nextPage": {"header": "Next-Page"}}
        store.sync_down(first, SOUP, name="first", options={"start": False})
        later = {"type": "rest", "url": server.url + "/api/later", "recordsPath": "items"}
        store.sync_down(later, "later", name="second", options={"start": False})
        with pytest.raises(tureen.CancelledError, match="'first'"):
            store.sync_loop_force()
        assert server.request_count() == 1
    assert store.sync_status("first")["status"] == "STOPPED"
    assert store.sync_status("second")["status"] == "NEW"


def test_ctrl_c_ends_a_forced_cycle(tmp_path: Path, rest_server: RestServer) -> None:
    for i in range(200):
        rest_server.set_record({"uid": "r%03d" % i})
    rest_server.delay_next(10, 1.0, method="GET")  # slow pages
    path = tmp_path / "cycle.db"
    with tureen.Store.open(path, raw_key=RAW) as s:
        s.register_soup("items", [("uid", "string")])
        s.register_soup("later", [("uid", "string")])
        s.sync_down(rest_target(rest_server), "items", name="slow", options={"start": False})
        s.sync_down(rest_target(rest_server), "later", name="after", options={"start": False})
    ended = interrupted(
        """
        import sys, tureen
        s = tureen.Store.open(sys.argv[1], raw_key=sys.argv[2])
        print("go", flush=True)
        s.sync_loop_force()
        """, str(path), RAW)
    assert_keyboard_interrupt(ended)
    with tureen.Store.open(path, raw_key=RAW) as s:
        assert s.sync_status("slow")["status"] == "STOPPED"
        assert s.sync_status("after")["status"] == "NEW"
