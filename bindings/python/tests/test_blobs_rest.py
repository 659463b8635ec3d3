"""Blobs synced with a plain REST API (servers.RestServer's /api/blobs and
/api/uploads, see rest_blobs.py) through a "rest" target's "blobs" member:
each blob uploaded once, before the record that refers to it, by PUT or by
a multipart form; fetched eagerly or on first read; credentials kept to the
target's origin; a server that sends other bytes, or more, is refused."""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

import tureen
from conftest import run_python
from servers import RestServer, wait_until
from sync_support import close_unless_stuck, photo, rest_target

RAW_KEY = bytes(range(32))


def hex_of(ref: Dict[str, Any]) -> str:
    return str(ref["digest"])[len("sha256-"):]


@pytest.fixture
def devices(tmp_path: Path) -> Iterator[List[tureen.Store]]:
    stores = []
    try:
        for name in ("desk", "home"):
            s = tureen.Store.open(str(tmp_path / (name + ".tureen")), raw_key=RAW_KEY)
            stores.append(s)
            s.register_soup("items", [{"path": "uid", "type": "string"}])
        yield stores
    finally:
        for s in stores:
            close_unless_stuck(s)


def blob_target(server: RestServer, timeout_ms: int = 30000, max_retries: int = 5, **blobs: Any) -> Dict[str, Any]:
    return rest_target(server, timeout_ms=timeout_ms, max_retries=max_retries,
                       blobs=dict({"url": server.url + "/api/blobs/{hex}"}, **blobs))


def share(desk: tureen.Store, data: bytes, uid: str = "n1", content_type: str = "image/jpeg") -> Dict[str, Any]:
    ref = desk.blob_put(data, content_type)
    desk.local_upsert("items", {"uid": uid, "title": "beach", "photo": ref})
    return ref


def test_two_devices_exchange_a_photo(rest_server: RestServer, devices: List[tureen.Store]) -> None:
    desk, home = devices
    target = blob_target(rest_server)
    jpeg = photo(700 * 1024, "holiday")
    ref = share(desk, jpeg)
    up = desk.sync_up(target, "items")
    assert up["status"] == "DONE" and up["blobs"] == 1 and up["blobBytes"] == len(jpeg)
    assert rest_server.blobs.get(hex_of(ref)) == jpeg

    # Asked for, then put, before the record that refers to it; with the
    # target's key (the same origin) and the blob's type.
    blob_path = "/api/blobs/" + hex_of(ref)
    order = [(r.method, r.path) for r in rest_server.requests() if r.method != "GET"]
    assert order[:3] == [("HEAD", blob_path), ("PUT", blob_path), ("PUT", "/api/items/n1")], order
    (put,) = rest_server.requests("PUT", blob_path)
    assert put.header("X-Api-Key") == "secret" and put.header("Content-Type") == "image/jpeg"

    down = home.sync_down(target, "items")
    assert down["status"] == "DONE" and down["blobs"] == 1 and down["blobBytes"] == len(jpeg)
    (note,) = home.query(tureen.query.all("items"), 0)
    assert note["photo"] == ref and home.blob_get(note["photo"]) == jpeg

    # Sent once: a second record with the same photo uploads nothing.
    rest_server.clear_log()
    desk.local_upsert("items", {"uid": "n2", "photo": ref})
    assert desk.sync_up(target, "items")["blobs"] == 0
    assert rest_server.request_count("HEAD", blob_path) == 1 and rest_server.request_count("PUT", blob_path) == 0


def test_multipart_upload_to_a_separate_url(rest_server: RestServer, devices: List[tureen.Store]) -> None:
    desk, home = devices
    target = blob_target(rest_server, uploadUrl=rest_server.url + "/api/uploads", upload="multipart", check=False)
    data = photo(200 * 1024, "form")
    ref = share(desk, data, content_type="application/pdf")
    assert desk.sync_up(target, "items")["blobs"] == 1
    assert rest_server.blobs.get(hex_of(ref)) == data
    assert rest_server.request_count("HEAD", "/api/blobs") == 0  # "check": false
    (post,) = rest_server.requests("POST", "/api/uploads")
    assert post.header("Content-Type", "").startswith("multipart/form-data; boundary=")
    assert home.sync_down(target, "items")["blobs"] == 1
    assert home.blob_get(ref) == data


def test_a_lazy_sync_fetches_on_first_read(rest_server: RestServer, devices: List[tureen.Store]) -> None:
    desk, home = devices
    target = blob_target(rest_server)
    data = photo(300 * 1024, "lazy")
    ref = share(desk, data)
    desk.sync_up(target, "items")
    down = home.sync_down(target, "items", blobs="lazy")
    assert down["status"] == "DONE" and down["blobs"] == 0 and home.blob_info(ref) is None
    assert rest_server.request_count("GET", "/api/blobs") == 0
    with home.blob_open(ref) as f:
        assert f.read() == data
    assert rest_server.request_count("GET", "/api/blobs") == 1
    assert home.blob_fetch(ref) is False  # stored now


