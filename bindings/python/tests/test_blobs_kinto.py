"""Blobs synced through Kinto's attachment plugin (kinto-attachment, files
on the local file system served by a plain HTTP file server): two devices
exchange a photo, a lazy sync fetches on first read, and a server that
points downloads elsewhere or sends other bytes is refused."""

from __future__ import annotations

import urllib.parse
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

import tureen
from conftest import KINTO_AUTH
from servers import HOST, AttachmentKinto, KintoServer, free_port, wait_until
from sync_support import photo

RAW_KEY = bytes(range(32))


class Deployment:
    def __init__(self, kinto: KintoServer, files_url: str, files_dir: Path) -> None:
        self.kinto = kinto
        self.files_url = files_url
        self.files_dir = files_dir

    def target(self) -> Dict[str, Any]:
        suffix = uuid.uuid4().hex[:12]
        return {"type": "kinto", "url": self.kinto.url, "bucket": "b" + suffix, "collection": "c" + suffix,
                "auth": dict(KINTO_AUTH), "create": True, "attachments_url": self.files_url}


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    with AttachmentKinto(tmp_path_factory.mktemp("attachments")) as server:
        yield Deployment(server.kinto, server.files_url, server.files_dir)


def open_device(tmp_path: Path, name: str) -> tureen.Store:
    s = tureen.Store.open(str(tmp_path / (name + ".tureen")), raw_key=RAW_KEY)
    s.register_soup("notes", [{"path": "id", "type": "string"}])
    return s


def test_two_devices_exchange_a_photo(deployment: Deployment, tmp_path: Path) -> None:
    target = deployment.target()
    jpeg = photo(700 * 1024, "holiday")
    with open_device(tmp_path, "desk") as desk, open_device(tmp_path, "home") as home:
        ref = desk.blob_put(jpeg, "image/jpeg")
        desk.local_upsert("notes", dict({"id": "n1", "title": "beach", "photo": ref}))
        events: List[Dict[str, Any]] = []
        with desk.sync_listen(lambda e: events.append(e), codes=["blob_transferred"]):
            up = desk.sync_up(target, "notes")
        assert up["status"] == "DONE" and up["blobs"] == 1 and up["blobBytes"] == len(jpeg)
        # The plugin stored the bytes as they are, under the blob's hash.
        stored = [p for p in deployment.files_dir.rglob("*") if p.is_file()]
        assert any(p.read_bytes() == jpeg for p in stored)

        down = home.sync_down(target, "notes")
        assert down["status"] == "DONE" and down["blobs"] == 1
        (note,) = home.query(tureen.query.all("notes"), 0)
        assert note["photo"] == ref and home.blob_get(note["photo"]) == jpeg

        # Sent once: a second record with the same photo uploads nothing.
        desk.local_upsert("notes", dict({"id": "n2", "title": "again", "photo": ref}))
        assert desk.sync_up(target, "notes")["blobs"] == 0
    assert wait_until(lambda: len(events) == 1, 10), events
    assert events[0]["direction"] == "up" and events[0]["digest"] == ref["digest"]


def test_a_lazy_sync_fetches_on_first_read(deployment: Deployment, tmp_path: Path) -> None:
    target = deployment.target()
    data = photo(300 * 1024, "lazy")
    with open_device(tmp_path, "a") as a, open_device(tmp_path, "b") as b:
        ref = a.blob_put(data, "image/png")
        a.local_upsert("notes", dict({"id": "n1", "photo": ref}))
        a.sync_up(target, "notes")
        down = b.sync_down(target, "notes", blobs="lazy")
        assert down["status"] == "DONE" and down["blobs"] == 0
        assert b.blob_info(ref) is None  # awaited, not here yet
        # The entry may be written again although its blob is not here yet.
        (note,) = b.query(tureen.query.all("notes"), 0)
        b.upsert("notes", dict(note, seen=True))
        with b.blob_open(ref) as f:
            assert f.read() == data
        assert b.blob_fetch(ref) is False  # stored now
        other = b.blob_put(b"unrelated")
        with pytest.raises(tureen.NotFoundError):
            b.blob_get(dict(other, digest="sha256-" + "1" * 64))


def test_a_record_never_arrives_without_its_blob(deployment: Deployment, tmp_path: Path) -> None:
    """The server lost a blob's file: an eager sync down fails and keeps the
    record out, instead of keeping a record that points at nothing."""
    target = deployment.target()
    data = photo(50 * 1024, "lost")
    with open_device(tmp_path, "a") as a, open_device(tmp_path, "b") as b:
        ref = a.blob_put(data)
        a.local_upsert("notes", dict({"id": "n1", "photo": ref}))
        a.sync_up(target, "notes")
        for p in deployment.files_dir.rglob("*"):
            if p.is_file() and p.read_bytes() == data:
                p.write_bytes(b"tampered" + data[8:])
        with pytest.raises(tureen.HTTPError, match="hash to"):
            b.sync_down(target, "notes")
        assert b.count(tureen.query.all("notes")) == 0 and b.blob_info(ref) is None


def test_downloads_stay_where_the_target_says(deployment: Deployment, tmp_path: Path) -> None:
    target = deployment.target()
    with open_device(tmp_path, "a") as a, open_device(tmp_path, "b") as b:
        ref = a.blob_put(b"confined")
        a.local_upsert("notes", dict({"id": "n1", "photo": ref}))
        a.sync_up(target, "notes")
        elsewhere = dict(target, attachments_url="http://%s:%d/other/" % (HOST, free_port()))
        with pytest.raises(tureen.HTTPError, match="outside the target's attachments_url"):
            b.sync_down(elsewhere, "notes")
        assert b.count(tureen.query.all("notes")) == 0
        # A prefix is matched origin to origin: the files' origin with its
        # port cut short (another port) is not theirs, nor a longer host name.
        origin = urllib.parse.urlsplit(deployment.files_url)
        for other_origin in ("http://%s:%s" % (origin.hostname, str(origin.port)[:-1]),
                             "http://%s" % origin.hostname[:-1]):
            with pytest.raises(tureen.HTTPError, match="outside the target's attachments_url"):
                b.sync_down(dict(target, attachments_url=other_origin), "notes")
        assert b.count(tureen.query.all("notes")) == 0
