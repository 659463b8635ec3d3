"""Kinto's bucket "default" (the default_bucket plugin): an alias of the
signed-in user's own bucket. Kinto's next-page links name that bucket by
its id, so a sync down paged by them must accept it, and only it."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, Optional

import pytest

import tureen

from hostile import KintoProxy, Reply, Seen
from servers import KintoServer
from sync_support import close_unless_stuck, entries, run_bounded

KEY = "d4" * 32
SOUP = "items"
COLLECTION = "tasks"


@pytest.fixture(scope="module")
def kinto_default(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KintoServer]:
    with KintoServer("memory", tmp_path_factory.mktemp("kinto_default"),
                     settings={"kinto.includes": "kinto.plugins.flush kinto.plugins.default_bucket"}) as server:
        yield server


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    s = tureen.Store.open(tmp_path / "default.db", raw_key=KEY)
    try:
        s.register_soup(SOUP, [("id", "string")])
        yield s
    finally:
        close_unless_stuck(s)


@pytest.fixture
def auth() -> Dict[str, str]:
    """A user of its own, so its default bucket starts empty."""
    return {"user": "u" + uuid.uuid4().hex[:12], "password": "pw"}


def fill_sharing_one_stamp(server: KintoServer, auth: Dict[str, str], collection: str = COLLECTION) -> None:
    """12 records in ``collection`` of the user's default bucket, all with
    one last_modified, after one that moves the collection's timestamp on."""
    path = "/buckets/default/collections/%s/records/" % collection
    first = server.request("PUT", path + "first", body={"data": {"n": -1}}, auth=auth)
    assert first.status in (200, 201), first.body[:300]
    requests = [{"method": "PUT", "path": path + "t%02d" % i, "body": {"data": {"n": i, "last_modified": 1000}}}
                for i in range(12)]
    r = server.request("POST", "/batch", body={"requests": requests}, auth=auth)
    assert r.status == 200 and all(p["status"] == 201 for p in r.json()["responses"]), r.body[:500]


def target(url: str, auth: Dict[str, str], **extra: Any) -> Dict[str, Any]:
    return dict(type="kinto", url=url, bucket="default", collection=COLLECTION, auth=auth, max_retries=1, **extra)


def test_paging_across_a_shared_stamp_follows_links_to_the_users_own_bucket(
        store: tureen.Store, kinto_default: KintoServer, auth: Dict[str, str]) -> None:
    fill_sharing_one_stamp(kinto_default, auth)
    own = kinto_default.request("GET", "/", auth=auth).json()["user"]["bucket"]
    with KintoProxy(kinto_default.url) as proxy:
        state = run_bounded(store, lambda: store.sync_down(target(proxy.url, auth, page_size=5), SOUP))
        listed = [r.path for r in proxy.requests("GET") if r.path.endswith("/records")]
        roots = [r for r in proxy.requests("GET") if r.path == "/v1/"]
    assert state["status"] == "DONE" and state["synced"] == 13 and state["done"] == 13, state
    assert sorted(e["n"] for e in entries(store, SOUP)) == list(range(-1, 12))
    # The run ran into the links (pages of one stamp), which named the bucket by its id.
    assert "/v1/buckets/%s/collections/%s/records" % (own, COLLECTION) in listed, listed
    assert len(roots) == 1


@pytest.mark.parametrize("elsewhere", ["another collection", "another bucket"])
def test_a_link_off_the_users_own_collection_is_still_refused(
        store: tureen.Store, kinto_default: KintoServer, auth: Dict[str, str], elsewhere: str) -> None:
    fill_sharing_one_stamp(kinto_default, auth)
    fill_sharing_one_stamp(kinto_default, auth, "secrets")
    own = kinto_default.request("GET", "/", auth=auth).json()["user"]["bucket"]
    other = "/v1/buckets/%s/collections/secrets/records" % own
    if elsewhere == "another bucket":
        other = "/v1/buckets/someone-else/collections/%s/records" % COLLECTION
    with KintoProxy(kinto_default.url) as proxy:
        def lead_away(r: Seen) -> Optional[Reply]:
            if r.method == "GET" and r.path.endswith("/records"):
                status, headers, body = proxy.forward(r)
                link = headers.get("Next-Page")
                if link is not None:
                    headers["Next-Page"] = link.replace(link.split("?")[0], proxy.url[:-len("/v1")] + other)
                return Reply(status, body, headers)
            return None

        proxy.intercept = lead_away
        with pytest.raises(tureen.HTTPError):
            run_bounded(store, lambda: store.sync_down(target(proxy.url, auth, page_size=5), SOUP, name="down"))
        followed = [r.path for r in proxy.requests("GET") if r.path == other]
    assert followed == []
    assert store.sync_status("down")["status"] == "FAILED"
    assert len(entries(store, SOUP)) < 13