@pytest.mark.parametrize("connections", [1, 2])
@pytest.mark.parametrize("check", [True, False])
def test_an_edit_whose_blob_a_lazy_sync_awaits_is_sent(rest_server: RestServer, devices: List[tureen.Store],
                                                       check: bool, connections: int) -> None:
    """A lazy sync down left the blob on the server and the record is
    edited here: there is nothing to upload, so the edit goes without the
    blob being fetched (with "check": false too, the server is asked about
    that blob alone). Once the server has lost the blob, that record alone
    fails, and the others still go."""
    desk, home = devices
    target = dict(blob_target(rest_server, check=check), upload_connections=connections)
    ref = share(desk, photo(50 * 1024, "awaited"))
    desk.sync_up(target, "items")
    home.sync_down(target, "items", blobs="lazy")
    (note,) = home.query(tureen.query.all("items"), 0)
    home.local_upsert("items", dict(note, title="edited"))
    up = home.sync_up(target, "items")
    assert up["status"] == "DONE" and up["synced"] == 1 and up["blobs"] == 0
    assert rest_server.get_record("n1")["title"] == "edited"
    assert rest_server.request_count("PUT", "/api/blobs/") == 1  # desk's upload only
    assert home.blob_info(ref) is None and rest_server.request_count("GET", "/api/blobs/") == 0

    rest_server.blobs.remove(hex_of(ref))
    (note,) = home.query(tureen.query.all("items"), 0)
    home.local_upsert("items", [dict(note, title="edited again"), {"uid": "n2", "title": "no photo"}])
    with pytest.raises(tureen.HTTPError, match=r"1 record\(s\) failed") as info:
        home.sync_up(target, "items")
    (why,) = info.value.state["recordErrors"]  # type: ignore[attr-defined]
    assert why["id"] == "n1" and "neither stored here" in why["error"] and "nor on the server" in why["error"]
    assert rest_server.get_record("n1")["title"] == "edited" and rest_server.get_record("n2") is not None


def test_a_parallel_sync_up_records_held_back_changes_in_their_batchs_turn(
        rest_server: RestServer, devices: List[tureen.Store], caplog: pytest.LogCaptureFixture) -> None:
    """Over two connections (a batch per record here), n1's edit is held
    back (its blob, awaited by a lazy sync, is gone from the server): its
    failure is recorded in its batch's turn, after n0's answer before it,
    as a serial sync records it, and its batch, with nothing left to send,
    is not submitted: no empty commit of the state alone."""
    desk, home = devices
    target = dict(blob_target(rest_server), upload_connections=2)
    desk.local_upsert("items", {"uid": "n0", "title": "no photo"})
    ref = share(desk, photo(30 * 1024, "gone"))
    desk.sync_up(target, "items")
    home.sync_down(target, "items", blobs="lazy")
    rest_server.blobs.remove(hex_of(ref))
    home.local_upsert("items", [dict(e, title="edited") for e in home.query(tureen.query.all("items", order_path="uid"), 0)])
    seen: List[Tuple[int, int, int]] = []
    with caplog.at_level(logging.INFO, logger="tureen"):  # the library follows it
        with pytest.raises(tureen.HTTPError, match=r"1 record\(s\) failed") as info:
            home.sync_up(target, "items", progress=lambda st: seen.append((st["done"], st["synced"], st["failed"])))
    (why,) = info.value.state["recordErrors"]  # type: ignore[attr-defined]
    assert why["id"] == "n1" and "nor on the server" in why["error"]
    assert rest_server.get_record("n0")["title"] == "edited"
    # n0's answer, then n1's failure: the order of the batches.
    commits = [s for s in seen if s[0] > 0]
    assert commits[:2] == [(1, 1, 0), (2, 1, 1)], seen
    batches = [r.getMessage() for r in caplog.records if "committed;" in r.getMessage()]
    assert len(batches) == 2 and not any("a batch of 0 change" in m for m in batches), batches


@pytest.mark.parametrize("taken", ["resolved theirs", "sync up's answer"])
def test_a_servers_copy_giving_a_stored_blob_another_length_is_refused(rest_server: RestServer,
                                                                       devices: List[tureen.Store],
                                                                       taken: str) -> None:
    """The server's copy refers to a blob stored here, by its digest, with
    another length. Taken by sync up (a conflict resolved "theirs", or the
    answer to a merged change), the entry would disagree with the bytes it
    refers to (and could not be written again): the copy is refused."""
    _, home = devices
    target = blob_target(rest_server)
    ref = home.blob_put(photo(20 * 1024, "stored here"), "image/jpeg")
    home.local_upsert("items", {"uid": "n1", "title": "beach"})
    home.sync_up(target, "items")
    rest_server.patch_record("n1", {"photo": dict(ref, length=ref["length"] + 1)})
    (note,) = home.query(tureen.query.all("items"), 0)
    home.local_upsert("items", dict(note, title="edited at home"))
    if taken == "resolved theirs":
        home.sync_up(target, "items", merge_mode=tureen.LEAVE_IF_CHANGED)
        (conflict,) = home.conflicts("items")
        with pytest.raises(tureen.InvalidError, match="gives length"):
            home.resolve_conflict("items", conflict["entryId"], "theirs")
        assert len(home.conflicts("items")) == 1  # nothing of the resolution was kept
    else:
        assert home.sync_up(target, "items", merge_mode=tureen.MERGE_ACCEPT_YOURS)["status"] == "DONE"
    (note,) = home.query(tureen.query.all("items"), 0)
    assert "photo" not in note, note
    home.upsert("items", dict(note, seen=True))


