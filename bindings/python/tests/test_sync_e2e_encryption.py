"""End-to-end encrypted records on a real Kinto (a target's "encryption"):
two devices converge while the server (its PostgreSQL tables included)
holds no value and no field name; a tampered, moved or foreign-key record
fails alone; keys rotate with reencrypt; a replayed old envelope is the
documented limit; the keys never show in states, progress, events or
messages."""

from __future__ import annotations

import base64
import json
import logging
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from tureen import sync

from conftest import new_kinto_collection
from servers import KintoServer, postgres_bindir
from sync_support import close_unless_stuck, entries, is_clean, kinto_client, kinto_fields

RAW = "5e" * 32
SOUP = "diary"
K1 = ("k1", "11" * 32)
K2 = ("k2", "a2" * 32)
K3 = ("k3", "3c" * 32)
# Distinctive plaintext: neither may reach the server in any form.
SECRET_VALUE = "Zanzibar-aubergine-7741"
SECRET_FIELD = "quetzalcoatl_notes"


def open_device(path: Path) -> tureen.Store:
    s = tureen.Store.open(path, raw_key=RAW)
    s.register_soup(SOUP, [("id", "string"), ("title", "string")])
    return s


@pytest.fixture
def devices(tmp_path: Path) -> Iterator[List[tureen.Store]]:
    stores = [open_device(tmp_path / "one.db"), open_device(tmp_path / "two.db"), open_device(tmp_path / "three.db")]
    try:
        yield stores
    finally:
        for s in stores:
            close_unless_stuck(s)


def target_for(collection: Dict[str, Any], keys: List[Any]) -> Dict[str, Any]:
    auth = collection["auth"]
    return sync.kinto_target(collection["url"], collection["bucket"], collection["collection"],
                             user=auth["user"], password=auth["password"], encryption=keys)


def on_server(collection: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {r["id"]: r for r in kinto_client(collection).get_records()}


def local(store: tureen.Store) -> Dict[str, Dict[str, Any]]:
    return {e["id"]: e for e in entries(store, SOUP)}


def failed_down(store: tureen.Store, target: Dict[str, Any], name: str = "down") -> Dict[str, Any]:
    with pytest.raises(tureen.Error) as info:
        store.sync_down(target, SOUP, name=name)
    state = info.value.state  # type: ignore[attr-defined]
    assert state is not None and state["status"] == "FAILED"
    return state


def flip(text: str, at: int) -> str:
    """``text`` (base64) with one character changed, still base64."""
    c = text[at]
    return text[:at] + ("A" if c != "A" else "B") + text[at + 1:]


def test_two_devices_converge_and_the_database_holds_no_plaintext(
    devices: List[tureen.Store], kinto_pg: KintoServer
) -> None:
    collection = new_kinto_collection(kinto_pg)
    target = target_for(collection, [K1])
    one, two, _ = devices
    one.local_upsert(SOUP, [{"id": "d1", "title": SECRET_VALUE, SECRET_FIELD: ["x", 1]},
                            {"id": "d2", "title": "second", "n": 2}])
    assert one.sync_up(target, SOUP, name="up")["status"] == "DONE"
    assert one.sync_down(target, SOUP, name="down")["status"] == "DONE"
    assert two.sync_down(target, SOUP, name="down")["status"] == "DONE"
    assert kinto_fields(local(two)["d1"]) == {"id": "d1", "title": SECRET_VALUE, SECRET_FIELD: ["x", 1]}
    assert is_clean(local(two)["d1"])

    # Two edits the other way, and a deletion.
    two.local_upsert(SOUP, dict(local(two)["d2"], title="second, edited"))
    two.local_delete(SOUP, [local(two)["d1"]["_soupEntryId"]])
    assert two.sync_up(target, SOUP, name="up")["status"] == "DONE"
    assert one.resync("down")["status"] == "DONE"
    assert set(local(one)) == {"d2"} and local(one)["d2"]["title"] == "second, edited"

    server = on_server(collection)
    for record in server.values():
        assert set(record) <= {"id", "last_modified", "deleted", "enc"}, record
        assert set(record["enc"]) == {"v", "kid", "n", "c"} and record["enc"]["kid"] == "k1"
    # The whole database, as pg_dump writes it: no value, no field name.
    # (d1's deletion leaves a tombstone; its older versions are gone.)
    one.local_upsert(SOUP, {"id": "d3", "title": SECRET_VALUE, SECRET_FIELD: True})
    assert one.sync_up(target, SOUP, name="up")["status"] == "DONE"
    assert kinto_pg.dsn is not None
    dump = subprocess.run([str(postgres_bindir() / "pg_dump"), "-d", kinto_pg.dsn], capture_output=True,
                          text=True, timeout=120, check=True).stdout
    assert '"enc"' in dump and collection["collection"] in dump
    for plain in (SECRET_VALUE, SECRET_FIELD, "second, edited"):
        assert plain not in dump


def test_a_tampered_record_fails_alone_as_corrupt(devices: List[tureen.Store], kinto_collection: Dict[str, Any]) -> None:
    target = target_for(kinto_collection, [K1])
    one, two, _ = devices
    one.local_upsert(SOUP, [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}, {"id": "c", "title": "C"}])
    one.sync_up(target, SOUP, name="up")
    client = kinto_client(kinto_collection)
    b = on_server(kinto_collection)["b"]
    client.update_record(id="b", data=dict(b, enc=dict(b["enc"], c=flip(b["enc"]["c"], 5))))

    state = failed_down(two, target)
    assert state["failedRecordIds"] == ["b"]
    (error,) = state["recordErrors"]
    assert error["id"] == "b" and "encryption" in error["error"] and "does not decrypt" in error["error"]
    assert error["status"] == "CORRUPT"
    assert set(local(two)) == {"a", "c"}

    # A truncated envelope too.
    client.update_record(id="b", data={"id": "b", "enc": dict(b["enc"], c=b["enc"]["c"][:8])})
    state = failed_down(two, target, name="again")
    assert state["failedRecordIds"] == ["b"] and "truncated" in state["recordErrors"][0]["error"]
    assert state["recordErrors"][0]["status"] == "CORRUPT"


