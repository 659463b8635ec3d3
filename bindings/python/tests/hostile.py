"""Hostile HTTP servers on 127.0.0.1 for the tests: servers that lie, stall,
flood or plant odd data, for every feature that talks to a server (sync
today; the sync loop and attachments later).

* :class:`HostileServer` answers each request with what ``respond(request)``
  returns: a :class:`Reply` (status, headers, body: any bytes, so also
  bodies that are not JSON or are cut short), or a :data:`Writer` that writes
  the raw response itself (:func:`gzip_bomb`, :func:`endless_chunks`). It logs
  every request as it arrived (:class:`Seen`: the raw request line and
  request-target, before any decoding, so a test sees exactly what the
  client sent).
* :class:`KintoProxy` is a logging reverse proxy in front of a real Kinto
  (``servers.KintoServer``): it forwards every request, and a test may answer
  chosen requests itself (``intercept``: inject Kinto's 409 "please retry")
  or rewrite Kinto's answers (``rewrite``: plant a record in a list).
* :class:`SlowTLSServer` serves one body over HTTPS, taking its time to set
  the connection up (the TLS handshake) and to answer.
* Reply builders for the usual lies: :func:`json_reply`, :func:`not_json`,
  :func:`truncated_json`, :func:`retry_after`, :func:`with_backoff`,
  :func:`with_next_page`, and :func:`kinto_integrity_conflict`.

Every server listens on 127.0.0.1 only, on a port the system picks. ``stop``
(or leaving the ``with`` block) closes the open connections, ends the writers
(they poll a stop flag) and joins the server thread with a timeout; handler
threads are daemons, so nothing can keep a test run alive.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import ssl
import struct
import subprocess
import tempfile
import threading
import time
import urllib.parse
import zlib
from dataclasses import dataclass, field
from functools import lru_cache
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from servers import TrackingHTTPServer, read_request_body

HOST = "127.0.0.1"
JOIN_TIMEOUT = 5.0


# --- what a server saw and what it answers ----------------------------------


@dataclass
class Seen:
    """One request as it arrived. ``line`` is the raw request line
    (``"PUT /api/items/%2E%2E HTTP/1.1"``), ``target`` its raw
    request-target (path and query, not decoded), ``headers`` have lower-case
    names, ``body`` is the decoded body (chunked request bodies are joined)."""

    method: str
    target: str
    line: str
    headers: Dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)

    @property
    def path(self) -> str:
        """The raw path (no query), not percent-decoded."""
        return urllib.parse.urlsplit(self.target).path

    @property
    def query(self) -> Dict[str, List[str]]:
        return urllib.parse.parse_qs(urllib.parse.urlsplit(self.target).query, keep_blank_values=True)

    def header(self, name: str, default: Optional[str] = None) -> Optional[str]:
        return self.headers.get(name.lower(), default)

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8")) if self.body else None


@dataclass
class Reply:
    """A response: ``body`` is bytes as is, a str (UTF-8), or any other value
    (sent as JSON). Content-Length is added."""

    status: int = 200
    body: Union[bytes, str, Any] = b""
    headers: Dict[str, str] = field(default_factory=dict)

    def payload(self) -> bytes:
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        return json.dumps(self.body).encode("utf-8")


def json_reply(body: Any, status: int = 200, headers: Optional[Mapping[str, str]] = None) -> Reply:
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    return Reply(status, body, h)


class TokenServer:
    """A REST API that accepts only ``Bearer <valid>``; changing ``valid``
    makes the token in use stale (401), as a session that timed out."""

    def __init__(self) -> None:
        self.valid = "t1"
        self.seen_tokens: List[str] = []

    def __call__(self, r: Seen) -> Reply:
        token = r.headers.get("authorization", "")
        self.seen_tokens.append(token)
        if token != "Bearer " + self.valid:
            return json_reply({"error": "expired"}, 401)
        return json_reply({"items": [{"id": "s1", "text": "secret", "last_modified": 5}]})


def not_json(status: int = 200, text: str = "<html><body>OK</body></html>") -> Reply:
    """A 2xx that claims JSON but is an HTML page (a captive portal, a proxy)."""
    return Reply(status, text, {"Content-Type": "application/json"})


def truncated_json(body: Any, status: int = 200, keep: float = 0.6) -> Reply:
    """``body`` as JSON, cut after ``keep`` of its bytes (Content-Length
    matches what is sent: the cut is in the JSON, not in the transfer)."""
    data = json.dumps(body).encode("utf-8")
    return Reply(status, data[: max(1, int(len(data) * keep))], {"Content-Type": "application/json"})


def retry_after(seconds: Union[int, str] = 86400, status: int = 429, body: Any = None) -> Reply:
    """A 429 (or 503, ...) asking the client to come back in ``seconds``."""
    return json_reply(body if body is not None else {"error": "slow down"}, status, {"Retry-After": str(seconds)})


def with_backoff(reply: Reply, seconds: Union[int, str] = 86400) -> Reply:
    """``reply`` with Kinto's ``Backoff`` header (wait before the next request)."""
    return Reply(reply.status, reply.body, dict(reply.headers, Backoff=str(seconds)))