@pytest.mark.parametrize("ranges", [True, False])
def test_an_awaited_blob_is_asked_for_by_range_where_head_is_refused(rest_server: RestServer,
                                                                    devices: List[tureen.Store],
                                                                    ranges: bool) -> None:
    """A server that answers HEAD with 405 is asked for the blob's first
    byte instead: the edit of a record whose blob a lazy sync awaits goes,
    the blob neither fetched nor uploaded; once the blob is gone, or the
    server holds other bytes, that record fails alone. A server that
    ignores the Range as well is cut off after a byte and the record fails
    alone, as before."""
    desk, home = devices
    target = blob_target(rest_server)
    data = photo(50 * 1024, "no head")
    ref = share(desk, data)
    desk.sync_up(target, "items")
    home.sync_down(target, "items", blobs="lazy")
    rest_server.blobs.head = False
    rest_server.blobs.ranges = ranges
    rest_server.clear_log()
    (note,) = home.query(tureen.query.all("items"), 0)
    home.local_upsert("items", dict(note, title="edited"))
    if not ranges:
        with pytest.raises(tureen.HTTPError, match=r"1 record\(s\) failed"):
            home.sync_up(target, "items")
        assert rest_server.get_record("n1")["title"] == "beach"
        return
    up = home.sync_up(target, "items")
    assert up["status"] == "DONE" and up["synced"] == 1 and up["blobs"] == 0
    assert rest_server.get_record("n1")["title"] == "edited"
    assert home.blob_info(ref) is None and rest_server.request_count("PUT", "/api/blobs/") == 0
    (get,) = rest_server.requests("GET", "/api/blobs/" + hex_of(ref))
    assert get.header("Range") == "bytes=0-0"

    rest_server.blobs.lie_about_length = 1  # another length than the reference's
    (note,) = home.query(tureen.query.all("items"), 0)
    home.local_upsert("items", dict(note, title="edited again"))
    with pytest.raises(tureen.HTTPError, match=r"1 record\(s\) failed"):
        home.sync_up(target, "items")
    rest_server.blobs.lie_about_length = 0
    rest_server.blobs.remove(hex_of(ref))
    with pytest.raises(tureen.HTTPError, match=r"1 record\(s\) failed"):
        home.sync_up(target, "items")
    assert rest_server.get_record("n1")["title"] == "edited"


def device_asking_about(desk: tureen.Store, home: tureen.Store, target: Dict[str, Any], blob: str) -> tureen.Store:
    """The device whose next sync up asks the server about the blob `desk`
    shared: desk itself ("stored here": it holds the blob), or `home`,
    which synced its record down lazily and edited it ("awaited")."""
    if blob == "stored here":
        return desk
    desk.sync_up(target, "items")
    home.sync_down(target, "items", blobs="lazy")
    (note,) = home.query(tureen.query.all("items"), 0)
    home.local_upsert("items", dict(note, title="edited"))
    return home


@pytest.mark.parametrize("blob", ["stored here", "awaited"])
def test_head_not_implemented_is_asked_by_range_without_retrying(rest_server: RestServer,
                                                                 devices: List[tureen.Store], blob: str) -> None:
    """A server that answers HEAD with 501 (as Python's http.server answers
    a method it lacks) has no HEAD, as one answering 405: asking again
    cannot change that, so the one-byte Range GET goes at once, not after
    max_retries more HEADs and their delays. A blob stored here is then
    uploaded; the edit of a record whose blob a lazy sync awaits goes."""
    desk, home = devices
    target = blob_target(rest_server)  # max_retries 5
    data = photo(20 * 1024, "no head, 501")
    ref = share(desk, data)
    device = device_asking_about(desk, home, target, blob)
    rest_server.blobs.head = False
    rest_server.blobs.no_head = 501
    rest_server.clear_log()
    up = device.sync_up(target, "items")
    assert up["status"] == "DONE" and up["synced"] == 1, up
    assert rest_server.request_count("HEAD", "/api/blobs/") == 1
    (get,) = rest_server.requests("GET", "/api/blobs/")
    assert get.header("Range") == "bytes=0-0"
    assert rest_server.request_count("PUT", "/api/blobs/") == (1 if blob == "stored here" else 0)
    assert rest_server.get_record("n1")["title"] == ("edited" if blob == "awaited" else "beach")
    assert rest_server.blobs.get(hex_of(ref)) == data


@pytest.mark.parametrize("status", [403, 500])
@pytest.mark.parametrize("blob", ["stored here", "awaited"])
def test_a_range_probe_answered_with_an_error_fails_as_head_would(rest_server: RestServer,
                                                                  devices: List[tureen.Store],
                                                                  blob: str, status: int) -> None:
    """A server that answers HEAD with 405 and the one-byte Range GET with
    an error (a 5xx after its retry) fails the sync as that answer to HEAD
    would, naming the status and none of the target's secrets: a blob
    stored here is not uploaded to a server that refused us, and the edit
    of a record whose blob a lazy sync awaits is not held back as if the
    server lacked the blob. Once the server answers, both go."""
    desk, home = devices
    target = blob_target(rest_server, max_retries=1)
    data = photo(20 * 1024, "refused probe")
    ref = share(desk, data)
    device = device_asking_about(desk, home, target, blob)
    rest_server.blobs.head = False
    rest_server.blobs.refuse_get = status
    rest_server.clear_log()
    with pytest.raises(tureen.HTTPError, match="GET with Range bytes=0-0 .*HTTP %d" % status) as failed:
        device.sync_up(target, "items")
    assert "secret" not in str(failed.value) and "<redacted>" in str(failed.value), failed.value
    assert rest_server.request_count("GET", "/api/blobs/") == (2 if status == 500 else 1)
    assert rest_server.request_count("PUT") == 0
    if blob == "awaited":
        assert rest_server.get_record("n1")["title"] == "beach"
    else:
        assert rest_server.get_record("n1") is None and rest_server.blobs.get(hex_of(ref)) is None

    rest_server.blobs.refuse_get = None
    up = device.sync_up(target, "items")
    assert up["status"] == "DONE" and up["synced"] == 1, up
    assert rest_server.get_record("n1")["title"] == ("edited" if blob == "awaited" else "beach")
    assert rest_server.blobs.get(hex_of(ref)) == data