def test_an_envelope_moved_to_another_id_or_collection_is_corrupt(
    devices: List[tureen.Store], kinto_collection: Dict[str, Any], kinto: KintoServer
) -> None:
    target = target_for(kinto_collection, [K1])
    one, two, three = devices
    one.local_upsert(SOUP, [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}])
    one.sync_up(target, SOUP, name="up")
    server = on_server(kinto_collection)
    kinto_client(kinto_collection).update_record(id="b", data={"id": "b", "enc": server["a"]["enc"]})
    state = failed_down(two, target)
    assert state["failedRecordIds"] == ["b"] and "does not decrypt" in state["recordErrors"][0]["error"]
    assert state["recordErrors"][0]["status"] == "CORRUPT"
    assert set(local(two)) == {"a"} and local(two)["a"]["title"] == "A"

    # The same envelope under the same id in another collection.
    other = new_kinto_collection(kinto)
    kinto_client(other).create_record(id="a", data={"id": "a", "enc": server["a"]["enc"]})
    state = failed_down(three, target_for(other, [K1]))
    assert state["failedRecordIds"] == ["a"] and not local(three)
    assert [e["status"] for e in state["recordErrors"]] == ["CORRUPT"]


def test_a_device_without_the_key_gets_key_errors(devices: List[tureen.Store], kinto_collection: Dict[str, Any]) -> None:
    one, two, _ = devices
    one.local_upsert(SOUP, [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}])
    one.sync_up(target_for(kinto_collection, [K1]), SOUP, name="up")
    state = failed_down(two, target_for(kinto_collection, [K2, K3]))
    assert sorted(state["failedRecordIds"]) == ["a", "b"]
    for error in state["recordErrors"]:
        assert '"k1", which is not among the target\'s keys' in error["error"]
        assert error["status"] == "KEY"
    assert not local(two)
    # The same id with another key opens nothing either (the tag fails).
    state = failed_down(two, target_for(kinto_collection, [("k1", K3[1])]), name="again")
    assert sorted(state["failedRecordIds"]) == ["a", "b"] and "does not decrypt" in state["recordErrors"][0]["error"]
    assert [e["status"] for e in state["recordErrors"]] == ["CORRUPT", "CORRUPT"]