def with_next_page(reply: Reply, url: str, header: str = "Next-Page") -> Reply:
    """``reply`` with a next-page link (Kinto's ``Next-Page`` header)."""
    return Reply(reply.status, reply.body, dict(reply.headers, **{header: url}))


#: How a target follows the next page, for each way `looping_page` links it.
LOOPING_NEXT_PAGE = {"header": {"header": "Next-Page"}, "cursor": {"cursorPath": "next", "cursorParam": "cursor"}}


def looping_page(server: "HostileServer", paging: str) -> Reply:
    """A page of one record whose next page is always the same one (a
    ``Next-Page`` header, or a cursor as ``paging`` says): a server looping
    its pages, for ever unless the client notices the repeat."""
    page = {"items": [{"id": "a", "last_modified": 1}]}
    if paging == "header":
        return with_next_page(json_reply(page), server.url + "/api/items?page=1")
    return json_reply(dict(page, next="c1"))


KINTO_INTEGRITY_ERROR = {"code": 409, "errno": 122, "error": "Conflict",
                         "message": "Integrity constraint violated, please retry."}


def kinto_integrity_conflict(retry_after_seconds: int = 1) -> Reply:
    """Kinto's answer when a storage IntegrityError hit a write (concurrent
    writers): 409, errno 122 and Retry-After (its ``retry_after_seconds``
    setting, 3 by default)."""
    return json_reply(KINTO_INTEGRITY_ERROR, 409, {"Retry-After": str(retry_after_seconds)})


# --- raw writers: floods -----------------------------------------------------

#: A raw response writer: gets the request handler (``h.wfile`` is the
#: socket; ``h.server.stopping`` is set when the server stops).
Writer = Callable[[BaseHTTPRequestHandler], None]
Responder = Callable[[Seen], Union[Reply, Writer, None]]


def _gf2_times(mat: List[int], vec: int) -> int:
    total, i = 0, 0
    while vec:
        if vec & 1:
            total ^= mat[i]
        vec >>= 1
        i += 1
    return total


def _gf2_square(mat: List[int]) -> List[int]:
    return [_gf2_times(mat, mat[n]) for n in range(32)]


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """zlib's crc32_combine: the CRC-32 of A+B from crc(A), crc(B), len(B)."""
    if len2 <= 0:
        return crc1
    odd = [0xEDB88320] + [1 << n for n in range(31)]
    even = _gf2_square(odd)
    odd = _gf2_square(even)
    while True:
        even = _gf2_square(odd)
        if len2 & 1:
            crc1 = _gf2_times(even, crc1)
        len2 >>= 1
        if not len2:
            break
        odd = _gf2_square(even)
        if len2 & 1:
            crc1 = _gf2_times(odd, crc1)
        len2 >>= 1
        if not len2:
            break
    return crc1 ^ crc2