@pytest.mark.parametrize("resolution", ["theirs", "yours"])
def test_a_conflict_whose_server_copy_has_a_refused_reference(rest_server: RestServer, devices: List[tureen.Store],
                                                              resolution: str) -> None:
    """The server's copy refers to a blob by a malformed digest. Resolved
    "theirs", the copy is refused (INVALID) and nothing of the resolution
    stays, the base included: the next sync up is made against the old
    base and meets the conflict again instead of overwriting the server.
    Resolved "yours", the copy is not taken into the entry but is the
    base, so the next sync up's precondition (its "rev") holds and yours
    replaces the server's copy."""
    _, home = devices
    target = blob_target(rest_server)
    home.local_upsert("items", {"uid": "n1", "title": "beach"})
    home.sync_up(target, "items")
    rest_server.patch_record("n1", {"photo": {"@type": "blob", "digest": "sha256-not-hex", "length": 1}})
    (note,) = home.query(tureen.query.all("items"), 0)
    home.local_upsert("items", dict(note, title="edited at home"))
    home.sync_up(target, "items", merge_mode=tureen.LEAVE_IF_CHANGED)
    (conflict,) = home.conflicts("items")
    if resolution == "theirs":
        with pytest.raises(tureen.InvalidError):
            home.resolve_conflict("items", conflict["entryId"], "theirs")
        up = home.sync_up(target, "items", merge_mode=tureen.LEAVE_IF_CHANGED)
        assert up["conflicts"] == 1 and rest_server.get_record("n1")["title"] == "beach"
    else:
        home.resolve_conflict("items", conflict["entryId"], "yours")
        up = home.sync_up(target, "items", merge_mode=tureen.LEAVE_IF_CHANGED)
        assert up["status"] == "DONE" and up["conflicts"] == 0
        assert rest_server.get_record("n1")["title"] == "edited at home"
    (note,) = home.query(tureen.query.all("items"), 0)
    assert "photo" not in note


def test_a_failed_upload_is_retried(rest_server: RestServer, devices: List[tureen.Store]) -> None:
    desk, home = devices
    target = blob_target(rest_server, upload="post")
    data = photo(64 * 1024, "retried")
    ref = share(desk, data)
    rest_server.fail_next(2, status=503, retry_after=0, method="POST")
    assert desk.sync_up(target, "items")["status"] == "DONE"
    assert rest_server.request_count("POST", "/api/blobs") == 3
    assert rest_server.blobs.get(hex_of(ref)) == data


@pytest.mark.parametrize("taken", ["resolved theirs", "sync up's answer"])
def test_a_servers_copy_taken_by_sync_up_awaits_its_blobs(rest_server: RestServer, devices: List[tureen.Store],
                                                          taken: str) -> None:
    """desk adds a photo to a record that home edits meanwhile; home takes
    the server's copy, photo included, through sync up (a conflict resolved
    "theirs", or the answer to its merged change), which fetches no blob.
    The photo is awaited as a lazy sync's is: fetched on first read, and
    the entry can be written again."""
    desk, home = devices
    target = blob_target(rest_server)
    desk.local_upsert("items", {"uid": "n1", "title": "beach"})
    desk.sync_up(target, "items")
    home.sync_down(target, "items")
    data = photo(40 * 1024, "added elsewhere")
    (note,) = desk.query(tureen.query.all("items"), 0)
    ref = desk.blob_put(data, "image/jpeg")
    desk.local_upsert("items", dict(note, photo=ref))
    desk.sync_up(target, "items")
    (note,) = home.query(tureen.query.all("items"), 0)
    home.local_upsert("items", dict(note, title="edited at home"))
    if taken == "resolved theirs":
        home.sync_up(target, "items", merge_mode=tureen.LEAVE_IF_CHANGED)
        (conflict,) = home.conflicts("items")
        home.resolve_conflict("items", conflict["entryId"], "theirs")
    else:
        assert home.sync_up(target, "items", merge_mode=tureen.MERGE_ACCEPT_YOURS)["status"] == "DONE"
    (note,) = home.query(tureen.query.all("items"), 0)
    assert note["photo"] == ref and home.blob_info(ref) is None
    home.upsert("items", dict(note, seen=True))
    assert home.blob_get(ref) == data
    assert home.blob_fetch(ref) is False  # stored now


