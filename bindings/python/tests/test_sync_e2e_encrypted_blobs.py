"""Blobs on an end-to-end encrypted Kinto target (a target's "encryption",
with kinto-attachment on PostgreSQL; and a rest target's "blobs"): a blob
travels sealed between two
devices, under a keyed name, so the attachment files and the database hold
neither its bytes, nor its digest, nor its type; a file tampered with,
cut at a chunk boundary, swapped for another blob's or grown fails its
record alone as corrupt and stores nothing; reencrypt seals blobs again
under the first key, so a device listing only it opens them all."""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
import subprocess
import urllib.parse
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

import tureen
from tureen import sync

from conftest import new_kinto_collection
from servers import AttachmentKinto, RestServer, postgres_bindir
from sync_support import close_unless_stuck, entries, kinto_client, photo

RAW = "5e" * 32
SOUP = "album"
K1 = ("k1", "11" * 32)
K2 = ("k2", "a2" * 32)
# BlobStream's format: "TRB" 1, chunk size, key id length, key id, salt; then
# chunks of 64 KiB, each followed by its 16-byte tag.
CHUNK = 64 * 1024
TAG = 16


def header_size(key_id: str) -> int:
    return 9 + len(key_id) + 32


def sealed_size(n: int, key_id: str) -> int:
    return header_size(key_id) + n + max(1, -(-n // CHUNK)) * TAG


def server_name(key: Tuple[str, str], digest: str) -> str:
    """The name a blob goes by on the server: HMAC-SHA256 of its digest
    under the target's key (so the server cannot match it to a known file)."""
    return hmac.new(bytes.fromhex(key[1]), b"tureen blob name v1" + digest.encode(), hashlib.sha256).hexdigest()


class Server:
    def __init__(self, attachments: AttachmentKinto) -> None:
        self.attachments = attachments

    def collection(self) -> Dict[str, Any]:
        return new_kinto_collection(self.attachments.kinto)

    def target(self, collection: Dict[str, Any], keys: List[Any]) -> Dict[str, Any]:
        auth = collection["auth"]
        return sync.kinto_target(collection["url"], collection["bucket"], collection["collection"],
                                 user=auth["user"], password=auth["password"], create=True, encryption=keys,
                                 attachments_url=self.attachments.files_url)

    def blob_records(self, collection: Dict[str, Any]) -> Dict[str, Dict[str, Any]]:
        client = kinto_client(dict(collection, collection=collection["collection"] + "-blobs"))
        return {r["id"]: r for r in client.get_records()}

    def file_of(self, collection: Dict[str, Any], name: str) -> Path:
        """The file on disk that the blob record ``name`` points to."""
        location = self.blob_records(collection)[name]["attachment"]["location"]
        path = urllib.parse.urlparse(location).path
        base = urllib.parse.urlparse(self.attachments.files_url).path
        return self.attachments.files_dir / path[len(base):]

    def files(self) -> List[Path]:
        return [p for p in self.attachments.files_dir.rglob("*") if p.is_file()]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with AttachmentKinto(tmp_path_factory.mktemp("sealed-attachments"), backend="postgresql") as attachments:
        yield Server(attachments)


@pytest.fixture
def devices(tmp_path: Path) -> Iterator[List[tureen.Store]]:
    stores = []
    for name in ("one", "two", "three"):
        s = tureen.Store.open(tmp_path / (name + ".db"), raw_key=RAW)
        s.register_soup(SOUP, [("id", "string")])
        stores.append(s)
    try:
        yield stores
    finally:
        for s in stores:
            close_unless_stuck(s)


def local(store: tureen.Store) -> Dict[str, Dict[str, Any]]:
    return {e["id"]: e for e in entries(store, SOUP)}


def failed_down(store: tureen.Store, target: Dict[str, Any], name: str) -> Dict[str, Any]:
    with pytest.raises(tureen.Error) as info:
        store.sync_down(target, SOUP, name=name)
    state = info.value.state  # type: ignore[attr-defined]
    assert state is not None and state["status"] == "FAILED"
    return state


def test_a_blob_travels_sealed_and_the_server_holds_none_of_it(server: Server, devices: List[tureen.Store]) -> None:
    collection = server.collection()
    target = server.target(collection, [K1])
    one, two, _ = devices
    # Several chunks and a partial last one; and an empty blob.
    data = photo(3 * CHUNK + 1000, "sealed-holiday")
    ref = one.blob_put(data, "image/png")
    empty = one.blob_put(b"", "text/x-empty-marker")
    one.local_upsert(SOUP, [{"id": "p1", "photo": ref}, {"id": "p2", "nothing": empty}])
    up = one.sync_up(target, SOUP, name="up")
    assert up["status"] == "DONE" and up["blobs"] == 2

    down = two.sync_down(target, SOUP, name="down")
    assert down["status"] == "DONE" and down["blobs"] == 2
    assert local(two)["p1"]["photo"] == ref and two.blob_get(ref) == data
    assert local(two)["p2"]["nothing"] == empty and two.blob_get(empty) == b""

    # On the server: each blob a record named by its keyed name, holding
    # the sealed bytes as an opaque file of the sealed size.
    records = server.blob_records(collection)
    digests = {r["digest"].split("-")[1] for r in (ref, empty)}
    assert set(records) == {server_name(K1, ref["digest"]), server_name(K1, empty["digest"])}
    photo_record = records[server_name(K1, ref["digest"])]
    attachment = photo_record["attachment"]
    assert attachment["size"] == sealed_size(len(data), "k1")
    assert attachment["mimetype"] == "application/octet-stream"
    assert attachment["filename"] == server_name(K1, ref["digest"]) + ".bin"
    sealed = server.file_of(collection, server_name(K1, ref["digest"])).read_bytes()
    assert len(sealed) == sealed_size(len(data), "k1") and sealed[:4] == b"TRB\x01"
    assert attachment["hash"] == hashlib.sha256(sealed).hexdigest()

    # No file holds a piece of the plaintext, and no file name, file or
    # record the digest of a blob, or its type.
    pieces = [data[i:i + 32] for i in range(0, len(data), 4096)]
    for f in server.files():
        content = f.read_bytes()
        assert not any(p in content for p in pieces), f
        for d in digests:
            assert d not in f.name and d.encode() not in content
    dump = subprocess.run([str(postgres_bindir() / "pg_dump"), "-d", str(server.attachments.kinto.dsn)],
                          capture_output=True, text=True, timeout=120, check=True).stdout
    assert server_name(K1, ref["digest"]) in dump and collection["collection"] in dump
    for plain in list(digests) + ["image/png", "text/x-empty-marker"]:
        assert plain not in dump


def test_a_lazy_sync_opens_the_blob_on_first_read(server: Server, devices: List[tureen.Store]) -> None:
    collection = server.collection()
    target = server.target(collection, [K1])
    one, two, _ = devices
    data = photo(CHUNK + 7, "lazy-sealed")
    ref = one.blob_put(data, "image/jpeg")
    one.local_upsert(SOUP, {"id": "p1", "photo": ref})
    one.sync_up(target, SOUP, name="up")
    down = two.sync_down(target, SOUP, name="down", blobs="lazy")
    assert down["status"] == "DONE" and down["blobs"] == 0 and two.blob_info(ref) is None
    # Its first read opens it: altered on the server, the read fails and
    # nothing is stored; put back, the next read opens it.
    sealed_file = server.file_of(collection, server_name(K1, ref["digest"]))
    sealed = sealed_file.read_bytes()
    sealed_file.write_bytes(sealed[:-1] + bytes([sealed[-1] ^ 1]))
    with pytest.raises(tureen.CorruptError, match="does not decrypt at chunk 1"):
        two.blob_get(ref)
    assert two.blob_info(ref) is None
    sealed_file.write_bytes(sealed)
    assert two.blob_get(ref) == data


def test_a_hostile_server_s_blobs_fail_their_records_alone(server: Server, devices: List[tureen.Store]) -> None:
    collection = server.collection()
    target = server.target(collection, [K1])
    one, two, three = devices
    # Two blobs of the same length: one can stand in for the other.
    first, second = photo(2 * CHUNK + 100, "first"), photo(2 * CHUNK + 100, "second")
    ref1, ref2 = one.blob_put(first, "image/png"), one.blob_put(second, "image/png")
    one.local_upsert(SOUP, [{"id": "a", "photo": ref1}, {"id": "b", "photo": ref2}, {"id": "c", "title": "no blob"}])
    assert one.sync_up(target, SOUP, name="up")["blobs"] == 2
    file1 = server.file_of(collection, server_name(K1, ref1["digest"]))
    file2 = server.file_of(collection, server_name(K1, ref2["digest"]))
    sealed1, sealed2 = file1.read_bytes(), file2.read_bytes()

    def check(name: str, bytes1: bytes, message: str, store: tureen.Store = two) -> None:
        file1.write_bytes(bytes1)
        state = failed_down(store, target, name)
        assert state["failedRecordIds"] == ["a"], state
        (error,) = state["recordErrors"]
        assert error["id"] == "a" and error["status"] == "CORRUPT", error
        assert ref1["digest"] in error["error"] and message in error["error"], error
        assert store.blob_info(ref1) is None
        assert "a" not in local(store) and set(local(store)) >= {"b", "c"}
        assert store.blob_get(ref2) == second

    # A byte altered in the second chunk.
    altered = bytearray(sealed1)
    altered[header_size("k1") + CHUNK + TAG + 10] ^= 1
    check("altered", bytes(altered), "does not decrypt at chunk 1")
    # Cut after its first chunk: every chunk there authenticates, but the
    # last one is missing.
    check("truncated", sealed1[:header_size("k1") + CHUNK + TAG], "does not decrypt")
    # The other blob's ciphertext, sealed under the same key: it opens,
    # but to other bytes than the record refers to.
    check("swapped", sealed2, "other bytes than the record refers to")
    # Grown past what a blob of its length can be sealed to.
    check("huge", sealed1 + bytes(3 << 20), "more bytes than it holds sealed", store=three)
    # Its header rewritten to a chunk size that would make the device buffer a lot.
    big = bytearray(sealed1)
    big[4:8] = (1 << 30).to_bytes(4, "big")
    check("chunk-size", bytes(big), "impossible chunk size", store=three)

    # Put back as it was, the blob and its record come.
    file1.write_bytes(sealed1)
    assert two.sync_down(target, SOUP, name="again")["status"] == "DONE"
    assert two.blob_get(ref1) == first and local(two)["a"]["photo"] == ref1


def test_a_damaged_blob_key_on_this_device_fails_the_sync_not_the_record(server: Server, devices: List[tureen.Store],
                                                                         tmp_path: Path) -> None:
    collection = server.collection()
    target = server.target(collection, [K1])
    one = devices[0]
    data = photo(CHUNK + 3, "local-fault")
    ref = one.blob_put(data, "image/png")
    one.local_upsert(SOUP, [{"id": "a", "photo": ref}, {"id": "b", "title": "no blob"}])
    assert one.sync_up(target, SOUP, name="up")["blobs"] == 1

    # This device's own blob key damaged (an unencrypted store, so the
    # test can reach its row): TUREEN_E_CORRUPT, but none of the server's doing.
    path = tmp_path / "plain.db"
    plain = tureen.Store.open(path, unencrypted=True)
    plain.register_soup(SOUP, [("id", "string")])
    plain.blob_put(b"makes the blob tables", "text/plain")
    plain.close()
    with sqlite3.connect(str(path)) as db:
        (key,) = db.execute("SELECT key FROM tureen_blob_key").fetchone()
        db.execute("UPDATE tureen_blob_key SET key = x'00'")
    plain = tureen.Store.open(path, unencrypted=True)
    try:
        with pytest.raises(tureen.CorruptError, match="the store's blob key is damaged") as info:
            plain.sync_down(target, SOUP, name="down")
        state = info.value.state  # type: ignore[attr-defined]
        assert state is not None and state["status"] == "FAILED"
        assert state["failedRecordIds"] == [] and state["recordErrors"] == [], state
        assert local(plain) == {}
        plain.close()
        # Mended, the same sync brings the record and its blob: nothing was skipped.
        with sqlite3.connect(str(path)) as db:
            db.execute("UPDATE tureen_blob_key SET key = ?", (key,))
        plain = tureen.Store.open(path, unencrypted=True)
        assert plain.sync_down(target, SOUP, name="down")["status"] == "DONE"
        assert set(local(plain)) == {"a", "b"} and plain.blob_get(ref) == data
    finally:
        close_unless_stuck(plain)


def test_a_record_giving_a_blob_an_impossible_length_fails_alone(server: Server, devices: List[tureen.Store]) -> None:
    collection = server.collection()
    target = server.target(collection, [K1])
    one, two, _ = devices
    data = photo(CHUNK + 5, "impossible")
    ref = one.blob_put(data, "image/png")
    one.local_upsert(SOUP, [{"id": "a", "photo": ref}, {"id": "b", "title": "no blob"}])
    assert one.sync_up(target, SOUP, name="up")["blobs"] == 1

    # What a record sealed by a hostile key holder could say once opened
    # (a transformer decodes after decryption): a length whose sealed size
    # does not fit in 64 bits.
    def grow(record: Dict[str, Any]) -> Dict[str, Any]:
        if "photo" in record:
            record["photo"] = dict(record["photo"], length=(1 << 63) - 1)
        return record

    two.register_transformer("grow", lambda r: r, grow)
    state = failed_down(two, dict(target, transformers=["grow"]), "down")
    assert state["failedRecordIds"] == ["a"], state
    (error,) = state["recordErrors"]
    assert error["id"] == "a" and error["status"] == "CORRUPT", error
    assert ref["digest"] in error["error"] and "more than any blob holds" in error["error"], error
    assert two.blob_info(ref) is None
    assert set(local(two)) == {"b"}


def reencrypt(store: tureen.Store, target: Dict[str, Any]) -> Dict[str, Any]:
    """tureen_reencrypt's whole answer (the binding returns its count of records)."""
    from tureen._library import call_for_string, lib
    with store._use(serving=True) as handle:  # type: ignore[attr-defined]
        answer: Dict[str, Any] = json.loads(call_for_string(lib.tureen_reencrypt, handle, json.dumps(target).encode()))
    return answer


def test_reencrypt_seals_blobs_again_under_the_first_key(server: Server, devices: List[tureen.Store],
                                                         tmp_path: Path) -> None:
    collection = server.collection()
    old, rotated, only_new = (server.target(collection, keys) for keys in ([K1], [K2, K1], [K2]))
    one, two, three = devices
    files_before = set(server.files())
    before = photo(CHUNK + 5, "before rotation")
    ref1 = one.blob_put(before, "image/png")
    one.local_upsert(SOUP, {"id": "a", "photo": ref1})
    assert one.sync_up(old, SOUP, name="up")["blobs"] == 1

    # Device two lists the new key first: it reads the old blob, seals its
    # own under the new key, under the new key's name, and writes a record
    # (under the new key) that refers to the old blob, which stays under
    # the old key's name.
    assert two.sync_down(rotated, SOUP, name="down")["status"] == "DONE"
    assert two.blob_get(ref1) == before
    after = photo(CHUNK + 6, "after rotation")
    ref2 = two.blob_put(after, "image/png")
    two.local_upsert(SOUP, [{"id": "b", "photo": ref2}, {"id": "c", "photo": ref1}])
    assert two.sync_up(rotated, SOUP, name="up")["blobs"] == 1
    assert set(server.blob_records(collection)) == {server_name(K1, ref1["digest"]), server_name(K2, ref2["digest"])}
    old_file = server.file_of(collection, server_name(K1, ref1["digest"]))
    assert old_file.read_bytes()[9:11] == b"k1"

    # A device that does not hold the old blob seals every record and blob
    # again under the new key (fetching the blob under the old key's name)
    # and removes the old-named one; a second call finds nothing to do.
    assert reencrypt(three, rotated) == {"reencrypted": 1, "skipped": 0, "blobs": 1}
    names = {server_name(K2, ref1["digest"]), server_name(K2, ref2["digest"])}
    assert set(server.blob_records(collection)) == names
    assert not old_file.exists()
    files = set(server.files()) - files_before
    assert files == {server.file_of(collection, n) for n in names}
    for f in files:
        sealed = f.read_bytes()
        assert sealed[:4] == b"TRB\x01" and sealed[8:11] == b"\x02k2"
    assert reencrypt(three, rotated) == {"reencrypted": 0, "skipped": 0, "blobs": 0}

    # A device that lists only the new key syncs every record and every blob.
    with tureen.Store.open(tmp_path / "four.db", raw_key=RAW) as four:
        four.register_soup(SOUP, [("id", "string")])
        down = four.sync_down(only_new, SOUP, name="down")
        assert down["status"] == "DONE" and down["blobs"] == 2
        assert {k: v["photo"] for k, v in local(four).items()} == {"a": ref1, "b": ref2, "c": ref1}
        assert four.blob_get(ref1) == before and four.blob_get(ref2) == after


@pytest.fixture
def open_shelf() -> Iterator[RestServer]:
    """A REST API holding blobs under any name (no key needed), whose
    records are not used: records go to Kinto."""
    rest = RestServer(api_key=None)
    rest.blobs.checks_names = False
    rest.start()
    try:
        yield rest
    finally:
        rest.stop()


def test_a_rest_target_s_blobs_travel_sealed(devices: List[tureen.Store], kinto_collection: Dict[str, Any],
                                             open_shelf: RestServer) -> None:
    # Kinto's records API declared as a plain REST target, its blobs on
    # another server by URL template.
    records_url = "%s/buckets/%s/collections/%s/records" % (
        kinto_collection["url"], kinto_collection["bucket"], kinto_collection["collection"])
    auth = kinto_collection["auth"]
    target = sync.rest_target(
        records_url, encryption=[K1], auth={"user": auth["user"], "password": auth["password"]},
        recordsPath="data", recordPath="data", since={"param": "_since"},
        sort={"param": "_sort", "value": "last_modified"}, nextPage={"header": "Next-Page"},
        tombstone={"field": "deleted", "value": True},
        blobs={"url": open_shelf.url + "/api/blobs/{hex}"})
    one, two, _ = devices
    data = photo(2 * CHUNK + 3, "rest-sealed")
    ref = one.blob_put(data, "image/webp")
    one.local_upsert(SOUP, {"id": "p1", "photo": ref})
    assert one.sync_up(target, SOUP, name="up")["blobs"] == 1

    name = server_name(K1, ref["digest"])
    ((held_name, (held, content_type)),) = open_shelf.blobs.items().items()
    assert held_name == name and content_type == "application/octet-stream"
    assert len(held) == sealed_size(len(data), "k1") and data[:64] not in held and data[-64:] not in held

    down = two.sync_down(target, SOUP, name="down")
    assert down["status"] == "DONE" and down["blobs"] == 1
    assert local(two)["p1"]["photo"] == ref and two.blob_get(ref) == data

    # Cut at the chunk boundary before the last: refused, nothing stored.
    open_shelf.blobs.hold(name, held[:header_size("k1") + 2 * (CHUNK + TAG)])
    state = failed_down(devices[2], target, "cut")
    assert state["failedRecordIds"] == ["p1"] and state["recordErrors"][0]["status"] == "CORRUPT"
    assert "does not decrypt at chunk 1" in state["recordErrors"][0]["error"]


def test_reencrypt_seals_a_rest_target_s_blobs_again(devices: List[tureen.Store], kinto_collection: Dict[str, Any],
                                                     open_shelf: RestServer) -> None:
    records_url = "%s/buckets/%s/collections/%s/records" % (
        kinto_collection["url"], kinto_collection["bucket"], kinto_collection["collection"])
    auth = kinto_collection["auth"]

    def target(keys: List[Any]) -> Dict[str, Any]:
        return sync.rest_target(
            records_url, encryption=keys, auth={"user": auth["user"], "password": auth["password"]},
            recordsPath="data", recordPath="data", since={"param": "_since"},
            sort={"param": "_sort", "value": "last_modified"}, nextPage={"header": "Next-Page"},
            tombstone={"field": "deleted", "value": True},
            blobs={"url": open_shelf.url + "/api/blobs/{hex}"})
    one, two, _ = devices
    data = photo(CHUNK + 7, "rest-rotated")
    ref = one.blob_put(data, "image/webp")
    one.local_upsert(SOUP, {"id": "p1", "photo": ref})
    assert one.sync_up(target([K1]), SOUP, name="up")["blobs"] == 1

    # The shelf deletes no blob (405): the old-named one is kept, the new one added.
    assert reencrypt(one, target([K2, K1])) == {"reencrypted": 1, "skipped": 0, "blobs": 1}
    held = open_shelf.blobs.items()
    assert set(held) == {server_name(K1, ref["digest"]), server_name(K2, ref["digest"])}
    assert held[server_name(K2, ref["digest"])][0][8:11] == b"\x02k2"

    down = two.sync_down(target([K2]), SOUP, name="down")
    assert down["status"] == "DONE" and down["blobs"] == 1
    assert local(two)["p1"]["photo"] == ref and two.blob_get(ref) == data