@lru_cache(maxsize=8)
def _bomb_parts(prefix: bytes, block_size: int, blocks: int) -> Tuple[bytes, bytes, bytes, bytes]:
    """The gzip header + compressed prefix, one compressed block (repeatable:
    a full flush resets the compressor, so every block compresses to the same
    bytes), the end of the deflate stream, and the gzip trailer."""
    block = b" " * block_size
    z = zlib.compressobj(9, zlib.DEFLATED, -15)  # raw deflate; the gzip frame is ours
    head = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + z.compress(prefix) + z.flush(zlib.Z_FULL_FLUSH)
    one = z.compress(block) + z.flush(zlib.Z_FULL_FLUSH)
    end = z.flush(zlib.Z_FINISH)
    # CRC of prefix + block * blocks, by doubling (no pass over GiBs).
    crc, rep_crc, rep_len, n = zlib.crc32(prefix), zlib.crc32(block), block_size, blocks
    while n:
        if n & 1:
            crc = crc32_combine(crc, rep_crc, rep_len)
        rep_crc = crc32_combine(rep_crc, rep_crc, rep_len)
        rep_len *= 2
        n >>= 1
    size = (len(prefix) + block_size * blocks) & 0xFFFFFFFF
    return head, one, end, struct.pack("<II", crc & 0xFFFFFFFF, size)