def test_a_refused_blob_keeps_its_record_back(rest_server: RestServer, devices: List[tureen.Store]) -> None:
    """The server will not take the blob: the record that refers to it is
    not sent either, and stays a local change for the next sync."""
    desk, _ = devices
    target = blob_target(rest_server)
    share(desk, photo(10 * 1024, "refused"))
    rest_server.fail_next(1, status=413, retry_after=None, method="PUT")
    with pytest.raises(tureen.HTTPError, match="uploading blob"):
        desk.sync_up(target, "items")
    assert rest_server.get_record("n1") is None
    assert desk.sync_up(target, "items")["status"] == "DONE"
    assert rest_server.get_record("n1") is not None


def test_blobs_elsewhere_get_no_credentials(rest_server: RestServer, devices: List[tureen.Store]) -> None:
    """A blob URL on another origin (a file server, a CDN) is asked without
    the target's API key, headers or password."""
    desk, home = devices
    with RestServer(api_key=None) as files:
        target = rest_target(rest_server, blobs={"url": files.url + "/api/blobs/{digest}"},
                             auth={"user": "ada", "password": "hunter2"})
        ref = share(desk, photo(40 * 1024, "elsewhere"))
        assert desk.sync_up(target, "items")["blobs"] == 1
        assert home.sync_down(target, "items")["blobs"] == 1
        assert home.blob_get(ref) == files.blobs.get(hex_of(ref))
        asked = files.requests()
        assert {r.method for r in asked} == {"HEAD", "PUT", "GET"}
        for r in asked:
            assert r.header("X-Api-Key") is None and r.header("Authorization") is None, r.headers
        # {digest} names the blob as the reference does.
        assert all(r.path == "/api/blobs/" + ref["digest"] for r in asked)


@pytest.mark.parametrize("lie", ["other bytes", "more bytes", "fewer bytes"])
def test_a_lying_server_stores_nothing(rest_server: RestServer, devices: List[tureen.Store], lie: str) -> None:
    desk, home = devices
    target = blob_target(rest_server)
    data = photo(100 * 1024, "lie")
    ref = share(desk, data)
    desk.sync_up(target, "items")
    if lie == "other bytes":
        rest_server.blobs.serve_instead = b"tampered" + data[8:]
    else:
        rest_server.blobs.lie_about_length = 1000 if lie == "more bytes" else -1000
    message = {"other bytes": "hash to", "more bytes": "more than", "fewer bytes": "came with %d bytes" % (len(data) - 1000)}
    with pytest.raises(tureen.HTTPError, match=message[lie]):
        home.sync_down(target, "items")
    assert home.count(tureen.query.all("items")) == 0 and home.blob_info(ref) is None


def test_a_missing_blob_keeps_the_record_out(rest_server: RestServer, devices: List[tureen.Store]) -> None:
    desk, home = devices
    target = blob_target(rest_server)
    ref = share(desk, photo(1000, "lost"))
    desk.sync_up(target, "items")
    rest_server.blobs.remove(hex_of(ref))
    with pytest.raises(tureen.NotFoundError, match="has no blob"):
        home.sync_down(target, "items")
    assert home.count(tureen.query.all("items")) == 0


@pytest.mark.parametrize("blobs, message", [
    ({"url": "http://127.0.0.1:9/api/blobs"}, "must hold {hex} or {digest}"),
    ({"url": "http://127.0.0.1:9/b/{hex}", "upload": "ftp"}, "not 'ftp'"),
    ({"url": "http://127.0.0.1:9/b/{hex}", "field": "f"}, "needs \"upload\": \"multipart\""),
    ({"url": "http://127.0.0.1:9/b/{hex}", "uploadUrl": "http://127.0.0.1:9/up"}, "uploadUrl"),
    ({"url": "file:///etc/{hex}"}, "http:// or https://"),
    ({"url": "http://127.0.0.1:9/b/{hex}", "chunk": 1}, "chunk"),
    ({"url": "http://127.0.0.1:9/b/{hex}", "redirects": ["http://cdn"]}, "URL prefixes with a path"),
    ({"url": "http://127.0.0.1:9/b/{hex}", "redirects": "http://cdn/"}, "redirects"),
])
def test_a_wrong_blobs_member_is_refused(rest_server: RestServer, devices: List[tureen.Store],
                                         blobs: Dict[str, Any], message: str) -> None:
    desk, _ = devices
    with pytest.raises(tureen.InvalidError, match=message.replace("{", r"\{").replace("}", r"\}")):
        desk.sync_up(rest_target(rest_server, blobs=blobs), "items")


@pytest.mark.parametrize("ranges", [True, False])
def test_a_download_that_breaks_off_goes_on(rest_server: RestServer, devices: List[tureen.Store], ranges: bool) -> None:
    """The connection drops twice mid-download: a server that takes Range
    requests sends only the rest each time; one that does not sends the
    whole blob again, and the bytes kept are still exactly the blob's."""
    desk, home = devices
    target = blob_target(rest_server)
    data = photo(3 << 20, "resumed")
    ref = share(desk, data)
    desk.sync_up(target, "items")
    rest_server.blobs.ranges = ranges
    rest_server.blobs.cuts = [1 << 20, 1 << 20]
    rest_server.clear_log()
    assert home.sync_down(target, "items")["blobs"] == 1
    assert home.blob_get(ref) == data
    gets = rest_server.requests("GET", "/api/blobs/")
    assert len(gets) == 3
    asked = [g.header("Range") for g in gets]
    # Each attempt after a break asks for what it lacks; without ranges
    # the server's full answers restart it, so it asks from 1 MiB again.
    assert asked == [None, "bytes=%d-" % (1 << 20), "bytes=%d-" % ((2 << 20) if ranges else (1 << 20))]


