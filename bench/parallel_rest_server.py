"""A write server that takes batches side by side, for sync_up_parallel_bench:
the part of Kinto's protocol a sync up of creates uses (GET /v1/ for
batch_max_requests, POST /v1/batch of PUTs with If-None-Match: *), one
thread per connection, records in memory.

Kinto on PostgreSQL commits the writes to one collection one after another,
so more connections cannot make a sync up into it faster, whoever the
client is. Here each batch holds a lock only while it touches the records;
then it waits --commit-ms (20) before answering, with no lock held and no
CPU used: the wait of a commit on a remote disk or of a round trip to a
server further away, which concurrent batches spend side by side. So what
more connections gain is bounded by the clients' own work, which is what the
benchmark's row measures.

Usage: python bench/parallel_rest_server.py [--commit-ms 20]
Prints its base URL (http://127.0.0.1:<port>/v1) on stdout once it listens,
then serves until killed. Every request outside that protocol is answered
404 and written to stderr, so a client asking for more shows up.
"""

from __future__ import annotations

import argparse
import json
import re
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Tuple

BATCH_MAX = 25
RECORD_PATH = re.compile(r"^(?:/v1)?/buckets/([^/]+)/collections/([^/]+)/records/([^/?]+)$")


class Store:
    """Records by (bucket, collection, id); a subrequest's path may name
    them with or without the /v1 prefix, as Kinto's /batch allows."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.records: Dict[Tuple[str, str, str], Dict[str, Any]] = {}
        self.last_modified = int(time.time() * 1000)

    def create(self, path: str, body: Any, if_none_match: bool) -> Dict[str, Any]:
        m = RECORD_PATH.match(path)
        if not m or not isinstance(body, dict) or not isinstance(body.get("data"), dict):
            return {"status": 400, "path": path, "headers": {}, "body": {"message": "not a record PUT"}}
        with self.lock:
            key = (m.group(1), m.group(2), m.group(3))
            if if_none_match and key in self.records:
                return {"status": 412, "path": path, "headers": {}, "body": {"message": "Resource already exists"}}
            self.last_modified += 1
            record = dict(body["data"], id=m.group(3), last_modified=self.last_modified)
            self.records[key] = record
        return {"status": 201, "path": path, "headers": {"ETag": '"%d"' % record["last_modified"]},
                "body": {"data": record}}


def handler(store: Store, commit_s: float) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Headers and body leave in two writes: without this, Nagle's
            # algorithm holds the body until the client's delayed ACK (40 ms).
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, *args: Any) -> None:
            pass

        def answer(self, status: int, doc: Any) -> None:
            data = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def refuse(self) -> None:
            sys.stderr.write("parallel_rest_server: %s %s is not served\n" % (self.command, self.path))
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            self.answer(404, {"message": "not served by this bench server"})

        def do_GET(self) -> None:
            if self.path.rstrip("/") != "/v1":
                return self.refuse()
            self.answer(200, {"project_name": "parallel bench server", "settings": {"batch_max_requests": BATCH_MAX}})

        def do_POST(self) -> None:
            if self.path != "/v1/batch":
                return self.refuse()
            doc = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            defaults = doc.get("defaults", {})
            parts = []
            for sub in doc.get("requests", [])[:BATCH_MAX + 1]:
                sub = dict(defaults, **sub)
                headers = sub.get("headers") or {}
                if len(doc["requests"]) > BATCH_MAX or sub.get("method") != "PUT":
                    parts.append({"status": 400, "path": sub.get("path", ""), "headers": {}, "body": {"message": "refused"}})
                    continue
                parts.append(store.create(sub.get("path", ""), sub.get("body"), headers.get("If-None-Match") == "*"))
            time.sleep(commit_s)
            self.answer(200, {"responses": parts})

        def do_PUT(self) -> None:
            self.refuse()

        def do_HEAD(self) -> None:
            self.refuse()

    return Handler


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commit-ms", type=float, default=20.0)
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(Store(), args.commit_ms / 1000.0))
    server.daemon_threads = True
    print("http://127.0.0.1:%d/v1" % server.server_address[1], flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
