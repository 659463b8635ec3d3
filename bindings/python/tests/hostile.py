"""Hostile HTTP servers on 127.0.0.1 for the tests: servers that lie, stall,
flood or plant odd data, for every feature that talks to a server.

* :class:`HostileServer`: answers each request with what a test's
  ``respond(request)`` returns (a :class:`Reply`, or a function that writes
  the raw response itself: :func:`gzip_bomb`, :func:`endless_chunks`), and
  logs every request with its raw request-target (before any decoding).
* :class:`KintoProxy`: a logging reverse proxy in front of a real Kinto that
  can answer or rewrite chosen requests (plant a record, inject a 409).

Every thread is a daemon joined with a bound on stop; every server listens on
127.0.0.1 only, on a free port.
"""

from __future__ import annotations

import http.client
import json
import threading
import urllib.parse
import zlib
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Union

HOST = "127.0.0.1"


@dataclass
class Seen:
    """One request as it arrived: ``target`` is the raw request-target."""

    method: str
    target: str
    headers: Dict[str, str]
    body: bytes

    @property
    def path(self) -> str:
        return urllib.parse.urlsplit(self.target).path

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8")) if self.body else None


@dataclass
class Reply:
    status: int = 200
    body: Union[bytes, str, Any] = b""
    headers: Dict[str, str] = field(default_factory=dict)

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        return json.dumps(self.body).encode("utf-8")


def json_reply(body: Any, status: int = 200, headers: Optional[Dict[str, str]] = None) -> Reply:
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    return Reply(status, body, h)


Writer = Callable[[BaseHTTPRequestHandler], None]
Responder = Callable[[Seen], Union[Reply, Writer]]


def gzip_bomb(limit_bytes: int = 8 << 30) -> Writer:
    """A 200 whose gzip body inflates to ``limit_bytes`` of a JSON-looking
    prefix and spaces: a few MB on the wire for GiBs decoded. Compressed as
    it is sent, so it costs the server only what the client reads."""

    def write(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Encoding", "gzip")
        h.send_header("Connection", "close")
        h.end_headers()
        z = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: a gzip wrapper
        block = b" " * (1 << 20)
        sent = 0
        h.wfile.write(z.compress(b'{"items": ['))
        while sent < limit_bytes:
            h.wfile.write(z.compress(block))
            sent += len(block)
        h.wfile.write(z.flush())

    return write


def endless_chunks(chunk: bytes = b"[" + b"0," * 32768) -> Writer:
    """A 200 with a chunked body that never ends (until the client leaves)."""

    def write(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        frame = b"%x\r\n%s\r\n" % (len(chunk), chunk)
        while True:
            h.wfile.write(frame)

    return write


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class HostileServer:
    """Serves ``respond(request)`` for every request; logs them all."""

    def __init__(self, respond: Responder) -> None:
        self.respond = respond
        self.seen: List[Seen] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def _any(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                seen = Seen(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                with outer._lock:
                    outer.seen.append(seen)
                try:
                    answer = outer.respond(seen)
                    if callable(answer):
                        self.close_connection = True
                        answer(self)
                        return
                    data = answer.payload()
                    self.send_response(answer.status)
                    for k, v in answer.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True

            do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = do_HEAD = _any

        self._server = _Server((HOST, 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return "http://%s:%d" % (HOST, self._server.server_address[1])

    def requests(self) -> List[Seen]:
        with self._lock:
            return list(self.seen)

    def start(self) -> "HostileServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def __enter__(self) -> "HostileServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class KintoProxy(HostileServer):
    """A reverse proxy to a real Kinto at ``upstream`` (its ``/v1`` URL).

    ``intercept(request)`` may answer a request itself (return a Reply);
    ``rewrite(request, status, body)`` may change Kinto's answer (return
    ``(status, body)``). Both default to passing everything through.
    """

    def __init__(self, upstream: str) -> None:
        self.upstream = urllib.parse.urlsplit(upstream)
        self.intercept: Callable[[Seen], Optional[Reply]] = lambda r: None
        self.rewrite: Callable[[Seen, int, bytes], Any] = lambda r, s, b: (s, b)
        super().__init__(self._forward)

    @property
    def url(self) -> str:
        return super().url + self.upstream.path

    def _forward(self, r: Seen) -> Reply:
        own = self.intercept(r)
        if own is not None:
            return own
        conn = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=30)
        try:
            headers = {k: v for k, v in r.headers.items() if k not in ("host", "accept-encoding", "connection")}
            conn.request(r.method, r.target, body=r.body or None, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
            status, body = self.rewrite(r, resp.status, body)
            # Kinto names its own address in links (Next-Page): name ours.
            mine = urllib.parse.urlsplit(super().url).netloc
            passed = {k: v.replace(self.upstream.netloc, mine) for k, v in resp.getheaders()
                      if k.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding")}
            return Reply(status, body, passed)
        finally:
            conn.close()

    def batch_paths(self) -> List[str]:
        """The path of every request, batched ones included (as sent)."""
        paths: List[str] = []
        for r in self.requests():
            paths.append(r.path)
            if r.path.endswith("/batch") and r.body:
                paths += [sub["path"] for sub in r.json().get("requests", [])]
        return paths