def a_failed_run_kept_10_mib(server: RestServer, devices: List[tureen.Store], seed: str,
                            served: Optional[bytes] = None) -> Tuple[Dict[str, Any], bytes, Dict[str, Any]]:
    """desk shares a 12 MiB photo; home's sync down fails when the
    connection drops at 10 MiB with no retries left, having kept those
    10 MiB (the writer keeps what it received in whole chunks of 64 KiB);
    the server sends `served`
    instead of the photo meanwhile, if given. Returns the target, the
    photo and its reference; the server's log starts with that GET."""
    desk, home = devices
    target = blob_target(server, max_retries=0)
    data = photo(12 << 20, seed)
    ref = share(desk, data)
    desk.sync_up(target, "items")
    server.blobs.serve_instead = served
    server.blobs.cuts = [10 << 20]
    server.clear_log()
    with pytest.raises(tureen.NetworkError):
        home.sync_down(target, "items")
    server.blobs.serve_instead = None
    assert home.count(tureen.query.all("items")) == 0 and home.blob_info(ref) is None
    return target, data, ref


def ranges_asked(server: RestServer) -> List[Optional[str]]:
    return [g.header("Range") for g in server.requests("GET", "/api/blobs/")]


NEXT_RUN = r"""
import json, sys, tureen
with tureen.Store.open(sys.argv[1], raw_key=bytes.fromhex(sys.argv[2])) as s:
    print(json.dumps(s.sync_down(json.loads(sys.argv[3]), "items")["blobs"]))
"""


@pytest.mark.parametrize("where", ["here", "another process"])
@pytest.mark.parametrize("ranges", [True, False])
def test_a_download_a_failed_run_left_goes_on_in_the_next(rest_server: RestServer, devices: List[tureen.Store],
                                                          ranges: bool, where: str) -> None:
    """The connection drops at 10 MiB of 12 with no retries left: the run
    fails, keeping the 10 MiB it received (in whole chunks of 64 KiB). The
    next run, here or in another process while this one lives
    on, asks only for the rest; a server that ignores the Range sends it
    all, and the blob is still exactly the blob's bytes."""
    _, home = devices
    rest_server.blobs.ranges = ranges
    target, data, ref = a_failed_run_kept_10_mib(rest_server, devices, "taken-up-again")
    if where == "here":
        assert home.sync_down(target, "items")["blobs"] == 1
    else:
        done = run_python(NEXT_RUN, [home.path, RAW_KEY.hex(), json.dumps(target)], timeout=120)
        assert done.returncode == 0 and done.stdout.split() == ["1"], done.stderr[-2000:]
    assert home.blob_get(ref) == data
    assert ranges_asked(rest_server) == [None, "bytes=%d-" % (10 << 20)]
    # Ranges count the blob's own bytes, never those of a compressed form.
    assert {g.header("Accept-Encoding") for g in rest_server.requests("GET", "/api/blobs/")} == {"identity"}
    # Taken over or, without ranges, dropped: nothing is left behind.
    assert home.collect_blobs(0) == 0


def fetched_whole_afresh(server: RestServer, home: tureen.Store, target: Dict[str, Any], data: bytes,
                         ref: Dict[str, Any]) -> None:
    """The next run gets the blob whole with one GET without a Range, after
    the failed run's and the run that asked for the rest; nothing is left
    behind for collection."""
    assert home.sync_down(target, "items")["blobs"] == 1
    assert home.blob_get(ref) == data
    assert ranges_asked(server) == [None, "bytes=%d-" % (10 << 20), None]
    assert home.collect_blobs(0) == 0


def test_a_run_that_the_server_answers_wrongly_keeps_nothing_for_the_next(rest_server: RestServer,
                                                                          devices: List[tureen.Store]) -> None:
    """10 MiB were kept from a run whose connection failed; the next run's
    Range is answered from the wrong place. That run keeps nothing (asking
    the same way again would fail the same way), and the one after it
    fetches the whole blob without a Range."""
    _, home = devices
    target, data, ref = a_failed_run_kept_10_mib(rest_server, devices, "answered-wrongly")
    rest_server.blobs.range_lie = 0
    with pytest.raises(tureen.HTTPError, match="range 'bytes 0-"):
        home.sync_down(target, "items")
    rest_server.blobs.range_lie = None
    fetched_whole_afresh(rest_server, home, target, data, ref)


def test_staged_bytes_of_another_server_are_fetched_again_in_the_same_run(rest_server: RestServer,
                                                                          devices: List[tureen.Store]) -> None:
    """A run cut off at 10 MiB had been sent other bytes (a server serving
    the wrong file): its 10 MiB kept, with the honest rest, do not hash to
    the digest. The next run drops them and fetches the blob again from
    the start, and succeeds."""
    _, home = devices
    target, data, ref = a_failed_run_kept_10_mib(rest_server, devices, "honest", served=photo(12 << 20, "impostor"))
    fetched_whole_afresh(rest_server, home, target, data, ref)


