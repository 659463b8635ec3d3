"""The test servers themselves (servers.py and the conftest fixtures) do what
the sync tests rely on."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

from conftest import KINTO_AUTH, REPO, new_kinto_collection
from servers import KintoServer, PostgresServer, RestServer, Response, _pid_alive, http_request, wait_until

SERVERS_PY = Path(__file__).resolve().parent / "servers.py"


# --- Kinto -------------------------------------------------------------------


@pytest.fixture(params=["memory", "postgresql"])
def any_kinto(request: pytest.FixtureRequest) -> KintoServer:
    return request.getfixturevalue("kinto" if request.param == "memory" else "kinto_pg")


def records_url(target: Dict[str, Any]) -> str:
    return "%s/buckets/%s/collections/%s/records" % (target["url"], target["bucket"], target["collection"])


def test_kinto_records_and_tombstones(any_kinto: KintoServer) -> None:
    target = new_kinto_collection(any_kinto)
    url = records_url(target)
    auth = target["auth"]

    first = http_request("GET", url, auth=auth)
    assert first.status == 200 and first.json() == {"data": []}
    since = int(first.headers["etag"].strip('"'))

    created = http_request("PUT", url + "/r1", {"data": {"title": "soup"}}, auth=auth)
    assert created.status == 201, created.body
    listed = http_request("GET", url + "?_since=%d" % since, auth=auth).json()["data"]
    assert [(r["id"], r["title"]) for r in listed] == [("r1", "soup")]
    modified = listed[0]["last_modified"]

    assert http_request("DELETE", url + "/r1", auth=auth).status == 200
    changes = http_request("GET", url + "?_since=%d" % modified, auth=auth).json()["data"]
    assert len(changes) == 1 and changes[0]["id"] == "r1" and changes[0]["deleted"] is True
    # Without _since a deleted record is simply absent.
    assert http_request("GET", url, auth=auth).json()["data"] == []


def test_kinto_basic_auth_keeps_others_out(kinto_collection: Dict[str, Any]) -> None:
    url = records_url(kinto_collection)
    assert http_request("GET", url).status == 401
    assert http_request("GET", url, auth=("mallory", "pw")).status == 403
    assert http_request("GET", url, auth=kinto_collection["auth"]).status == 200


def test_kinto_collection_fixture_shape(kinto: KintoServer, kinto_collection: Dict[str, Any]) -> None:
    assert set(kinto_collection) == {"url", "bucket", "collection", "auth"}
    assert kinto_collection["url"] == kinto.url and kinto.url.endswith("/v1")
    assert kinto_collection["auth"] == KINTO_AUTH
    # Creating it again is harmless (412s are tolerated).
    kinto.create_collection(kinto_collection["bucket"], kinto_collection["collection"], KINTO_AUTH)


def test_kinto_flush_empties_the_server(any_kinto: KintoServer) -> None:
    target = new_kinto_collection(any_kinto)
    bucket = "%s/buckets/%s" % (any_kinto.url, target["bucket"])
    assert http_request("GET", bucket, auth=KINTO_AUTH).status == 200
    any_kinto.flush()
    # Kinto says 403, not 404, for a bucket one may not know about.
    assert http_request("GET", bucket, auth=KINTO_AUTH).status in (403, 404)


def test_kinto_settings_and_stop(tmp_path: Path) -> None:
    settings = {"kinto.paginate_by": "2", "kinto.includes": "kinto.plugins.flush kinto.plugins.history"}
    server = KintoServer("memory", tmp_path, settings=settings)
    with server:
        capabilities = http_request("GET", server.url + "/").json()["capabilities"]
        assert "history" in capabilities and "flush_endpoint" in capabilities
        target = new_kinto_collection(server)
        url = records_url(target)
        for i in range(3):
            assert http_request("PUT", "%s/r%d" % (url, i), {"data": {}}, auth=KINTO_AUTH).status == 201
        page = http_request("GET", url, auth=KINTO_AUTH)
        assert len(page.json()["data"]) == 2 and "next-page" in page.headers
        pid = server.pid
        assert pid is not None and _pid_alive(pid)
    assert not _pid_alive(pid)
    with pytest.raises(OSError):
        http_request("GET", target["url"] + "/", timeout=2)


def test_postgres_server(tmp_path: Path) -> None:
    import psycopg2  # installed with kinto[postgresql]
    with PostgresServer(tmp_path) as pg:
        assert pg.dsn.startswith("postgresql://postgres@127.0.0.1:") and pg.dsn.endswith("/kinto")
        data = pg.tmpdir
        conn = psycopg2.connect(pg.dsn)
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT current_database(), inet_server_addr()::text")
                assert cur.fetchone() == ("kinto", "127.0.0.1/32")
        finally:
            conn.close()
        pid = pg.postmaster_pid()
        assert pid is not None and _pid_alive(pid)
    assert not _pid_alive(pid)
    assert data is not None and not data.exists()
    assert "database system is shut down" in (tmp_path / "postgres.log").read_text()


# --- the CLI -----------------------------------------------------------------


@pytest.mark.parametrize("backend", ["memory", "postgresql"])
def test_cli_start_and_stop(tmp_path: Path, backend: str) -> None:
    d = tmp_path / "k"
    cli = [sys.executable, str(SERVERS_PY), "kinto"]
    started = subprocess.run(cli + ["start", "--dir", str(d), "--backend", backend],
                             capture_output=True, text=True, timeout=120, cwd=str(REPO))
    try:
        assert started.returncode == 0, started.stderr
        url = started.stdout.strip()
        assert url == (d / "kinto.url").read_text().strip() and url.endswith("/v1")
        pid = int((d / "kinto.pid").read_text())
        assert http_request("GET", url + "/").json()["project_name"] == "kinto"
        if backend == "postgresql":
            assert (d / "postgres.dsn").read_text().startswith("postgresql://")
            pg_pid = int((d / "postgres.pid").read_text())
            assert _pid_alive(pg_pid)
            info = http_request("GET", url + "/__heartbeat__").json()
            assert info.get("storage") is True, info
        again = subprocess.run(cli + ["start", "--dir", str(d)], capture_output=True, text=True, timeout=60)
        assert again.returncode == 1 and "already runs" in again.stderr
    finally:
        stopped = subprocess.run(cli + ["stop", "--dir", str(d)], capture_output=True, text=True, timeout=120)
    assert stopped.returncode == 0, stopped.stderr
    assert not _pid_alive(pid)
    if backend == "postgresql":
        assert not _pid_alive(pg_pid)
        assert (d / "postgres.log").exists()
    assert not (d / "kinto.pid").exists()
    # Stopping what is already stopped is not an error.
    assert subprocess.run(cli + ["stop", "--dir", str(d)], timeout=60).returncode == 0


# --- RestServer --------------------------------------------------------------

KEY = {"X-Api-Key": "secret"}


def api(server: RestServer, method: str, path: str = "", body: Any = None,
        headers: Optional[Dict[str, str]] = None, key: bool = True) -> Response:
    all_headers = dict(KEY) if key else {}
    all_headers.update(headers or {})
    return http_request(method, server.items_url + path, body=body, headers=all_headers)


def list_all(server: RestServer, limit: int, updated_after: Optional[int] = None) -> List[List[str]]:
    """The uids of every page of ``GET /api/items``, following next_cursor;
    tombstones show as ``-uid``."""
    query = "?limit=%d" % limit + ("" if updated_after is None else "&updated_after=%d" % updated_after)
    pages: List[List[str]] = []
    for _ in range(100):
        r = api(server, "GET", query)
        assert r.status == 200, r.body
        body = r.json()
        pages.append([("-" if item.get("removed") else "") + item["uid"] for item in body["items"]])
        if body["next_cursor"] is None:
            return pages
        query = "?limit=%d&cursor=%s" % (limit, body["next_cursor"])
    raise AssertionError("pagination did not end")


def test_rest_pagination_and_updated_after(rest_server: RestServer) -> None:
    rest_server.set_clock(1000)
    for uid in ("a", "b", "c"):
        rest_server.set_record({"uid": uid, "n": 1})
    rest_server.set_clock(2000)
    for uid in ("d", "e", "f", "g"):
        assert api(rest_server, "PUT", "/" + uid, {"n": 2}).status == 201
    rest_server.delete_record("a", version_ts=2500)
    rest_server.set_clock(None)

    assert list_all(rest_server, 3) == [["b", "c", "d"], ["e", "f", "g"]]
    assert list_all(rest_server, 2, updated_after=1000) == [["d", "e"], ["f", "g"], ["-a"]]
    assert api(rest_server, "GET", "?updated_after=2000").json() == {
        "items": [{"uid": "a", "removed": True, "version_ts": 2500}], "next_cursor": None}
    # Exclusive: the records stamped exactly 2000 are not after 2000.
    assert list_all(rest_server, 10, updated_after=1999) == [["d", "e", "f", "g", "-a"]]
    assert list_all(rest_server, 10, updated_after=2500) == [[]]
    # A page boundary inside a run of equal stamps loses nothing.
    assert list_all(rest_server, 1, updated_after=0) == [["b"], ["c"], ["d"], ["e"], ["f"], ["g"], ["-a"]]

    assert api(rest_server, "GET", "?cursor=garbage").status == 400
    assert api(rest_server, "GET", "?limit=0").status == 400


def test_rest_writes_and_revisions(rest_server: RestServer) -> None:
    created = api(rest_server, "PUT", "/x", {"title": "soup", "rev": None})
    assert created.status == 201
    rec = created.json()
    assert rec["uid"] == "x" and rec["rev"] == 1 and isinstance(rec["version_ts"], int)
    assert created.headers["etag"] == '"1"'

    replaced = api(rest_server, "PUT", "/x", {"title": "stew", "rev": 1})
    assert replaced.status == 200 and replaced.json()["rev"] == 2 and replaced.json()["title"] == "stew"

    conflict = api(rest_server, "PUT", "/x", {"title": "late", "rev": 1})
    assert conflict.status == 409
    assert conflict.json() == {"current": rest_server.get_record("x")}
    assert conflict.json()["current"]["title"] == "stew"

    patched = api(rest_server, "PATCH", "/x", {"minutes": 5, "rev": 2})
    assert patched.status == 200 and patched.json()["title"] == "stew" and patched.json()["minutes"] == 5
    assert patched.json()["rev"] == 3
    assert api(rest_server, "PATCH", "/x", {"minutes": 6, "rev": 2}).status == 409
    assert api(rest_server, "PATCH", "/nope", {"minutes": 6}).status == 404

    # A server-side edit bumps rev, so the client's next write conflicts.
    rest_server.patch_record("x", {"title": "server"})
    assert api(rest_server, "PUT", "/x", {"title": "client", "rev": 3}).json()["current"]["title"] == "server"

    assert api(rest_server, "GET", "/x").json()["rev"] == 4
    deleted = api(rest_server, "DELETE", "/x")
    assert deleted.status == 200 and deleted.json()["removed"] is True
    assert api(rest_server, "DELETE", "/x").status == 404
    assert api(rest_server, "GET", "/x").status == 404
    # Updating what the server deleted conflicts, showing the tombstone.
    gone = api(rest_server, "PUT", "/x", {"title": "again", "rev": 4})
    assert gone.status == 409 and gone.json()["current"]["removed"] is True
    again = api(rest_server, "PUT", "/x", {"title": "again"})
    assert again.status == 201 and again.json()["rev"] == 6
    assert [t["uid"] for t in rest_server.tombstones()] == []

    assert api(rest_server, "PUT", "/y", b"not json").status == 400
    assert api(rest_server, "PUT", "/y", {"uid": "z"}).status == 400
    assert api(rest_server, "POST", "", {}).status == 405
    assert http_request("GET", rest_server.url + "/other", headers=KEY).status == 404


def test_rest_uid_escaping(rest_server: RestServer) -> None:
    assert api(rest_server, "PUT", "/a%2Fb%20c", {"v": 1}).status == 201
    assert rest_server.get_record("a/b c") is not None


def test_rest_requires_the_api_key(rest_server: RestServer) -> None:
    assert api(rest_server, "GET", key=False).status == 401
    assert api(rest_server, "GET", headers={"X-Api-Key": "wrong"}).status == 401
    assert api(rest_server, "GET").status == 200


def test_fault_fail_next_503(rest_server: RestServer) -> None:
    rest_server.fail_next(2)
    for _ in range(2):
        r = api(rest_server, "GET")
        assert r.status == 503 and r.headers["retry-after"] == "1" and "error" in r.json()
    assert api(rest_server, "GET").status == 200
    rest_server.fail_next(1, retry_after=0)
    assert api(rest_server, "GET").headers["retry-after"] == "0"
    rest_server.fail_next(1, status=500, retry_after=None)
    r = api(rest_server, "GET")
    assert r.status == 500 and "retry-after" not in r.headers
    assert [e.status for e in rest_server.requests()] == [503, 503, 200, 503, 500]


def test_fault_only_for_one_method(rest_server: RestServer) -> None:
    rest_server.fail_next(1, method="PUT")
    assert api(rest_server, "GET").status == 200
    assert api(rest_server, "PUT", "/a", {}).status == 503
    assert api(rest_server, "PUT", "/a", {}).status == 201
    assert rest_server.pending_faults() == 0


def test_fault_throttle_429(rest_server: RestServer) -> None:
    rest_server.throttle_next(1, retry_after=0)
    r = api(rest_server, "GET")
    assert r.status == 429 and r.headers["retry-after"] == "0"
    assert api(rest_server, "GET").status == 200


def test_fault_always_unauthorized(rest_server: RestServer) -> None:
    rest_server.set_unauthorized()
    for _ in range(3):
        assert api(rest_server, "GET").status == 401
    rest_server.set_unauthorized(False)
    assert api(rest_server, "GET").status == 200


def test_fault_drop_connection(rest_server: RestServer) -> None:
    rest_server.drop_next(1)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError, urllib.error.URLError)):
        api(rest_server, "PUT", "/a", {"v": 1})
    assert rest_server.get_record("a") is None
    log = rest_server.requests()
    assert len(log) == 1 and log[0].status is None and log[0].json() == {"v": 1}
    assert api(rest_server, "PUT", "/a", {"v": 1}).status == 201


def test_fault_reject_uid(rest_server: RestServer) -> None:
    rest_server.reject_uid("bad", "title is required")
    r = api(rest_server, "PUT", "/bad", {"v": 1})
    assert r.status == 422 and r.json() == {"error": "title is required"}
    assert api(rest_server, "PUT", "/good", {"v": 1}).status == 201
    rest_server.accept_uid("bad")
    assert api(rest_server, "PUT", "/bad", {"v": 1}).status == 201


def test_fault_delay(rest_server: RestServer) -> None:
    rest_server.delay_next(1, 0.5)
    t = time.monotonic()
    assert api(rest_server, "GET").status == 200
    assert time.monotonic() - t >= 0.45
    with pytest.raises(OSError):
        rest_server.delay_next(1, 2)
        http_request("GET", rest_server.items_url, headers=KEY, timeout=0.5)


def test_faults_preset_and_clear() -> None:
    with RestServer(api_key="k", faults={"fail_next": 1, "reject_uid": ["u"]}) as server:
        h = {"X-Api-Key": "k"}
        assert http_request("GET", server.items_url, headers=h).status == 503
        assert http_request("PUT", server.items_url + "/u", {}, headers=h).status == 422
        server.fail_next(3)
        server.clear_faults()
        assert http_request("PUT", server.items_url + "/u", {}, headers=h).status == 201
    with pytest.raises(ValueError):
        RestServer(faults={"explode": 1})


def test_request_log_headers(rest_server: RestServer) -> None:
    api(rest_server, "PUT", "/a", {"v": 1}, headers={"If-None-Match": "*"})
    api(rest_server, "PUT", "/a", {"v": 2, "rev": 1}, headers={"If-Match": '"1"'})
    api(rest_server, "GET", "?updated_after=5")
    puts = rest_server.requests("PUT", "/api/items/a")
    assert [e.header("if-none-match") for e in puts] == ["*", None]
    assert puts[1].header("If-Match") == '"1"' and puts[1].header("x-api-key") == "secret"
    assert puts[1].json() == {"v": 2, "rev": 1}
    listing = rest_server.requests("GET")[0]
    assert listing.path == "/api/items" and listing.query == {"updated_after": ["5"]}
    assert rest_server.request_count() == 3
    rest_server.clear_log()
    assert rest_server.request_count() == 0


def test_rest_server_stops_with_open_keepalive_connection() -> None:
    server = RestServer().start()
    url = server.items_url
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("GET", "/api/items", headers=KEY)
        assert json.loads(conn.getresponse().read())["items"] == []
        t = time.monotonic()
        server.stop()
        assert time.monotonic() - t < 3
    finally:
        conn.close()
        server.stop()
    with pytest.raises(OSError):
        http_request("GET", url, headers=KEY, timeout=1)


@pytest.mark.parametrize("workers", [None, 1])
def test_kinto_dies_with_the_process_that_started_it(tmp_path: Path, workers: Optional[int]) -> None:
    # A test run killed outright (no atexit) must not leave Kinto running,
    # nor gunicorn's workers.
    from servers import session_members
    code = (
        "import sys, time\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from servers import KintoServer\n"
        "k = KintoServer('memory', sys.argv[2], workers=%r).start()\n" % workers +
        "print(k.pid, flush=True)\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(SERVERS_PY.parent), str(tmp_path)],
                            stdout=subprocess.PIPE, text=True)
    pid = None
    try:
        assert proc.stdout is not None
        pid = int(proc.stdout.readline())
        assert _pid_alive(pid)
    finally:
        proc.kill()
        proc.wait(10)
        proc.stdout.close()  # type: ignore[union-attr]
    try:
        assert wait_until(lambda: not _pid_alive(pid), 15), "Kinto %d outlived its parent" % pid
        assert wait_until(lambda: not session_members(pid), 15), "Kinto's workers outlived their parent"
    finally:
        if pid is not None:
            for p in session_members(pid):
                os.kill(p, signal.SIGKILL)


def test_cli_workers_start_and_stop_leave_no_process(tmp_path: Path) -> None:
    from servers import children_of, session_members
    d = tmp_path / "k"
    cli = [sys.executable, str(SERVERS_PY), "kinto"]
    started = subprocess.run(cli + ["start", "--dir", str(d), "--backend", "postgresql", "--workers", "2"],
                             capture_output=True, text=True, timeout=120, cwd=str(REPO))
    try:
        assert started.returncode == 0, started.stderr
        pid = int((d / "kinto.pid").read_text())
        assert "gunicorn" in " ".join(open("/proc/%d/cmdline" % pid).read().split("\0"))
        assert len(children_of(pid)) == 2
        assert http_request("GET", started.stdout.strip() + "/").status == 200
    finally:
        stopped = subprocess.run(cli + ["stop", "--dir", str(d)], capture_output=True, text=True, timeout=120)
    assert stopped.returncode == 0, stopped.stderr
    assert session_members(pid) == []
    refused = subprocess.run(cli + ["start", "--dir", str(tmp_path / "m"), "--workers", "2"],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and "postgresql" in refused.stderr