def gzip_bomb(inflated: int = 8 << 30, prefix: bytes = b'{"items": [', status: int = 200,
              headers: Optional[Mapping[str, str]] = None) -> Writer:
    """A response whose ``Content-Encoding: gzip`` body inflates to about
    ``inflated`` bytes (default 8 GiB: ``prefix`` then spaces, valid JSON
    whitespace as far as it goes) from about ``inflated / 1000`` bytes on
    the wire (8 MiB by default). A well-formed gzip stream (CRC and size
    right), with Content-Length; built once from one compressed 1 MiB block,
    so serving it costs the server only the bytes the client reads."""
    block_size = 1 << 20
    blocks = max(1, inflated // block_size)
    head, one, end, trailer = _bomb_parts(prefix, block_size, blocks)
    length = len(head) + len(one) * blocks + len(end) + len(trailer)

    def write(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Encoding", "gzip")
        h.send_header("Content-Length", str(length))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        stopping: threading.Event = h.server.stopping  # type: ignore[attr-defined]
        h.wfile.write(head)
        run = one * 64  # 64 KiB per write
        left = blocks
        while left >= 64 and not stopping.is_set():
            h.wfile.write(run)
            left -= 64
        if stopping.is_set():
            return
        h.wfile.write(one * left + end + trailer)

    return write


def endless_chunks(chunk: bytes = b'{"items": [' + b'{"id": "x", "last_modified": 1}, ' * 2000,
                   status: int = 200, limit: Optional[int] = None) -> Writer:
    """A ``Transfer-Encoding: chunked`` response that never ends (until the
    client goes away, the server stops, or ``limit`` bytes were sent, then it
    ends without the closing chunk)."""

    def write(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()
        stopping: threading.Event = h.server.stopping  # type: ignore[attr-defined]
        frame = b"%x\r\n%s\r\n" % (len(chunk), chunk)
        sent = 0
        while not stopping.is_set() and (limit is None or sent < limit):
            h.wfile.write(frame)
            sent += len(chunk)

    return write


# --- the servers ---------------------------------------------------------------


class _Server(TrackingHTTPServer):
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, address: Tuple[str, int], handler: Any) -> None:
        self.stopping = threading.Event()
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that went away mid-flood is the normal case here


class HostileServer:
    """Answers every request with ``respond(request)`` (settable at any time;
    None or a responder returning None answers 404) and logs each request.

    ``with HostileServer(lambda r: json_reply({"items": []})) as s:`` ...
    ``s.url``, ``s.requests()``.
    """

    def __init__(self, respond: Optional[Responder] = None) -> None:
        self.respond: Optional[Responder] = respond
        self._seen: List[Seen] = []
        self._lock = threading.Lock()
        self._server: Optional[_Server] = None
        self._thread: Optional[threading.Thread] = None

    # lifecycle ------------------------------------------------------------

    def start(self, port: int = 0) -> "HostileServer":
        if self._server is not None:
            return self
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            server_version = "Hostile/1"
            timeout = 30  # an idle keep-alive connection ends

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def _any(self) -> None:
                try:
                    body = read_request_body(self)
                except (OSError, ValueError):
                    self.close_connection = True
                    return
                seen = Seen(self.command, self.path, self.requestline,
                            {k.lower(): v for k, v in self.headers.items()}, body)
                outer._log(seen)
                try:
                    answer = outer.respond(seen) if outer.respond is not None else None
                    if answer is None:
                        answer = json_reply({"error": "no such resource"}, 404)
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
                    if self.command != "HEAD":
                        self.wfile.write(data)
                except OSError:
                    self.close_connection = True

            do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _any

        self._server = _Server((HOST, port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="HostileServer:%d" % self.port, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.stopping.set()
        server.shutdown()
        server.close_connections()
        server.server_close()
        if self._thread is not None:
            self._thread.join(JOIN_TIMEOUT)
            self._thread = None

    def restart(self, down_for: float = 0.0) -> None:
        """Goes away (connections refused) for ``down_for`` seconds, then
        listens again on the same port: a server that went down and came back."""
        port = self.port
        self.stop()
        time.sleep(down_for)
        self.start(port)

    def down(self) -> int:
        """Stops listening (connections refused) and returns the port, for
        :meth:`start` to come back on."""
        port = self.port
        self.stop()
        return port

    def __enter__(self) -> "HostileServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("server not started")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash)."""
        return "http://%s:%d" % (HOST, self.port)

    # log --------------------------------------------------------------------

    def _log(self, seen: Seen) -> None:
        with self._lock:
            self._seen.append(seen)

    def requests(self, method: Optional[str] = None) -> List[Seen]:
        """Every request so far, oldest first (only ``method`` ones if given)."""
        with self._lock:
            return [r for r in self._seen if method is None or r.method == method.upper()]

    def request_count(self, method: Optional[str] = None) -> int:
        return len(self.requests(method))

    def clear_log(self) -> None:
        with self._lock:
            self._seen.clear()


class KintoProxy(HostileServer):
    """A logging reverse proxy to a real Kinto at ``upstream`` (its
    ``http://host:port/v1`` URL); ``url`` is the proxy's ``/v1`` URL, to put
    in a target.

    For each request: ``intercept(request)`` may answer it (return a Reply or
    a Writer; None forwards it); then Kinto answers and
    ``rewrite(request, status, body)`` may change that answer (return
    ``(status, body)``). Both pass everything through by default. Kinto's
    links (Next-Page) are rewritten to go through the proxy.
    """

    HOP_BY_HOP = ("connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding",
                  "host", "accept-encoding", "te", "trailer", "upgrade", "proxy-connection", "expect")

    def __init__(self, upstream: str) -> None:
        super().__init__(self._serve)
        self.upstream = urllib.parse.urlsplit(upstream.rstrip("/"))
        self.intercept: Callable[[Seen], Union[Reply, Writer, None]] = lambda r: None
        self.rewrite: Callable[[Seen, int, bytes], Tuple[int, bytes]] = lambda r, s, b: (s, b)

    @property
    def url(self) -> str:
        return super().url + self.upstream.path

    def forward(self, r: Seen, body: Optional[bytes] = None) -> Tuple[int, Dict[str, str], bytes]:
        """Sends ``r`` (with ``body`` instead of its own, if given) to Kinto;
        its status, headers (links rewritten to the proxy) and body."""
        data = r.body if body is None else body
        conn = http.client.HTTPConnection(self.upstream.hostname, self.upstream.port, timeout=30)
        try:
            headers = {k: v for k, v in r.headers.items() if k not in self.HOP_BY_HOP}
            if data:
                headers["content-length"] = str(len(data))
            conn.request(r.method, r.target, body=data or None, headers=headers)
            resp = conn.getresponse()
            answer = resp.read()
            mine = "%s:%d" % (HOST, self.port)
            passed = {k: v.replace(self.upstream.netloc, mine) for k, v in resp.getheaders()
                      if k.lower() not in self.HOP_BY_HOP}
            return resp.status, passed, answer
        finally:
            conn.close()

    def _serve(self, r: Seen) -> Union[Reply, Writer]:
        own = self.intercept(r)
        if own is not None:
            return own
        status, headers, body = self.forward(r)
        status, body = self.rewrite(r, status, body)
        return Reply(status, body, headers)

    def commit_then_hang_up(self) -> None:
        """Every write from now on reaches Kinto, which commits it; its
        answer is dropped (the connection closes unanswered), as for a
        device killed while its request is out. ``intercept = lambda r:
        None`` ends it."""
        def intercept(r: Seen) -> Union[Reply, Writer, None]:
            if r.method in ("PUT", "PATCH", "POST", "DELETE"):
                self.forward(r)
                return lambda handler: None
            return None

        self.intercept = intercept

    def plant(self, list_path: str, records: List[Dict[str, Any]], times: Optional[int] = None) -> None:
        """Adds ``records`` to Kinto's answer to every GET of ``list_path``
        (a records URL path, e.g. ``/v1/buckets/b/collections/c/records``),
        or to the first ``times`` of them."""
        left = [times]

        def rewrite(r: Seen, status: int, body: bytes) -> Tuple[int, bytes]:
            if r.method == "GET" and r.path == list_path and status == 200 and left[0] != 0:
                if left[0] is not None:
                    left[0] -= 1
                data = json.loads(body)
                data["data"] = list(data["data"]) + [dict(rec) for rec in records]
                return status, json.dumps(data).encode("utf-8")
            return status, body

        self.rewrite = rewrite

    def batches(self) -> List[List[Dict[str, Any]]]:
        """The sub-requests of every POST .../batch, one list per batch."""
        return [list((r.json() or {}).get("requests", [])) for r in self.requests("POST")
                if r.path.endswith("/batch") and r.body]

    def all_paths(self) -> List[Tuple[str, str]]:
        """(method, raw path) of every request, and of every batched
        sub-request as written in the batch (the library's own text)."""
        out: List[Tuple[str, str]] = []
        for r in self.requests():
            out.append((r.method, r.path))
            if r.method == "POST" and r.path.endswith("/batch") and r.body:
                defaults = (r.json() or {}).get("defaults") or {}
                for sub in (r.json() or {}).get("requests", []):
                    path = urllib.parse.urlsplit(sub.get("path", "")).path
                    out.append((sub.get("method", defaults.get("method", "GET")).upper(), path))
        return out


# --- a server slow to set a connection up -------------------------------------


class _SlowTLS(TrackingHTTPServer):
    def __init__(self, address: Tuple[str, int], handler: Any, context: ssl.SSLContext,
                 handshake_delay: float) -> None:
        self.stopping = threading.Event()
        self.context = context
        self.handshake_delay = handshake_delay
        super().__init__(address, handler)

    def finish_request(self, request: Any, client_address: Any) -> None:
        # The client's hello waits in the socket: its handshake, and so
        # its connection, is not done until this one starts.
        if self.stopping.wait(self.handshake_delay):
            return
        try:
            tls = self.context.wrap_socket(request, server_side=True)
        except OSError:
            return
        self.RequestHandlerClass(tls, client_address, self)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class SlowTLSServer:
    """An HTTPS server with a self-signed certificate (the client needs
    ``verify_tls`` false) that waits ``handshake_delay`` seconds after
    taking each connection before its TLS handshake (a slow link or a
    loaded server setting the connection up), then answers every GET with
    ``body`` after ``reply_delay`` seconds, one request per connection.
    Waits end early when the server stops."""

    def __init__(self, body: bytes, handshake_delay: float = 0.0, reply_delay: float = 0.0) -> None:
        self.body = body
        self.handshake_delay = handshake_delay
        self.reply_delay = reply_delay
        self.gets = 0
        self._lock = threading.Lock()
        self._dir: Optional[str] = None
        self._server: Optional[_SlowTLS] = None
        self._thread: Optional[threading.Thread] = None

    def start(self) -> "SlowTLSServer":
        self._dir = tempfile.mkdtemp(prefix="slow-tls-")
        cert, key = os.path.join(self._dir, "cert.pem"), os.path.join(self._dir, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-days", "1", "-subj", "/CN=" + HOST, "-keyout", key, "-out", cert],
                       check=True, capture_output=True, timeout=30)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 30

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_GET(self) -> None:
                with outer._lock:
                    outer.gets += 1
                self.close_connection = True
                server: _SlowTLS = self.server  # type: ignore[assignment]
                if server.stopping.wait(outer.reply_delay):
                    return
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Length", str(len(outer.body)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(outer.body)
                except OSError:
                    pass

        self._server = _SlowTLS((HOST, 0), Handler, context, self.handshake_delay)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="SlowTLSServer", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.stopping.set()
            server.shutdown()
            server.close_connections()
            server.server_close()
        if self._thread is not None:
            self._thread.join(JOIN_TIMEOUT)
            self._thread = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> "SlowTLSServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``https://127.0.0.1:PORT`` (no trailing slash)."""
        if self._server is None:
            raise RuntimeError("server not started")
        return "https://%s:%d" % (HOST, self._server.server_address[1])
