"""Sync up over several connections at once (the target's
"upload_connections") against Kinto on PostgreSQL behind four gunicorn
workers: the same server state and the same per-record outcomes as one
connection, conflicts still kept per record, and a push killed midway that
resumes without losing or duplicating a change."""

from __future__ import annotations

import json
import signal
import textwrap
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from tureen import query, sync

from conftest import new_kinto_collection, run_python
from servers import KintoServer
from sync_support import entries, is_clean, kinto_client, kinto_fields

RAW = "7c" * 32
SOUP = "items"
ON_SERVER = 300   # records synced down before the local changes
CREATES = 699     # + 1 create the server refuses = 1,000 changes with the updates and deletes
UPDATES = 200     # s0000..s0199; the server changes s0000..s0049 too
DELETES = 100     # s0200..s0299
THEIRS = 50
REFUSED = "bad id!"  # Kinto's ids are [a-zA-Z0-9_-]: it answers 400


@pytest.fixture(scope="module")
def kinto4(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KintoServer]:
    with KintoServer("postgresql", tmp_path_factory.mktemp("kinto4"), workers=4,
                     settings={"kinto.retry_after_seconds": "1"}) as server:
        yield server


def _collection(server: KintoServer, connections: int) -> Dict[str, Any]:
    target = dict(new_kinto_collection(server), type="kinto", upload_connections=connections)
    with kinto_client(target).batch() as b:
        for i in range(ON_SERVER):
            b.create_record(id="s%04d" % i, data={"n": i})
    return target


def _changes(store: tureen.Store, target: Dict[str, Any]) -> None:
    """1,000 local changes of every kind, 50 of them to records the server
    changed meanwhile, one to a record the server refuses."""
    store.register_soup(SOUP, [("id", "string"), ("n", "integer")])
    store.sync_down(target, SOUP)
    with kinto_client(target).batch() as b:
        for i in range(THEIRS):
            b.update_record(id="s%04d" % i, data={"n": i, "theirs": True})
    by_id = {e["id"]: e for e in entries(store, SOUP)}
    store.local_upsert(SOUP, [dict(by_id["s%04d" % i], mine=True) for i in range(UPDATES)])
    store.local_delete(SOUP, [by_id["s%04d" % i]["_soupEntryId"] for i in range(UPDATES, UPDATES + DELETES)])
    store.local_upsert(SOUP, [{"id": "c%04d" % i, "n": 1000 + i} for i in range(CREATES)])
    store.local_upsert(SOUP, [{"id": REFUSED, "n": -1}])


def _sync_up(store: tureen.Store, target: Dict[str, Any]) -> Dict[str, Any]:
    with pytest.raises(tureen.HTTPError) as info:  # the refused record fails the sync
        store.sync_up(target, SOUP, merge_mode=sync.LEAVE_IF_CHANGED)
    state: Dict[str, Any] = info.value.state  # type: ignore[attr-defined]
    return state


def _outcome(store: tureen.Store, target: Dict[str, Any], state: Dict[str, Any]) -> Dict[str, Any]:
    """What a sync up left, with nothing that differs between two
    collections (stamps, entry ids, times)."""
    server = {r["id"]: kinto_fields(r) for r in kinto_client(target).get_records()}
    local = {e["id"]: (is_clean(e), e.get("__last_error_status__"), e.get("__sync_attempts__"))
             for e in entries(store, SOUP)}
    return {
        "server": server,
        "local": local,
        "conflicts": sorted((c["id"], json.dumps(kinto_fields(c["theirs"]), sort_keys=True))
                            for c in store.conflicts(SOUP)),
        "counts": {k: state[k] for k in ("status", "done", "totalSize", "synced", "failed", "conflicts")},
        "errors": sorted((e["id"], e["operation"], e["httpStatus"]) for e in state["recordErrors"]),
    }


def test_upload_connections_is_checked(tmp_path: Path, kinto4: KintoServer) -> None:
    target = _collection(kinto4, 1)
    with tureen.Store.open(tmp_path / "s.db", raw_key=RAW) as store:
        store.register_soup(SOUP, [("id", "string")])
        for bad in (0, 17, "4", 2.5):
            with pytest.raises(tureen.InvalidError, match="upload_connections.*1...16"):
                store.sync_up(dict(target, upload_connections=bad), SOUP)
        for good in (1, 16):
            assert store.sync_up(dict(target, upload_connections=good), SOUP)["status"] == "DONE"


