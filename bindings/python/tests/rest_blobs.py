"""The blob endpoints of :class:`servers.RestServer`: a content-addressed
shelf of bytes, the REST blob convention Tureen's "rest" targets speak
(README, "REST targets", member ``blobs``).

* ``HEAD|GET /api/blobs/<hex>`` (or ``/api/blobs/sha256-<hex>``): the
  bytes (404 when absent); HEAD is 405 when ``head`` is off; GET honours
  one ``Range: bytes=N-`` or ``bytes=N-M`` (206 with ``Content-Range``; 416
  with ``bytes */<length>`` past the end) unless ``ranges`` is off; ``cuts`` breaks GETs off;
  ``redirect_to`` answers GETs with a redirect; ``refuse_get`` with an error.
* ``PUT|POST /api/blobs/<hex>``: stores the body; refused with 400 when
  it does not hash to ``<hex>``.
* ``POST /api/uploads``: a multipart/form-data body whose part ``file``
  is stored under its SHA-256; answers ``{"digest": "sha256-<hex>"}``.
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import re
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

BLOBS_PATH = "/api/blobs/"
UPLOADS_PATH = "/api/uploads"
_HEX = re.compile(r"^[0-9a-f]{64}$")
_RANGE = re.compile(r"^bytes=(\d+)-(\d*)$")


@dataclass
class RawBody:
    """A response body sent as bytes, not JSON."""

    data: bytes
    content_type: str
    #: Close the connection after this many bytes of the body (a network
    #: that breaks off mid-download); None sends it all.
    cut: Optional[int] = None
    #: Spread the body over this many seconds, in ten pieces (a slow link).
    pace: float = 0.0


Reply = Tuple[int, Any, Dict[str, str]]


class BlobShelf:
    """The stored blobs, by hex digest, with what each was sent as."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._blobs: Dict[str, Tuple[bytes, str]] = {}
        #: Answer HEAD and GET as if this many bytes fewer or more were held.
        self.lie_about_length = 0
        #: Answer GET with these bytes whatever is asked (a server serving
        #: the wrong file).
        self.serve_instead: Optional[bytes] = None
        #: Honour Range requests (a server that cannot resume ignores them).
        self.ranges = True
        #: Answer HEAD (a server that cannot answers ``no_head``: 405, or
        #: 501 as Python's http.server does for a method it lacks).
        self.head = True
        self.no_head = 405
        #: Each of the next GETs breaks off after this many bytes.
        self.cuts: List[int] = []
        #: Answer a Range request with the part from this offset instead.
        self.range_lie: Optional[int] = None
        #: Answer GET with 302 to this URL prefix plus the request's path
        #: (a CDN in front of the API).
        self.redirect_to: Optional[str] = None
        #: Seconds each GET's body takes to send (see RawBody.pace).
        self.pace = 0.0
        #: Answer GET with this status, the error repeating the caller's
        #: API key (a server that refuses us, as error pages often do).
        self.refuse_get: Optional[int] = None
        #: Refuse an upload whose bytes do not hash to its name. False: a
        #: server that keeps any bytes under any 64-hex name (what sealed
        #: blobs, named by a keyed hash, need).
        self.checks_names = True

    def get(self, hex_digest: str) -> Optional[bytes]:
        with self._lock:
            held = self._blobs.get(hex_digest)
            return held[0] if held else None

    def put(self, data: bytes, content_type: str = "application/octet-stream") -> str:
        """Stores ``data`` (a server-side write); returns its hex digest."""
        digest = hashlib.sha256(data).hexdigest()
        with self._lock:
            self._blobs[digest] = (data, content_type)
        return digest

    def items(self) -> Dict[str, Tuple[bytes, str]]:
        """Every blob held, by name: its bytes and the type it was sent as."""
        with self._lock:
            return dict(self._blobs)

    def hold(self, name: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        """Keeps ``data`` under ``name``, whatever it hashes to (a server-side write)."""
        with self._lock:
            self._blobs[name] = (data, content_type)

    def remove(self, hex_digest: str) -> None:
        with self._lock:
            self._blobs.pop(hex_digest, None)

    def count(self) -> int:
        with self._lock:
            return len(self._blobs)

    def handles(self, path: str) -> bool:
        return path.startswith(BLOBS_PATH) or path.rstrip("/") == UPLOADS_PATH

    def route(self, method: str, path: str, headers: Dict[str, str], body: bytes) -> Reply:
        if path.rstrip("/") == UPLOADS_PATH:
            if method != "POST":
                return 405, {"error": "method not allowed"}, {"Allow": "POST"}
            return self._upload(headers.get("content-type", ""), body)
        name = path[len(BLOBS_PATH):]
        if name.startswith("sha256-"):
            name = name[len("sha256-"):]
        if not _HEX.match(name):
            return 404, {"error": "a blob is named by the 64 hex digits of its SHA-256 (after sha256-, if you like)"}, {}
        if method in ("PUT", "POST"):
            if self.checks_names and hashlib.sha256(body).hexdigest() != name:
                return 400, {"error": "the body does not hash to %s" % name}, {}
            self.hold(name, body, headers.get("content-type", "application/octet-stream"))
            return 201, {"digest": "sha256-" + name}, {}
        if method not in ("GET", "HEAD"):
            return 405, {"error": "method not allowed"}, {"Allow": "GET, HEAD, PUT, POST"}
        if method == "HEAD" and not self.head:
            return self.no_head, {"error": "HEAD is not supported"}, {"Allow": "GET, PUT, POST"}
        if self.refuse_get is not None and method == "GET":
            return self.refuse_get, {"error": "refused with key %s" % headers.get("x-api-key")}, {}
        if self.redirect_to is not None and method == "GET":
            return 302, {"moved": True}, {"Location": self.redirect_to + path}
        with self._lock:
            held = self._blobs.get(name)
        if held is None:
            return 404, {"error": "no such blob"}, {}
        data, content_type = held
        if self.serve_instead is not None:
            data = self.serve_instead
        if self.lie_about_length:
            data = data[:len(data) + self.lie_about_length] if self.lie_about_length < 0 else data + b"\0" * self.lie_about_length
        with self._lock:
            cut = self.cuts.pop(0) if self.cuts and method == "GET" else None
        asked = _RANGE.match(headers.get("range", "")) if self.ranges and method == "GET" else None
        if asked and asked.group(2):
            start, end = int(asked.group(1)), int(asked.group(2))
            if start >= len(data) or end < start:
                return 416, {"error": "range not satisfiable"}, {"Content-Range": "bytes */%d" % len(data)}
            return 206, RawBody(data[start:end + 1], content_type, cut, self.pace), {
                "Content-Range": "bytes %d-%d/%d" % (start, min(end, len(data) - 1), len(data))}
        if asked and 0 < int(asked.group(1)) < len(data):
            start = int(asked.group(1)) if self.range_lie is None else self.range_lie
            return 206, RawBody(data[start:], content_type, cut, self.pace), {
                "Content-Range": "bytes %d-%d/%d" % (start, len(data) - 1, len(data))}
        return 200, RawBody(data, content_type, cut, self.pace), {"Accept-Ranges": "bytes"} if self.ranges else {}

    def _upload(self, content_type: str, body: bytes) -> Reply:
        if not content_type.startswith("multipart/form-data"):
            return 415, {"error": "send multipart/form-data"}, {}
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body)
        for part in message.iter_parts():
            if part.get_param("name", header="content-disposition") == "file":
                data = part.get_payload(decode=True) or b""
                return 201, {"digest": "sha256-" + self.put(data, part.get_content_type())}, {}
        return 400, {"error": "no part named file"}, {}
