"""Remote transformers (kinto.js's) on a real Kinto: two devices, the server
holding the encoded form, the order of several transformers, tombstones,
a record a transformer fails on, merge modes, and registration."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from tureen import sync

from sync_support import close_unless_stuck, entries, is_clean, kinto_client, kinto_fields

RAW = "7d" * 32
SOUP = "notes"
SERVER_FIELDS = ("id", "last_modified", "deleted")


class Seal:
    """A stand-in for encryption: a record's own fields travel as one opaque
    "sealed" member; the server sees no field name or value."""

    def __init__(self) -> None:
        self.encoded: List[Dict[str, Any]] = []
        self.decoded: List[Dict[str, Any]] = []
        self.refuse: set = set()

    def encode(self, record: Dict[str, Any]) -> Dict[str, Any]:
        self.encoded.append(dict(record))
        if record.get("name") in self.refuse:
            raise ValueError("will not encode %r" % record["name"])
        own = {k: v for k, v in record.items() if k not in SERVER_FIELDS}
        out = {k: v for k, v in record.items() if k in SERVER_FIELDS}
        out["sealed"] = base64.b64encode(json.dumps(own, sort_keys=True).encode()).decode()
        return out

    def decode(self, record: Dict[str, Any]) -> Dict[str, Any]:
        self.decoded.append(dict(record))
        if "sealed" not in record:
            if record.get("deleted"):
                return record
            raise ValueError("record %r is not sealed" % record.get("id"))
        own = json.loads(base64.b64decode(record["sealed"]))
        out = {k: v for k, v in record.items() if k in SERVER_FIELDS}
        out.update(own)
        return out


def open_device(path: Path, seal: Seal) -> tureen.Store:
    s = tureen.Store.open(path, raw_key=RAW)
    s.register_soup(SOUP, [("id", "string"), ("name", "string")])
    s.register_transformer("seal", seal.encode, seal.decode)
    return s


@pytest.fixture
def seal() -> Seal:
    return Seal()


@pytest.fixture
def devices(tmp_path: Path, seal: Seal) -> Iterator[List[tureen.Store]]:
    stores = [open_device(tmp_path / "one.db", seal), open_device(tmp_path / "two.db", seal)]
    try:
        yield stores
    finally:
        for s in stores:
            close_unless_stuck(s)


@pytest.fixture
def target(kinto_collection: Dict[str, Any]) -> Dict[str, Any]:
    return sync.kinto_target(kinto_collection["url"], kinto_collection["bucket"], kinto_collection["collection"],
                             user=kinto_collection["auth"]["user"], password=kinto_collection["auth"]["password"],
                             transformers=["seal"])


def on_server(kinto_collection: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
    return {r["id"]: r for r in kinto_client(kinto_collection).get_records()}


def local(store: tureen.Store) -> Dict[str, Dict[str, Any]]:
    return {e["id"]: e for e in entries(store, SOUP)}


def test_two_devices_see_decoded_records_and_the_server_the_encoded_form(
    devices: List[tureen.Store], seal: Seal, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    one, two = devices
    one.local_upsert(SOUP, [{"id": "n1", "name": "Alice", "phone": "555-0101"}, {"id": "n2", "name": "Bob"}])
    assert one.sync_up(target, SOUP, name="up")["status"] == "DONE"

    server = on_server(kinto_collection)
    assert set(server) == {"n1", "n2"}
    for record in server.values():
        assert set(record) == {"id", "last_modified", "sealed"}, record
    assert "Alice" not in json.dumps(server) and "phone" not in json.dumps(server)
    # Device one keeps what it wrote, in step with the server.
    mine = local(one)
    assert kinto_fields(mine["n1"]) == {"id": "n1", "name": "Alice", "phone": "555-0101"} and is_clean(mine["n1"])

    assert two.sync_down(target, SOUP, name="down")["status"] == "DONE"
    theirs = local(two)
    assert kinto_fields(theirs["n1"]) == {"id": "n1", "name": "Alice", "phone": "555-0101"}
    assert kinto_fields(theirs["n2"]) == {"id": "n2", "name": "Bob"} and is_clean(theirs["n2"])

    # An update from device two reaches device one decoded.
    two.local_upsert(SOUP, dict(theirs["n2"], name="Bobby"))
    assert two.sync_up(target, SOUP, name="up")["status"] == "DONE"
    assert "Bobby" not in json.dumps(on_server(kinto_collection))
    one.sync_down(target, SOUP, name="down")
    assert local(one)["n2"]["name"] == "Bobby"

    # A deletion: encoded as its tombstone on the way up, decoded on the way down.
    seal.encoded.clear()
    seal.decoded.clear()
    two.local_delete(SOUP, [theirs["n1"]["_soupEntryId"]])
    assert two.sync_up(target, SOUP, name="up")["status"] == "DONE"
    assert {"id": "n1", "deleted": True} in seal.encoded
    assert one.resync("down")["status"] == "DONE"
    assert "n1" not in local(one) and "n2" in local(one)
    assert any(r.get("id") == "n1" and r.get("deleted") is True for r in seal.decoded), seal.decoded


def test_several_transformers_encode_in_order_and_decode_in_reverse(
    tmp_path: Path, kinto_collection: Dict[str, Any]
) -> None:
    def wrap(letter: str) -> Any:
        def encode(record: Dict[str, Any]) -> Dict[str, Any]:
            return dict(record, name="%s(%s)" % (letter, record["name"])) if "name" in record else record

        def decode(record: Dict[str, Any]) -> Dict[str, Any]:
            if "name" not in record:
                return record
            name = record["name"]
            if not (name.startswith(letter + "(") and name.endswith(")")):
                raise ValueError("%s cannot decode %r" % (letter, name))
            return dict(record, name=name[2:-1])

        return encode, decode

    target = dict(kinto_collection, type="kinto", transformers=["a", "b"])
    stores = []
    for n in ("one", "two"):
        s = tureen.Store.open(tmp_path / (n + ".db"), raw_key=RAW)
        s.register_soup(SOUP, [("id", "string"), ("name", "string")])
        s.register_transformer("a", *wrap("A"))
        s.register_transformer("b", *wrap("B"))
        stores.append(s)
    try:
        stores[0].local_upsert(SOUP, {"id": "x", "name": "plain"})
        stores[0].sync_up(target, SOUP)
        assert on_server(kinto_collection)["x"]["name"] == "B(A(plain))"
        assert local(stores[0])["x"]["name"] == "plain"
        assert stores[1].sync_down(target, SOUP)["status"] == "DONE"
        assert local(stores[1])["x"]["name"] == "plain"
    finally:
        for s in stores:
            s.close()


def test_an_encode_error_fails_that_record_alone_and_a_later_sync_sends_it(
    devices: List[tureen.Store], seal: Seal, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    one = devices[0]
    seal.refuse.add("secret")
    one.local_upsert(SOUP, [{"id": "ok", "name": "fine"}, {"id": "no", "name": "secret"}])
    bad = local(one)["no"]
    with pytest.raises(tureen.HTTPError) as info:
        one.sync_up(target, SOUP, name="up")
    state = info.value.state
    assert state is not None and state["status"] == "FAILED"
    assert state["failed"] == 1 and state["failedIds"] == [bad["_soupEntryId"]] and state["synced"] == 1
    (error,) = state["recordErrors"]
    assert error["id"] == "no" and error["operation"] == "create"
    assert "seal" in error["error"] and "will not encode" in error["error"]
    assert error["status"] == "INTERNAL"  # a ValueError, not a tureen.Error
    assert set(on_server(kinto_collection)) == {"ok"}
    assert local(one)["no"]["__locally_created__"] is True and local(one)["no"].get("__last_error__")

    seal.refuse.clear()
    assert one.resync("up")["status"] == "DONE"
    assert set(on_server(kinto_collection)) == {"ok", "no"}
    assert is_clean(local(one)["no"])


def test_a_decode_error_fails_that_record_alone_on_sync_down(
    devices: List[tureen.Store], seal: Seal, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    other = kinto_client(kinto_collection)
    good = seal.encode({"id": "good", "name": "readable"})
    with other.batch() as batch:
        batch.create_record(id="good", data=good)
        batch.create_record(id="bad", data={"id": "bad", "name": "never sealed"})
    with pytest.raises(tureen.HTTPError) as info:
        devices[1].sync_down(target, SOUP, name="down")
    state = info.value.state
    assert state is not None and state["status"] == "FAILED"
    assert state["failedRecordIds"] == ["bad"] and state["failed"] == 1
    (error,) = state["recordErrors"]
    assert error["id"] == "bad" and error["entryId"] is None and "not sealed" in error["error"]
    assert error["status"] == "INTERNAL"
    assert set(local(devices[1])) == {"good"} and local(devices[1])["good"]["name"] == "readable"


def test_a_network_error_of_a_transformer_is_retried(
    devices: List[tureen.Store], seal: Seal, target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    calls = []

    def flaky(record: Dict[str, Any]) -> Dict[str, Any]:
        calls.append(record["id"])
        if len(calls) == 1:
            raise tureen.NetworkError("the key server is away")
        return seal.encode(record)

    one = devices[0]
    one.register_transformer("seal", flaky, seal.decode)
    one.local_upsert(SOUP, {"id": "r", "name": "again"})
    assert one.sync_up(target, SOUP)["status"] == "DONE"
    assert calls == ["r", "r"]
    assert "sealed" in on_server(kinto_collection)["r"]


def test_leave_if_changed_keeps_a_decoded_theirs(
    devices: List[tureen.Store], target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    one, two = devices
    one.local_upsert(SOUP, {"id": "c", "name": "first"})
    one.sync_up(target, SOUP, name="up")
    two.sync_down(target, SOUP, name="down")
    two.local_upsert(SOUP, dict(local(two)["c"], name="from two"))
    two.sync_up(target, SOUP, name="up")

    one.local_upsert(SOUP, dict(local(one)["c"], name="from one"))
    state = one.sync_up(target, SOUP, name="leave", merge_mode=sync.LEAVE_IF_CHANGED)
    assert state["status"] == "DONE" and state["conflicts"] == 1
    (conflict,) = one.conflicts(SOUP)
    assert kinto_fields(conflict["theirs"]) == {"id": "c", "name": "from two"}
    assert kinto_fields(conflict["base"]) == {"id": "c", "name": "first"}
    assert conflict["conflictingChanges"] == ["name"]
    server = on_server(kinto_collection)["c"]
    assert set(server) == {"id", "last_modified", "sealed"} and "from" not in json.dumps(server)


def test_merge_accept_yours_merges_decoded_fields(
    devices: List[tureen.Store], target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    one, two = devices
    one.local_upsert(SOUP, {"id": "m", "name": "n0", "city": "c0"})
    one.sync_up(target, SOUP, name="up")
    two.sync_down(target, SOUP, name="down")
    two.local_upsert(SOUP, dict(local(two)["m"], city="c-two"))
    two.sync_up(target, SOUP, name="up")

    one.local_upsert(SOUP, dict(local(one)["m"], name="n-one"))
    assert one.sync_up(target, SOUP, name="yours", merge_mode=sync.MERGE_ACCEPT_YOURS)["status"] == "DONE"
    two.resync("down")
    assert kinto_fields(local(two)["m"]) == {"id": "m", "name": "n-one", "city": "c-two"}
    assert set(on_server(kinto_collection)["m"]) == {"id", "last_modified", "sealed"}


def test_a_fieldlist_update_keeps_the_servers_other_fields(
    devices: List[tureen.Store], target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    one, two = devices
    one.local_upsert(SOUP, {"id": "f", "name": "n0", "city": "c0"})
    one.sync_up(target, SOUP, name="up")
    one.local_upsert(SOUP, dict(local(one)["f"], name="n1", city="c-local"))
    assert one.sync_up(target, SOUP, name="names", fieldlist=["name"])["status"] == "DONE"
    two.sync_down(target, SOUP, name="down")
    assert kinto_fields(local(two)["f"]) == {"id": "f", "name": "n1", "city": "c0"}
    assert set(on_server(kinto_collection)["f"]) == {"id", "last_modified", "sealed"}


def test_a_cached_fetch_reads_decoded_records(
    devices: List[tureen.Store], target: Dict[str, Any], kinto_collection: Dict[str, Any]
) -> None:
    one = devices[0]
    one.local_upsert(SOUP, [{"id": "k1", "name": "cached"}, {"id": "k2", "name": "also"}])
    one.sync_up(target, SOUP)
    single = one.cached_fetch(target, id="k1")
    assert single["source"] == "server" and kinto_fields(single["data"]) == {"id": "k1", "name": "cached"}
    listing = one.cached_fetch(target, query={"_sort": "id"})
    assert [kinto_fields(r) for r in listing["data"]] == [{"id": "k1", "name": "cached"}, {"id": "k2", "name": "also"}]


def test_an_unregistered_transformer_is_not_found_before_anything_is_sent(
    devices: List[tureen.Store], kinto_collection: Dict[str, Any]
) -> None:
    one = devices[0]
    one.local_upsert(SOUP, {"id": "z", "name": "stays"})
    target = dict(kinto_collection, type="kinto", transformers=["seal", "missing"])
    with pytest.raises(tureen.NotFoundError) as info:
        one.sync_up(target, SOUP, name="up")
    assert "missing" in str(info.value)
    assert on_server(kinto_collection) == {}
    with pytest.raises(tureen.NotFoundError):
        one.sync_status("up")


def test_remove_transformer(devices: List[tureen.Store], target: Dict[str, Any]) -> None:
    one = devices[0]
    one.remove_transformer("seal")
    with pytest.raises(tureen.NotFoundError):
        one.remove_transformer("seal")
    one.local_upsert(SOUP, {"id": "q", "name": "kept"})
    with pytest.raises(tureen.NotFoundError):
        one.sync_up(target, SOUP)
    with pytest.raises(TypeError):
        one.register_transformer("seal", "not callable", lambda r: r)  # type: ignore[arg-type]
    with pytest.raises(tureen.InvalidError):
        one.register_transformer("bad name!", lambda r: r, lambda r: r)


def test_transformers_are_only_for_http_targets(devices: List[tureen.Store]) -> None:
    with pytest.raises(tureen.InvalidError):
        devices[0].sync_down(sync.callback_target("host", transformers=["seal"]), SOUP)