def test_a_server_that_ignores_the_range_and_sends_other_bytes_is_asked_once(rest_server: RestServer,
                                                                            devices: List[tureen.Store]) -> None:
    """10 MiB were kept from a run whose connection failed. The next run's
    Range is ignored and a whole body of other bytes comes back: the staged
    bytes were dropped when the download restarted, so the mismatch is this
    server's alone, and the run fails after that one GET rather than fetch
    the blob once more. The run after it, answered honestly, gets it all."""
    _, home = devices
    target, data, ref = a_failed_run_kept_10_mib(rest_server, devices, "restarted")
    rest_server.blobs.ranges = False
    rest_server.blobs.serve_instead = photo(12 << 20, "impostor")
    with pytest.raises(tureen.HTTPError, match="the bytes received for blob .* they were not kept"):
        home.sync_down(target, "items")
    assert ranges_asked(rest_server) == [None, "bytes=%d-" % (10 << 20)]
    rest_server.blobs.serve_instead = None
    fetched_whole_afresh(rest_server, home, target, data, ref)


def test_a_reference_whose_length_is_not_the_blobs_is_refused(rest_server: RestServer,
                                                             devices: List[tureen.Store]) -> None:
    """The server's record says the blob is 1000 bytes longer than the
    bytes that hash to its digest: the entry would disagree with the blob
    it refers to, so the page fails and nothing is kept."""
    desk, home = devices
    target = blob_target(rest_server)
    data = photo(300 * 1024, "overstated")
    ref = share(desk, data)
    desk.sync_up(target, "items")
    rest_server.patch_record("n1", {"photo": dict(ref, length=len(data) + 1000)})
    with pytest.raises(tureen.HTTPError, match="came with %d bytes where the record refers to %d" % (len(data), len(data) + 1000)):
        home.sync_down(target, "items")
    assert home.count(tureen.query.all("items")) == 0 and home.blob_info(ref) is None
    assert home.collect_blobs(0) == 0


@pytest.mark.parametrize("against", ["the blob stored here", "another reference"])
def test_a_reference_whose_length_disagrees_without_a_download_is_refused(rest_server: RestServer,
                                                                          devices: List[tureen.Store],
                                                                          against: str) -> None:
    """No bytes come to check the length against: the blob is stored here
    already, or a second record of the page refers to it with another
    length. The page fails and the entries stay as they were."""
    desk, home = devices
    target = blob_target(rest_server)
    data = photo(200 * 1024, "known")
    ref = share(desk, data)
    if against == "the blob stored here":
        desk.sync_up(target, "items")
        assert home.sync_down(target, "items")["blobs"] == 1
        rest_server.patch_record("n1", {"title": "edited", "photo": dict(ref, length=len(data) - 1)})
    else:
        desk.local_upsert("items", {"uid": "n2", "photo": ref})
        desk.sync_up(target, "items")
        rest_server.patch_record("n2", {"photo": dict(ref, length=len(data) + 1)})
    with pytest.raises(tureen.HTTPError, match="with length %d, where" % (len(data) + (-1 if "here" in against else 1))):
        home.sync_down(target, "items")
    titles = [e.get("title") for e in home.query(tureen.query.all("items"), 0)]
    assert titles == (["beach"] if "here" in against else [])


@pytest.mark.parametrize("blobs", ["eager", "lazy"])
@pytest.mark.parametrize("bad", [{"length": -1}, {"length": 1.5}, {"length": "5"}, {"digest": "sha256-" + "AB" * 32},
                                 {"digest": "sha256-abc"}, {"digest": "sha256-" + "ab" * 32 + " "}])
def test_a_record_with_a_reference_the_store_refuses_fails_alone(rest_server: RestServer, devices: List[tureen.Store],
                                                                 blobs: str, bad: Dict[str, Any]) -> None:
    """The server's record refers to a blob in a way the store's own upsert
    refuses (a negative length, an uppercase digest, ...): that record
    fails alone and is not stored (the app could not write such an entry
    back); the others of the page are kept. Once the server mends it, the
    next run brings it."""
    _, home = devices
    target = blob_target(rest_server)
    ref = {"@type": "blob", "digest": "sha256-" + "ab" * 32, "length": 5, "content_type": "image/jpeg"}
    rest_server.set_record({"uid": "n1", "title": "fine"})
    rest_server.set_record({"uid": "n2", "title": "bad", "photo": dict(ref, **bad)})
    rest_server.set_record({"uid": "n3", "title": "fine too"})
    options = {"blobs": "lazy"} if blobs == "lazy" else {}
    with pytest.raises(tureen.HTTPError, match=r"1 record\(s\) failed") as info:
        home.sync_down(target, "items", **options)
    state = info.value.state  # type: ignore[attr-defined]
    assert state["failedRecordIds"] == ["n2"] and state["synced"] == 2
    assert sorted(e["uid"] for e in home.query(tureen.query.all("items"), 0)) == ["n1", "n3"]
    assert rest_server.request_count("GET", "/api/blobs/") == 0
    rest_server.patch_record("n2", {"photo": None})
    assert home.sync_down(target, "items", **options)["status"] == "DONE"
    assert sorted(e["uid"] for e in home.query(tureen.query.all("items"), 0)) == ["n1", "n2", "n3"]