def test_parallel_sync_up_ends_as_a_serial_one(tmp_path: Path, kinto4: KintoServer) -> None:
    """1,000 changes over one connection and over four, each into its own
    collection prepared the same way: the servers hold the same records,
    and every record ended the same way on both devices (synced, in
    conflict with the same server copy, refused with the same status)."""
    outcomes: List[Dict[str, Any]] = []
    for connections in (1, 4):
        target = _collection(kinto4, connections)
        with tureen.Store.open(tmp_path / ("c%d.db" % connections), raw_key=RAW) as store:
            _changes(store, target)
            outcomes.append(_outcome(store, target, _sync_up(store, target)))
    serial, parallel = outcomes
    assert parallel == serial
    # And what they agree on is right.
    assert serial["counts"] == {"status": "FAILED", "done": 1000, "totalSize": 1000,
                                "synced": 1000 - THEIRS - 1, "failed": 1, "conflicts": THEIRS}
    assert serial["errors"] == [(REFUSED, "create", 400)]
    assert len(serial["server"]) == ON_SERVER - DELETES + CREATES
    assert [c[0] for c in serial["conflicts"]] == ["s%04d" % i for i in range(THEIRS)]
    assert all(json.loads(theirs)["theirs"] for _, theirs in serial["conflicts"])
    assert all(serial["server"]["s%04d" % i].get("mine") for i in range(THEIRS, UPDATES))


def test_conflicts_are_kept_per_record_in_every_batch(tmp_path: Path, kinto4: KintoServer) -> None:
    """Conflicts spread over many batches on the wire at once: each
    conflicting record is kept with the server's copy, each other one
    synced, under MERGE_FAIL_IF_CHANGED."""
    target = _collection(kinto4, 4)
    client = kinto_client(target)
    with tureen.Store.open(tmp_path / "s.db", raw_key=RAW) as store:
        store.register_soup(SOUP, [("id", "string"), ("n", "integer")])
        store.sync_down(target, SOUP)
        changed = {"s%04d" % i for i in range(0, ON_SERVER, 7)}  # in every batch of 25
        with client.batch() as b:
            for rid in sorted(changed):
                b.update_record(id=rid, data={"n": -1})
        store.local_upsert(SOUP, [dict(e, mine=True) for e in entries(store, SOUP)])
        with pytest.raises(tureen.ConflictError) as info:
            store.sync_up(target, SOUP, merge_mode=sync.MERGE_FAIL_IF_CHANGED)
        state = info.value.state  # type: ignore[attr-defined]
        assert state["conflicts"] == len(changed) and state["synced"] == ON_SERVER - len(changed)
        assert {c["id"] for c in store.conflicts(SOUP)} == changed
        assert all(c["theirs"]["n"] == -1 for c in store.conflicts(SOUP))
        for r in client.get_records():
            assert r.get("mine") is (None if r["id"] in changed else True), r
        for e in entries(store, SOUP):
            assert is_clean(e) is (e["id"] not in changed), e


KILLED_PUSH = textwrap.dedent("""
    import os, signal, sys, json
    import tureen
    path, raw, target, soup, at = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    def progress(state):
        # Dies with batches still on the wire and answers not yet committed.
        if state["status"] == "RUNNING" and state["done"] >= at:
            os.kill(os.getpid(), signal.SIGKILL)
    with tureen.Store.open(path, raw_key=raw) as store:
        store.sync_up(target, soup, name="up", progress=progress)
    print("not killed")
""")


def test_a_parallel_push_killed_midway_resumes_without_loss_or_duplicates(tmp_path: Path,
                                                                          kinto4: KintoServer) -> None:
    """New records without ids (the client id is stamped at sync up), plus
    updates and deletes, pushed over four connections by a process that is
    SIGKILLed midway; the next run sends the rest and what was answered but
    not recorded. The server ends holding each record once, as the device does."""
    target = _collection(kinto4, 4)
    path = tmp_path / "k.db"
    with tureen.Store.open(path, raw_key=RAW) as store:
        store.register_soup(SOUP, [("id", "string"), ("n", "integer")])
        store.sync_down(target, SOUP)
        by_id = {e["id"]: e for e in entries(store, SOUP)}
        store.local_upsert(SOUP, [dict(by_id["s%04d" % i], mine=True) for i in range(UPDATES)])
        store.local_delete(SOUP, [by_id["s%04d" % i]["_soupEntryId"] for i in range(UPDATES, UPDATES + DELETES)])
        store.local_upsert(SOUP, [{"n": 1000 + i} for i in range(CREATES)])
    child = run_python(KILLED_PUSH, [str(path), RAW, json.dumps(target), SOUP, "300"], timeout=300)
    assert child.returncode == -signal.SIGKILL, (child.returncode, child.stdout, child.stderr)
    with tureen.Store.open(path, raw_key=RAW) as store:
        assert store.sync_status("up")["status"] == "RUNNING"  # it died mid-run
        state = store.resync("up")
        assert state["status"] == "DONE" and state["failed"] == 0 and state["conflicts"] == 0, state
        local = entries(store, SOUP)
        assert all(is_clean(e) for e in local)
        server = {r["id"]: kinto_fields(r) for r in kinto_client(target).get_records()}
        assert len(local) == len(server) == ON_SERVER - DELETES + CREATES
        assert server == {e["id"]: kinto_fields(e) for e in local}
        created = sorted(r["n"] for r in server.values() if r["n"] >= 1000)
        assert created == [1000 + i for i in range(CREATES)]  # each once
        assert all(server["s%04d" % i].get("mine") for i in range(UPDATES))
        assert not any("s%04d" % i in server for i in range(UPDATES, UPDATES + DELETES))
        assert store.count(query.all(SOUP)) == len(server)