def test_rotation_reencrypts_every_record_under_the_first_key(
    devices: List[tureen.Store], kinto_collection: Dict[str, Any]
) -> None:
    one, two, three = devices
    old, rotated = target_for(kinto_collection, [K1]), target_for(kinto_collection, [K2, K1])
    n = 30
    one.local_upsert(SOUP, [{"id": "r%02d" % i, "title": "t%d" % i} for i in range(n)])
    one.sync_up(old, SOUP, name="up")
    one.local_delete(SOUP, [local(one)["r00"]["_soupEntryId"]])
    one.sync_up(old, SOUP, name="up")
    assert two.sync_down(rotated, SOUP, name="down")["status"] == "DONE"
    # One record in clear (written before the collection was encrypted).
    kinto_client(kinto_collection).create_record(id="plain", data={"id": "plain", "title": "was clear"})

    assert two.reencrypt(rotated) == n
    server = on_server(kinto_collection)
    assert {r["enc"]["kid"] for r in server.values()} == {"k2"} and len(server) == n
    assert two.reencrypt(rotated) == 0

    # Device one, given [k2, k1], reads them all; one with only [k1] cannot.
    assert one.sync_down(rotated, SOUP, name="down")["status"] == "DONE"
    assert local(one)["plain"]["title"] == "was clear" and local(one)["r05"]["title"] == "t5"
    assert two.resync("down")["status"] == "DONE" and local(two)["plain"]["title"] == "was clear"
    state = failed_down(three, old)
    assert len(state["failedRecordIds"]) == n
    assert all('"k2"' in e["error"] and e["status"] == "KEY" for e in state["recordErrors"])
    with pytest.raises(tureen.InvalidError):
        two.reencrypt(sync.kinto_target(kinto_collection["url"], kinto_collection["bucket"], kinto_collection["collection"]))


def test_reencrypt_skips_a_record_that_does_not_open(
    devices: List[tureen.Store], kinto_collection: Dict[str, Any]
) -> None:
    one, two, _ = devices
    one.local_upsert(SOUP, [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}])
    one.sync_up(target_for(kinto_collection, [K1]), SOUP, name="up")
    b = on_server(kinto_collection)["b"]
    kinto_client(kinto_collection).update_record(id="b", data=dict(b, enc=dict(b["enc"], c=flip(b["enc"]["c"], 3))))
    from tureen._library import call_for_string, lib  # the C answer, with its "skipped"
    with two._use(serving=True) as handle:  # type: ignore[attr-defined]
        answer = json.loads(call_for_string(lib.tureen_reencrypt, handle,
                                            json.dumps(target_for(kinto_collection, [K2, K1])).encode()))
    assert answer == {"reencrypted": 1, "skipped": 1, "blobs": 0}
    server = on_server(kinto_collection)
    assert server["a"]["enc"]["kid"] == "k2" and server["b"]["enc"]["kid"] == "k1"


def test_a_replayed_old_envelope_is_applied(devices: List[tureen.Store], kinto_collection: Dict[str, Any]) -> None:
    # The documented limit: an envelope is bound to its record, not to its version.
    target = target_for(kinto_collection, [K1])
    one, two, _ = devices
    one.local_upsert(SOUP, {"id": "a", "title": "v1"})
    one.sync_up(target, SOUP, name="up")
    v1 = on_server(kinto_collection)["a"]["enc"]
    one.local_upsert(SOUP, dict(local(one)["a"], title="v2"))
    one.sync_up(target, SOUP, name="up")
    kinto_client(kinto_collection).update_record(id="a", data={"id": "a", "enc": v1})
    assert two.sync_down(target, SOUP, name="down")["status"] == "DONE"
    assert local(two)["a"]["title"] == "v1"


def test_the_keys_never_show(devices: List[tureen.Store], kinto_collection: Dict[str, Any],
                             caplog: pytest.LogCaptureFixture) -> None:
    one, two, _ = devices
    target = target_for(kinto_collection, [K2, K1])
    seen: List[str] = []
    tureen.log.set_level("debug")
    with caplog.at_level(logging.DEBUG, logger="tureen"), one.sync_listen(lambda e: seen.append(json.dumps(e))):
        one.local_upsert(SOUP, [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}])
        state = one.sync_up(target, SOUP, name="up", progress=lambda s: seen.append(json.dumps(s)))
        seen.append(json.dumps(state))
        seen.append(json.dumps(one.sync_status("up")))
        state = one.sync_down(target, SOUP, name="down", progress=lambda s: seen.append(json.dumps(s)))
        seen.append(json.dumps(one.syncs()))
        # New keys keep the sync's position.
        before = one.sync_status("down")
        assert before["maxTimeStamp"] > 0
        one.sync_update("down", target=target_for(kinto_collection, [K3, K2, K1]))
        after = one.sync_status("down")
        seen.append(json.dumps(after))
        assert after["target"]["encryption"] == {"keys": [{"id": i, "key": "<redacted>"} for i in ("k3", "k2", "k1")]}
        assert after["maxTimeStamp"] == before["maxTimeStamp"]
        assert one.resync("down")["status"] == "DONE"
        seen.append(json.dumps(one.sync_status("down")))
        # A failing run's messages too.
        with pytest.raises(tureen.Error) as info:
            two.sync_down(target_for(kinto_collection, [K3]), SOUP, name="down")
        seen.append(str(info.value) + json.dumps(info.value.state))  # type: ignore[attr-defined]
    logging.getLogger("tureen").setLevel(logging.NOTSET)
    lines = [r.getMessage() for r in caplog.records]
    assert any("FAILED" in line for line in lines), lines  # the failing run was logged
    seen += lines
    assert len(seen) > 5
    for text in seen:
        for _, key in (K1, K2, K3):
            assert key not in text
    # Yet the sync keeps them: a sync up encrypts under the first key.
    one.local_upsert(SOUP, dict(local(one)["a"], title="again"))
    one.sync_update("up", target=target_for(kinto_collection, [K3, K2, K1]))
    assert one.resync("up")["status"] == "DONE"
    assert on_server(kinto_collection)["a"]["enc"]["kid"] == "k3"