def test_a_resumed_download_from_the_wrong_place_is_refused(rest_server: RestServer, devices: List[tureen.Store]) -> None:
    desk, home = devices
    target = blob_target(rest_server)
    data = photo(1 << 20, "spliced")
    ref = share(desk, data)
    desk.sync_up(target, "items")
    rest_server.blobs.cuts = [300 * 1024]
    rest_server.blobs.range_lie = 100 * 1024
    with pytest.raises(tureen.HTTPError, match="range 'bytes 102400-"):
        home.sync_down(target, "items")
    assert home.count(tureen.query.all("items")) == 0 and home.blob_info(ref) is None


def test_a_large_blob_reports_progress_while_it_moves(rest_server: RestServer, devices: List[tureen.Store]) -> None:
    """A 10 MiB blob: every 4 MiB of it shows in the state's blobBytes (the
    progress callback) and as a blob_progress event, before it has moved."""
    desk, home = devices
    target = blob_target(rest_server)
    data = photo(10 << 20, "progress")
    ref = share(desk, data)
    for store, run, direction in ((desk, lambda s, p: s.sync_up(target, "items", progress=p), "up"),
                                  (home, lambda s, p: s.sync_down(target, "items", progress=p), "down")):
        events: List[Dict[str, Any]] = []
        states: List[Dict[str, Any]] = []
        with store.sync_listen(events.append, codes=["blob_progress", "blob_transferred"]):
            final = run(store, states.append)
            assert wait_until(lambda: len(events) >= 3, 10), events
        assert final["status"] == "DONE" and final["blobBytes"] == len(data)
        partial = [s["blobBytes"] for s in states if 0 < s["blobBytes"] < len(data)]
        assert len(partial) >= 2 and partial == sorted(partial), partial
        done = [e["done"] for e in events if e["code"] == "blob_progress"]
        assert done == partial and all(d >= step << 22 for step, d in enumerate(done, 1)), done
        assert all(e["direction"] == direction and e["digest"] == ref["digest"] and e["length"] == len(data)
                   for e in events)
        assert events[-1]["code"] == "blob_transferred"
    assert home.blob_get(ref) == data


def test_downloads_follow_redirects_only_where_the_target_allows(rest_server: RestServer,
                                                                devices: List[tureen.Store]) -> None:
    """A GET answered with a redirect (a CDN in front of the API) is
    followed to the blob URL's own origin or under a declared prefix,
    without the target's credentials elsewhere; anywhere else, around in
    circles, or off http(s), nothing is fetched."""
    desk, home = devices
    data = photo(70 * 1024, "cdn")
    ref = share(desk, data)
    desk.sync_up(blob_target(rest_server), "items")
    with RestServer(api_key=None) as cdn:
        cdn.blobs.put(data)
        rest_server.blobs.redirect_to = cdn.url

        with pytest.raises(tureen.HTTPError, match="does not allow fetching it"):
            home.sync_down(blob_target(rest_server), "items")
        assert cdn.request_count() == 0 and home.count(tureen.query.all("items")) == 0

        rest_server.blobs.redirect_to = ""  # Location: the same path, again and again
        with pytest.raises(tureen.HTTPError, match="more than 5 times"):
            home.sync_down(blob_target(rest_server), "items")
        assert rest_server.request_count("GET", "/api/blobs/") == 1 + 6  # the first try, then 5 followed

        rest_server.blobs.redirect_to = "ftp://127.0.0.1"
        with pytest.raises(tureen.HTTPError, match="not an http"):
            home.sync_down(blob_target(rest_server), "items")

        # Dots written %2E are dots to the server that decodes them.
        rest_server.blobs.redirect_to = cdn.url + "/api/%2E%2e"
        with pytest.raises(tureen.HTTPError, match="does not allow fetching it"):
            home.sync_down(blob_target(rest_server, redirects=[cdn.url + "/api/"]), "items")
        assert cdn.request_count() == 0

        rest_server.blobs.redirect_to = cdn.url
        assert home.sync_down(blob_target(rest_server, redirects=[cdn.url + "/"]), "items")["blobs"] == 1
        assert home.blob_get(ref) == data
        (got,) = cdn.requests("GET")
        assert got.path == "/api/blobs/" + hex_of(ref) and got.header("X-Api-Key") is None


def test_a_slow_transfer_outlasts_timeout_ms_while_bytes_move(rest_server: RestServer,
                                                            devices: List[tureen.Store]) -> None:
    """timeout_ms bounds a blob transfer's time without progress, not its
    length: a blob that takes 2.5 s to arrive at a steady pace comes whole
    with a 1 s timeout, in one request; a server that trickles fails."""
    desk, home = devices
    target = blob_target(rest_server, timeout_ms=1000, max_retries=0)
    data = photo(512 * 1024, "slow")
    ref = share(desk, data)
    desk.sync_up(target, "items")
    rest_server.blobs.pace = 2.5
    assert home.sync_down(target, "items")["blobs"] == 1
    assert home.blob_get(ref) == data and rest_server.request_count("GET", "/api/blobs/") == 1

    ref2 = share(desk, photo(8 * 1024, "stalled"), uid="n2")
    desk.sync_up(target, "items")
    rest_server.blobs.pace = 30.0  # 820 bytes every 3 s: under 1 KiB per timeout_ms
    started = time.monotonic()
    with pytest.raises(tureen.NetworkError):
        home.sync_down(target, "items")
    assert time.monotonic() - started < 10
    assert home.blob_info(ref2) is None