@pytest.mark.parametrize("member", [
    {"keys": []},
    {"keys": [{"id": "k1", "key": "zz" * 32}]},
    {"keys": [{"id": "k1", "key": "ab" * 31}]},
    {"keys": [{"id": "k1", "key": "ab" * 32}, {"id": "k1", "key": "cd" * 32}]},
    {"keys": [{"id": "cd" * 32, "key": "ab" * 32}]},
    {"keys": [{"id": "k1", "key": "ab" * 32, "extra": 1}]},
    {"keys": [{"id": "k1", "key": "ab" * 32}], "other": True},
    "ab" * 32,
])
def test_a_bad_encryption_member_is_refused_before_anything_is_sent(
    devices: List[tureen.Store], kinto_collection: Dict[str, Any], member: Any
) -> None:
    one = devices[0]
    target = dict(target_for(kinto_collection, [K1]), encryption=member)
    one.local_upsert(SOUP, {"id": "a", "title": "A"})
    with pytest.raises(tureen.InvalidError) as info:
        one.sync_up(target, SOUP, name="up")
    text = str(info.value)
    assert "encryption" in text
    for secret in ("ab" * 31, "cd" * 31, "zz" * 31):
        assert secret not in text
    assert not on_server(kinto_collection) and one.syncs() == []
    with pytest.raises(tureen.InvalidError):
        one.reencrypt(target)


def test_encryption_is_refused_on_a_callback_target(devices: List[tureen.Store]) -> None:
    with pytest.raises(tureen.InvalidError):
        devices[0].sync_down(sync.callback_target("none", encryption={"keys": [{"id": "k1", "key": K1[1]}]}), SOUP)


def test_dict_keys_and_pairs_make_the_same_member() -> None:
    a = sync.kinto_target("http://h/v1", "b", "c", encryption=[K2, K1])
    b = sync.kinto_target("http://h/v1", "b", "c", encryption=[{"id": "k2", "key": K2[1]}, {"id": "k1", "key": K1[1]}])
    assert a == b and a["encryption"]["keys"][0] == {"id": "k2", "key": K2[1]}
    r = sync.rest_target("http://h/records", encryption=[K1])
    assert r["encryption"] == {"keys": [{"id": "k1", "key": K1[1]}]}


def test_a_huge_envelope_is_a_record_error(devices: List[tureen.Store], kinto_collection: Dict[str, Any]) -> None:
    target = target_for(kinto_collection, [K1])
    one, two, _ = devices
    one.local_upsert(SOUP, [{"id": "a", "title": "A"}, {"id": "b", "title": "B"}])
    one.sync_up(target, SOUP, name="up")
    b = on_server(kinto_collection)["b"]
    huge = base64.b64encode(b"\x00" * (3 << 20)).decode()
    kinto_client(kinto_collection).update_record(id="b", data=dict(b, enc=dict(b["enc"], c=huge)))
    state = failed_down(two, target)
    assert state["failedRecordIds"] == ["b"] and set(local(two)) == {"a"}


def test_a_rest_target_naming_its_fields_otherwise_is_refused(devices: List[tureen.Store]) -> None:
    # The envelope keeps "id", "last_modified" and "deleted" in clear: a
    # target whose server names them otherwise would find none of its own.
    for extra in ({"idField": "uid"}, {"modifiedField": "version_ts"}, {"tombstone": {"field": "removed", "value": True}}):
        target = sync.rest_target("http://127.0.0.1:9/items", encryption=[K1], **extra)
        with pytest.raises(tureen.InvalidError, match="encryption needs"):
            devices[0].sync_down(target, SOUP)
    assert devices[0].syncs() == []
