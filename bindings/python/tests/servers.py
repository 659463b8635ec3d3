"""Real servers on 127.0.0.1 for the sync tests.

* :class:`KintoServer`: a Kinto process (memory or PostgreSQL storage) with
  basic auth, bucket creation for any authenticated user and ``/__flush__``.
* :class:`PostgresServer`: a throwaway PostgreSQL cluster in a temp directory,
  run as the ``postgres`` OS user when we are root.
* :class:`RestServer`: a small non-Kinto JSON API (``/api/items``) in a
  background thread, with fault injection and a request log.

Every wait is bounded; every server listens on 127.0.0.1 only, on a free port.

From bash (C tests, ``make demo``)::

    python bindings/python/tests/servers.py kinto start --dir D [--backend memory|postgresql] [--workers N]
    python bindings/python/tests/servers.py kinto stop --dir D

``start`` prints the URL (``http://127.0.0.1:PORT/v1``) and leaves the servers
running detached; ``D`` then holds ``kinto.url``, ``kinto.pid``, ``kinto.ini``
and ``kinto.log`` (and ``postgres.pid``, ``postgres.dir``, ``postgres.dsn``
with the PostgreSQL backend).

Kinto runs in one process (waitress, 8 threads) unless ``workers`` is given:
then gunicorn serves it with that many worker processes, as Kinto's
production deployments do. On PostgreSQL, the set-up applies
``packaging/kinto/commit_order.sql`` after ``kinto migrate`` (unless
``commit_order=False``): Kinto's stock timestamp trigger lets concurrent
transactions commit out of timestamp order, and a ``_since`` feed then skips
records (see packaging/kinto/README.md).
"""

from __future__ import annotations

import argparse
import atexit
import base64
import binascii
import json
import os
import pwd
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from rest_blobs import BlobShelf, RawBody

REPO = Path(__file__).resolve().parents[3]
HOST = "127.0.0.1"
COMMIT_ORDER_SQL = REPO / "packaging" / "kinto" / "commit_order.sql"

Auth = Union[Mapping[str, str], Tuple[str, str], None]


class ServerError(RuntimeError):
    """A server could not be started or stopped; the message carries its log tail."""


# --- small helpers -----------------------------------------------------------


def free_port() -> int:
    """A port nobody listens on right now. Another process may still take it
    before our server binds it, so the starters retry on "address in use"."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def log_tail(path: Union[str, Path], lines: int = 40) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            # The end is all we show; reading a whole multi-megabyte log to
            # print 40 lines would slow every failure report down.
            f.seek(max(0, size - 64 * 1024))
            text = f.read().decode("utf-8", "replace")
    except OSError as e:
        return "(no log at %s: %s)" % (path, e)
    return "\n".join(text.splitlines()[-lines:])


def wait_until(check: Callable[[], bool], timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def _basic_auth(auth: Auth) -> Dict[str, str]:
    if auth is None:
        return {}
    if isinstance(auth, Mapping):
        user, password = auth["user"], auth["password"]
    else:
        user, password = auth
    token = base64.b64encode(("%s:%s" % (user, password)).encode("utf-8")).decode("ascii")
    return {"Authorization": "Basic " + token}


@dataclass
class Response:
    status: int
    headers: Dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8")) if self.body else None


def http_request(
    method: str,
    url: str,
    body: Any = None,
    headers: Optional[Mapping[str, str]] = None,
    auth: Auth = None,
    timeout: float = 10.0,
) -> Response:
    """One HTTP request with urllib. HTTP error statuses are returned, not raised;
    transport errors (refused, reset, timeout) raise as urllib does. ``body`` is
    sent as JSON unless it is already bytes."""
    all_headers = {"Accept": "application/json"}
    all_headers.update(_basic_auth(auth))
    data: Optional[bytes] = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        all_headers["Content-Type"] = "application/json"
    all_headers.update(headers or {})
    req = urllib.request.Request(url, data=data, method=method, headers=all_headers)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return Response(resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read())
    except urllib.error.HTTPError as e:
        with e:
            return Response(e.code, {k.lower(): v for k, v in e.headers.items()}, e.read())


def _venv_bin(name: str) -> Path:
    """A console script of the venv that has Kinto: ours if we run in it, else
    the repository's .venv (the CLI may be run by a system python3)."""
    candidates = [Path(sys.executable).parent / name, REPO / ".venv" / "bin" / name]
    venv = os.environ.get("TUREEN_VENV")
    if venv:
        candidates.insert(0, Path(venv) / "bin" / name)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    found = shutil.which(name)
    if found:
        return Path(found)
    raise ServerError("%s not found (looked in %s); run `make .venv/.ok` or "
                      "`pip install 'kinto[postgresql]'`" % (name, ", ".join(map(str, candidates))))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0) but is gone for our purposes; it stays
    # one only until its parent reaps it.
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _pid_cmdline(pid: int) -> str:
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


def _kill_pid(pid: int, timeout: float) -> None:
    """SIGTERM, then SIGKILL if still there after ``timeout`` seconds."""
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        if wait_until(lambda: not _pid_alive(pid), wait, 0.05):
            return
    raise ServerError("process %d survived SIGKILL" % pid)


def _proc_stat(pid: int) -> Optional[List[str]]:
    """The fields of /proc/PID/stat after the command name (state first)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def _live_where(field: int, value: int) -> List[int]:
    """Live processes whose /proc/PID/stat field ``field`` (counted after the
    command name: 1 the parent, 3 the session) is ``value``."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            fields = _proc_stat(int(name))
            if fields is not None and len(fields) > field and fields[field] == str(value) and fields[0] != "Z":
                found.append(int(name))
    return found


def session_members(sid: int) -> List[int]:
    """Live processes of session ``sid`` (a server we started with
    start_new_session=True leads its own): what must be gone once it stops."""
    return _live_where(3, sid)


def children_of(pid: int) -> List[int]:
    """Live child processes of ``pid`` (gunicorn's workers, for the arbiter)."""
    return _live_where(1, pid)


def _kill_session(sid: int, marker: str = "") -> None:
    """SIGKILLs what is left of session ``sid`` (workers whose arbiter died
    first) whose command line holds ``marker``; waits a bounded time for
    them to go."""
    def members() -> List[int]:
        return [p for p in session_members(sid) if marker in _pid_cmdline(p)]
    for pid in members():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if not wait_until(lambda: not members(), 10.0, 0.05):
        raise ServerError("processes of session %d survived SIGKILL: %s" % (sid, members()))


# Servers started by this process and not stopped yet: stopped at exit, so an
# aborted test run does not leave them running.
_LIVE: "set[Any]" = set()
_LIVE_LOCK = threading.Lock()


def _stop_live() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for server in live:
        try:
            server.stop()
        except Exception as e:  # noqa: BLE001 - exiting anyway, say why and go on
            print("servers.py: stopping %r at exit: %s" % (server, e), file=sys.stderr)


atexit.register(_stop_live)


def _track(server: Any, live: bool) -> None:
    with _LIVE_LOCK:
        if live:
            _LIVE.add(server)
        else:
            _LIVE.discard(server)


# The child asks the kernel for SIGTERM when its parent dies, then becomes
# Kinto: so a test run killed with SIGKILL (no atexit) leaves no Kinto behind.
# A wrapper rather than preexec_fn, which is unsafe once threads exist (the
# RestServer's do).
_DIE_WITH_PARENT = (
    "import ctypes, os, signal, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGTERM), 0, 0, 0)\n"
    "if os.getppid() == int(sys.argv[1]): os.execv(sys.argv[2], sys.argv[2:])\n"
)


# --- PostgreSQL --------------------------------------------------------------


def postgres_bindir() -> Path:
    """The newest /usr/lib/postgresql/<version>/bin that has initdb and pg_ctl."""
    root = Path("/usr/lib/postgresql")
    found = []
    if root.is_dir():
        for d in root.iterdir():
            b = d / "bin"
            if (b / "initdb").exists() and (b / "pg_ctl").exists():
                try:
                    found.append((float(d.name), b))
                except ValueError:
                    found.append((0.0, b))
    if not found:
        raise ServerError("no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql)")
    return max(found)[1]


class PostgresServer:
    """A private PostgreSQL cluster: data and unix socket in a temp directory
    owned by ``postgres``, TCP on 127.0.0.1 only, trust auth (only local
    clients can reach it, and it lives as long as a test run)."""

    def __init__(
        self,
        workdir: Union[str, Path, None] = None,
        database: str = "kinto",
        startup_timeout: float = 30.0,
        detached: bool = False,
    ) -> None:
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="tureen-pgwork-"))
        self.database = database
        self.startup_timeout = startup_timeout
        self.detached = detached
        self.user = "postgres"
        self.bindir: Optional[Path] = None
        self.tmpdir: Optional[Path] = None
        self.port: Optional[int] = None

    def __repr__(self) -> str:
        return "PostgresServer(port=%s, dir=%s)" % (self.port, self.tmpdir)

    @property
    def datadir(self) -> Path:
        assert self.tmpdir is not None, "not started"
        return self.tmpdir / "data"

    @property
    def log_path(self) -> Path:
        assert self.tmpdir is not None, "not started"
        return self.tmpdir / "postgres.log"

    @property
    def dsn(self) -> str:
        if self.port is None:
            raise ServerError("PostgresServer not started")
        return "postgresql://%s@%s:%d/%s" % (self.user, HOST, self.port, self.database)

    def _as_postgres(self, cmd: List[str], timeout: float) -> "subprocess.CompletedProcess[str]":
        # PostgreSQL refuses to run as root; as anyone else we are already a
        # user it accepts.
        if os.geteuid() == 0:
            if shutil.which("runuser"):
                cmd = ["runuser", "-u", "postgres", "--"] + cmd
            else:
                cmd = ["su", "-s", "/bin/sh", "postgres", "-c", shlex.join(cmd)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        return subprocess.run(
            cmd,
            cwd=str(self.tmpdir),
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def _check(self, what: str, result: "subprocess.CompletedProcess[str]") -> None:
        if result.returncode != 0:
            raise ServerError(
                "PostgreSQL %s failed (exit %d):\n%s%s\n--- %s ---\n%s"
                % (what, result.returncode, result.stdout, result.stderr, self.log_path, log_tail(self.log_path))
            )

    def start(self) -> "PostgresServer":
        if self.port is not None:
            return self
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.bindir = postgres_bindir()
        # Not under workdir: pytest's tmp dirs are root-only (0700), which the
        # postgres user could not traverse.
        self.tmpdir = Path(tempfile.mkdtemp(prefix="tureen-pg-"))
        _track(self, not self.detached)
        try:
            if os.geteuid() == 0:
                pw = pwd.getpwnam("postgres")
                os.chown(self.tmpdir, pw.pw_uid, pw.pw_gid)
            self._check("initdb", self._as_postgres(
                [str(self.bindir / "initdb"), "-D", str(self.datadir), "-U", self.user,
                 "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"],
                timeout=120,
            ))
            with open(self.datadir / "postgresql.conf", "a", encoding="utf-8") as conf:
                # Durability is worthless for a cluster deleted after the run,
                # and costs seconds per test.
                conf.write(
                    "\n# tureen test server\n"
                    "listen_addresses = '%s'\n"
                    "unix_socket_directories = '%s'\n"
                    "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                    "max_connections = 200\n" % (HOST, self.tmpdir)
                )
            self._start_on_free_port()
            self._check("createdb", self._as_postgres(
                [str(self.bindir / "createdb"), "-h", HOST, "-p", str(self.port), "-U", self.user, self.database],
                timeout=60,
            ))
        except BaseException:
            self.stop()
            raise
        return self

    def _start_on_free_port(self) -> None:
        assert self.bindir is not None
        last = None
        for _ in range(3):
            port = free_port()
            result = self._as_postgres(
                [str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-l", str(self.log_path),
                 "-w", "-t", str(int(self.startup_timeout)), "-o", "-p %d" % port, "start"],
                timeout=self.startup_timeout + 30,
            )
            if result.returncode == 0:
                self.port = port
                return
            last = result
            if "already in use" not in log_tail(self.log_path, 20):
                break
        assert last is not None
        self._check("start", last)

    def postmaster_pid(self) -> Optional[int]:
        try:
            return int((self.datadir / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError, AssertionError):
            return None

    def stop(self) -> None:
        """Stops the cluster (fast, then immediate, then SIGKILL) and removes
        its directory; the log is copied into workdir first."""
        _track(self, False)
        if self.tmpdir is None:
            return
        try:
            pid = self.postmaster_pid()
            if pid is not None and self.bindir is not None and _pid_alive(pid):
                for mode in ("fast", "immediate"):
                    try:
                        result = self._as_postgres(
                            [str(self.bindir / "pg_ctl"), "-D", str(self.datadir), "-m", mode, "-w", "-t", "20",
                             "stop"],
                            timeout=40,
                        )
                    except subprocess.TimeoutExpired:
                        continue
                    if result.returncode == 0 or not _pid_alive(pid):
                        break
                if _pid_alive(pid):
                    _kill_pid(pid, 5.0)
            if self.log_path.exists():
                try:
                    shutil.copyfile(self.log_path, self.workdir / "postgres.log")
                except OSError:
                    pass
        finally:
            shutil.rmtree(self.tmpdir, ignore_errors=True)
            self.tmpdir = None
            self.port = None
            if self._own_workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "PostgresServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


# --- Kinto -------------------------------------------------------------------

_BACKENDS = {
    "memory": {
        "storage_backend": "kinto.core.storage.memory",
        "permission_backend": "kinto.core.permission.memory",
        "cache_backend": "kinto.core.cache.memory",
    },
    "postgresql": {
        "storage_backend": "kinto.core.storage.postgresql",
        "permission_backend": "kinto.core.permission.postgresql",
        "cache_backend": "kinto.core.cache.postgresql",
    },
}

_INI = """\
# Written by bindings/python/tests/servers.py for tests; not for production.
[server:main]
use = egg:waitress#main
host = {host}
port = %(http_port)s
threads = 8

[app:main]
use = egg:kinto
{app}
[loggers]
keys = root, summary

[handlers]
keys = console, json_console

[formatters]
keys = plain, json

[logger_root]
level = INFO
handlers = console

# The request summaries carry method, path and status only as extra fields,
# which the plain format would drop.
[logger_summary]
level = INFO
handlers = json_console
qualname = request.summary
propagate = 0

[handler_console]
class = StreamHandler
args = (sys.stderr,)
level = NOTSET
formatter = plain

[handler_json_console]
class = StreamHandler
args = (sys.stderr,)
level = NOTSET
formatter = json

[formatter_plain]
format = %(asctime)s %(levelname)s %(name)s %(message)s

[formatter_json]
class = kinto.core.JsonLogFormatter
"""


class KintoServer:
    """A Kinto server: ``start()`` (or ``with``) runs it, ``url`` is its
    ``http://127.0.0.1:PORT/v1``, ``stop()`` ends it.

    With ``backend="postgresql"`` and no ``dsn``, it starts (and later stops)
    its own :class:`PostgresServer`. ``settings`` adds lines to ``[app:main]``
    (e.g. ``{"kinto.paginate_by": "5"}``) or replaces them. ``detached``
    servers outlive this process (the CLI uses it); the others get SIGTERM
    when the thread that started them ends, so start them from the main
    thread (pytest fixtures are).

    ``workers=N`` serves Kinto with gunicorn and N worker processes (``None``:
    one waitress process); ``worker_pids()`` lists them, and gunicorn
    replaces one that dies. On PostgreSQL, ``commit_order`` (the default)
    applies packaging/kinto/commit_order.sql after ``kinto migrate``;
    ``False`` leaves Kinto's stock trigger, whose ``_since`` feed can skip
    records under concurrent writers.
    """

    def __init__(
        self,
        backend: str = "memory",
        workdir: Union[str, Path, None] = None,
        *,
        dsn: Optional[str] = None,
        settings: Optional[Mapping[str, str]] = None,
        startup_timeout: float = 30.0,
        detached: bool = False,
        workers: Optional[int] = None,
        commit_order: bool = True,
    ) -> None:
        if backend not in _BACKENDS:
            raise ValueError("backend must be one of %s" % sorted(_BACKENDS))
        if workers is not None and not 1 <= workers <= 32:
            raise ValueError("workers must be from 1 to 32")
        if workers is not None and workers > 1 and backend == "memory":
            # Each process would hold a store of its own.
            raise ValueError("several workers need the postgresql backend")
        self.backend = backend
        self.workers = workers
        self.commit_order = commit_order
        self._own_workdir = workdir is None
        self.workdir = Path(workdir) if workdir else Path(tempfile.mkdtemp(prefix="tureen-kinto-"))
        self.dsn = dsn
        self.settings = dict(settings or {})
        self.startup_timeout = startup_timeout
        self.detached = detached
        self.postgres: Optional[PostgresServer] = None
        self.port: Optional[int] = None
        self.process: Optional[subprocess.Popen] = None
        self.pid: Optional[int] = None
        self.ini_path = self.workdir / "kinto.ini"
        self.log_path = self.workdir / "kinto.log"

    def __repr__(self) -> str:
        return "KintoServer(%s, port=%s, pid=%s)" % (self.backend, self.port, self.pid)

    @property
    def root(self) -> str:
        if self.port is None:
            raise ServerError("KintoServer not started")
        return "http://%s:%d" % (HOST, self.port)

    @property
    def url(self) -> str:
        return self.root + "/v1"

    def app_settings(self) -> Dict[str, str]:
        """The ``[app:main]`` settings, ``settings`` given to the constructor last."""
        url = (self.dsn or "") if self.backend == "postgresql" else ""
        backends = _BACKENDS[self.backend]
        app = {
            # Kinto 26 serves /__flush__ from a plugin; flush_endpoint_enabled
            # is the switch older versions read, kept so both work.
            "kinto.includes": "kinto.plugins.flush",
            "kinto.flush_endpoint_enabled": "true",
            "multiauth.policies": "basicauth",
            "kinto.userid_hmac_secret": secrets.token_hex(32),
            "kinto.bucket_create_principals": "system.Authenticated",
            "kinto.storage_backend": backends["storage_backend"],
            "kinto.storage_url": url,
            "kinto.permission_backend": backends["permission_backend"],
            "kinto.permission_url": url,
            "kinto.cache_backend": backends["cache_backend"],
            "kinto.cache_url": url,
        }
        app.update(self.settings)
        return app

    def _write_ini(self) -> None:
        app = "".join("%s = %s\n" % kv for kv in self.app_settings().items())
        self.ini_path.write_text(_INI.format(host=HOST, app=app), encoding="utf-8")

    def _env(self) -> Dict[str, str]:
        env = dict(os.environ)
        # Kinto's heartbeat reads its config path from here, and logs an error
        # on every request when it is wrong.
        env["KINTO_INI"] = str(self.ini_path)
        return env

    def _run_kinto(self, *args: str, timeout: float = 120) -> None:
        with open(self.log_path, "ab") as log:
            result = subprocess.run(
                [str(_venv_bin("kinto")), *args, "--ini", str(self.ini_path)],
                cwd=str(self.workdir), env=self._env(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                timeout=timeout,
            )
        if result.returncode != 0:
            raise ServerError("kinto %s failed (exit %d)\n--- %s ---\n%s"
                              % (" ".join(args), result.returncode, self.log_path, log_tail(self.log_path)))

    def _apply_sql(self, path: Path) -> None:
        """Runs ``path`` on Kinto's database with psql (stops at the first error)."""
        assert self.dsn is not None
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        result = subprocess.run(
            [str(postgres_bindir() / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", self.dsn, "-f", str(path)],
            env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
        )
        if result.returncode != 0:
            raise ServerError("psql -f %s failed (exit %d):\n%s%s" % (path, result.returncode, result.stdout, result.stderr))

    def _command(self, port: int) -> List[str]:
        if self.workers is None:
            return [str(_venv_bin("kinto")), "start", "--ini", str(self.ini_path), "--port", str(port)]
        # gunicorn reads the app (and the logging sections) from the same
        # ini. Workers get SIGKILLed by the tests: a short graceful timeout
        # keeps stop() quick, and no preload keeps each worker's own
        # connections to PostgreSQL.
        return [str(_venv_bin("gunicorn")), "--paste", str(self.ini_path), "--bind", "%s:%d" % (HOST, port),
                "--workers", str(self.workers), "--graceful-timeout", "5", "--timeout", "120"]

    def worker_pids(self) -> List[int]:
        """gunicorn's worker processes now (empty for a waitress server)."""
        if self.workers is None or self.pid is None:
            return []
        return children_of(self.pid)

    def start(self) -> "KintoServer":
        if self.port is not None:
            return self
        self.workdir.mkdir(parents=True, exist_ok=True)
        _track(self, not self.detached)
        try:
            if self.backend == "postgresql" and self.dsn is None:
                self.postgres = PostgresServer(self.workdir, detached=self.detached).start()
                self.dsn = self.postgres.dsn
            self._write_ini()
            if self.backend == "postgresql":
                # Creates the tables; the memory backends have nothing to create.
                self._run_kinto("migrate")
                if self.commit_order:
                    self._apply_sql(COMMIT_ORDER_SQL)
            last_error = ""
            for _ in range(3):
                outcome = self._spawn_and_wait(free_port())
                if outcome is None:
                    return self
                last_error = outcome
                if "already in use" not in outcome:
                    break
            raise ServerError(last_error)
        except BaseException:
            self.stop()
            raise

    def _spawn_and_wait(self, port: int) -> Optional[str]:
        """Runs Kinto on ``port``; None once it answers, else why it did not."""
        cmd = self._command(port)
        if not self.detached:
            cmd = [sys.executable, "-c", _DIE_WITH_PARENT, str(os.getpid())] + cmd
        with open(self.log_path, "ab") as log:
            log.write(("--- starting on port %d: %s\n" % (port, " ".join(cmd[-10:]))).encode())
            log.flush()
            self.process = subprocess.Popen(
                cmd, cwd=str(self.workdir), env=self._env(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                # Its own session, so a Ctrl-C at the terminal goes to the test
                # run only, which then stops Kinto in order.
                start_new_session=True,
            )
        self.pid = self.process.pid
        self.port = port
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            status = self.process.poll()
            if status is not None:
                self._forget()
                return "Kinto exited with status %s before answering\n--- %s ---\n%s" % (
                    status, self.log_path, log_tail(self.log_path))
            try:
                r = http_request("GET", self.url + "/", timeout=2)
                if r.status == 200 and "project_name" in (r.json() or {}) and self._all_workers_up():
                    return None
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        why = "Kinto did not answer GET %s/ within %.0f s" % (self.url, self.startup_timeout)
        self._terminate()
        return "%s\n--- %s ---\n%s" % (why, self.log_path, log_tail(self.log_path))

    def _all_workers_up(self) -> bool:
        # One worker answering is not all of them listening yet; a test that
        # kills one right away must find the number it asked for.
        return self.workers is None or len(self.worker_pids()) >= self.workers

    def _forget(self) -> None:
        self.port = None
        self.pid = None

    def _terminate(self, timeout: float = 10.0) -> None:
        proc, self.process = self.process, None
        leader = self.pid
        try:
            self._end_leader(proc, timeout)
        finally:
            # gunicorn's arbiter stops its workers, but a worker it lost
            # track of (or all of them, had it been killed) stays in the
            # session it leads.
            if leader is not None:
                _kill_session(leader)

    def _end_leader(self, proc: Optional[subprocess.Popen], timeout: float) -> None:
        if proc is not None:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)
        elif self.pid is not None and _pid_alive(self.pid):
            _kill_pid(self.pid, timeout)
        self._forget()

    def stop(self, timeout: float = 10.0) -> None:
        """Terminates Kinto (SIGKILL after ``timeout`` s), then its own PostgreSQL."""
        _track(self, False)
        try:
            self._terminate(timeout)
        finally:
            try:
                if self.postgres is not None:
                    pg, self.postgres = self.postgres, None
                    self.dsn = None
                    pg.stop()
            finally:
                if self._own_workdir:
                    shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "KintoServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # Helpers for tests -------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, auth: Auth = None,
                headers: Optional[Mapping[str, str]] = None, timeout: float = 10.0) -> Response:
        """``path`` is relative to ``url`` (``/buckets/b``)."""
        return http_request(method, self.url + path, body=body, auth=auth, headers=headers, timeout=timeout)

    def flush(self) -> None:
        """Deletes everything in every backend."""
        r = self.request("POST", "/__flush__")
        if r.status != 202:
            raise ServerError("POST /__flush__ answered %d: %r" % (r.status, r.body[:500]))

    def create_collection(self, bucket: str, collection: str, auth: Auth) -> None:
        """Creates the bucket and the collection as ``auth`` (a dict with
        ``user`` and ``password``, or a pair); already existing is fine."""
        for path in ("/buckets/%s" % bucket, "/buckets/%s/collections/%s" % (bucket, collection)):
            r = self.request("PUT", path, body={"data": {}}, auth=auth, headers={"If-None-Match": "*"})
            if r.status not in (200, 201, 412):
                raise ServerError("PUT %s answered %d: %r" % (path, r.status, r.body[:500]))


# --- the non-Kinto REST API --------------------------------------------------


@dataclass
class LoggedRequest:
    """One request the RestServer received. ``headers`` has lower-case names;
    ``status`` is None for a dropped connection (or while still answering)."""

    method: str
    path: str
    query: Dict[str, List[str]]
    headers: Dict[str, str]
    body: bytes
    target: str = ""
    status: Optional[int] = None

    def header(self, name: str, default: Optional[str] = None) -> Optional[str]:
        return self.headers.get(name.lower(), default)

    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8")) if self.body else None


@dataclass
class _Fault:
    kind: str  # "fail" | "drop" | "delay"
    method: Optional[str]
    status: int = 503
    retry_after: Optional[Union[int, str]] = None
    seconds: float = 0.0


@dataclass
class _Rejection:
    message: str
    status: int
    methods: Tuple[str, ...] = ("PUT", "PATCH")


class _ErrorReply(Exception):
    def __init__(self, status: int, body: Any, headers: Optional[Dict[str, str]] = None) -> None:
        super().__init__(status)
        self.status = status
        self.body = body
        self.headers = headers or {}


class TrackingHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that knows its open connections, so that
    stopping it can wake handler threads blocked on idle keep-alive ones
    (the test servers' one base; hostile.py's servers use it too)."""

    daemon_threads = True

    def __init__(self, address: Tuple[str, int], handler: Any) -> None:
        self.connections: "set[socket.socket]" = set()
        self.connections_lock = threading.Lock()
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Wakes the handler threads blocked on idle keep-alive connections."""
        with self.connections_lock:
            conns = list(self.connections)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class _HTTPServer(TrackingHTTPServer):
    def __init__(self, app: "RestServer", address: Tuple[str, int]) -> None:
        self.app = app
        super().__init__(address, _Handler)


def read_request_body(h: BaseHTTPRequestHandler) -> bytes:
    """A request's body, chunked or with a Content-Length (the test servers'
    one reader; hostile.py's servers use it too)."""
    if "chunked" in (h.headers.get("Transfer-Encoding") or "").lower():
        chunks = []
        while True:
            line = h.rfile.readline(1024)
            if not line:
                break
            size = int(line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                # Trailers, up to the blank line.
                for _ in range(100):
                    if h.rfile.readline(8192) in (b"\r\n", b"\n", b""):
                        break
                break
            chunks.append(h.rfile.read(size))
            h.rfile.readline(8)
        return b"".join(chunks)
    length = int(h.headers.get("Content-Length") or 0)
    return h.rfile.read(length) if length > 0 else b""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "TureenTestREST/1"
    # Idle keep-alive connections end after this many seconds.
    timeout = 30
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def _serve(self) -> None:
        self.server.app._handle(self)

    do_GET = do_PUT = do_PATCH = do_DELETE = do_POST = do_HEAD = _serve

    def read_body(self) -> bytes:
        return read_request_body(self)

    def send_json(self, status: int, body: Any, headers: Optional[Mapping[str, str]] = None) -> None:
        """Sends ``body`` as JSON, or as it is when it is a :class:`RawBody`."""
        raw = isinstance(body, RawBody)
        data = b"" if body is None else body.data if raw else json.dumps(body).encode("utf-8")
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", body.content_type if raw else "application/json")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            cut = body.cut if raw else None
            sent = data if cut is None else data[:cut]
            if raw and body.pace > 0:
                step = len(sent) // 10 + 1
                for at in range(0, len(sent), step):
                    self.wfile.write(sent[at:at + step])
                    self.wfile.flush()
                    time.sleep(body.pace / 10)
            else:
                self.wfile.write(sent)
            if cut is not None:
                self.wfile.flush()
                self.close_connection = True


_CONTROL_FIELDS = ("uid", "rev", "version_ts", "removed", "modified_at")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def iso_stamp(ms: int, zone: str = "Z") -> str:
    """``ms`` (epoch) as an ISO 8601 date-time with milliseconds, written in
    ``zone``: "Z", "+HH:MM" or "+HHMM" (Salesforce's form), "-" offsets too."""
    minutes = 0
    if zone != "Z":
        digits = zone[1:].replace(":", "")
        minutes = (-1 if zone[0] == "-" else 1) * (int(digits[:2]) * 60 + int(digits[2:] or 0))
    at = (_EPOCH + timedelta(milliseconds=ms)).astimezone(timezone(timedelta(minutes=minutes)))
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + "%03d" % (at.microsecond // 1000) + zone


def iso_ms(text: str) -> int:
    """The epoch ms an ISO 8601 date-time with a zone names (ValueError otherwise)."""
    at = datetime.fromisoformat(text)
    if at.tzinfo is None:
        raise ValueError("no zone")
    return (at - _EPOCH) // timedelta(milliseconds=1)


class AttachmentKinto:
    """Kinto (memory storage, or ``backend``) with kinto-attachment storing
    files under ``root/files``, served by a plain HTTP file server at
    ``files_url``: what the blob tests and bench/blobs_kinto_bench.py sync
    against. Use with ``with``; ``kinto`` is the :class:`KintoServer`."""

    def __init__(self, root: Path, backend: str = "memory") -> None:
        self.files_dir = root / "files"
        self.files_dir.mkdir(parents=True, exist_ok=True)
        port = free_port()
        self.files_url = "http://%s:%d/" % (HOST, port)
        self._file_command = [sys.executable, "-m", "http.server", str(port), "--bind", HOST,
                              "--directory", str(self.files_dir)]
        self._file_server: Optional[subprocess.Popen[bytes]] = None
        self.kinto = KintoServer(backend, root / "kinto", settings={
            "kinto.includes": "kinto.plugins.flush kinto_attachment",
            "kinto.attachment.base_path": str(self.files_dir),
            "kinto.attachment.base_url": self.files_url,
            "kinto.attachment.extensions": "any",
        })

    def _files_answer(self) -> bool:
        try:
            return http_request("GET", self.files_url).status == 200
        except OSError:
            return False

    def start(self) -> "AttachmentKinto":
        self._file_server = subprocess.Popen(self._file_command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            if not wait_until(self._files_answer, 20):
                raise RuntimeError("the file server for attachments did not start")
            self.kinto.start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        self.kinto.stop()
        if self._file_server is not None:
            self._file_server.terminate()
            self._file_server.wait(20)
            self._file_server = None

    def __enter__(self) -> "AttachmentKinto":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class RestServer:
    """A JSON API that is not Kinto, for the generic REST sync target.

    Blobs live under ``/api/blobs/<hex>`` and ``/api/uploads`` (``blobs``,
    a :class:`rest_blobs.BlobShelf`). ``GET /api/items`` lists ``{"items": [...], "next_cursor": str|null}``,
    sorted by ``(version_ts, uid)``; ``?limit=``, ``?cursor=`` (opaque, carries
    the filter of the first page), ``?updated_after=<ms>`` (exclusive; also
    returns tombstones ``{"uid", "removed": true, "version_ts"}``).
    ``GET|PUT|PATCH|DELETE /api/items/<uid>`` read, create-or-replace, merge
    (top-level fields) and delete one record; writes answer the stored record.
    A write whose body has a ``rev`` different from the stored one (or for a
    record that does not exist) is refused with 409 ``{"current": record,
    tombstone or null}``. Every request needs ``X-Api-Key`` (unless
    ``api_key`` is None: a public server).

    ``checks_rev=False`` makes a server without concurrency control: the
    body's ``rev`` is ignored and every write is taken. ``iso_stamps`` (a zone:
    "Z", "+00:00", "+0000", "+02:00"; may change between writes) gives every
    record written a ``modified_at``, its ``version_ts`` as an ISO 8601 text in
    that zone, and makes ``updated_after`` such a text (an integer is then a
    400); :meth:`plant_stamp` sets a record's ``modified_at`` to any text.

    ``version_ts`` is the server clock in ms, the same for writes within one
    millisecond; :meth:`set_clock` pins it so tests can make several records
    share a stamp. Faults are queued with :meth:`fail_next`,
    :meth:`throttle_next`, :meth:`drop_next`, :meth:`delay_next` (each request
    takes the first queued fault whose method matches), or set with
    :meth:`set_unauthorized` and :meth:`reject_uid`. Queued faults act
    before the key check, as a proxy in front of the API would.
    ``faults`` presets them: ``{"fail_next": 2, "drop_next": 1,
    "throttle_next": 1, "unauthorized": True, "reject_uid": "u1"}``.
    """

    def __init__(
        self,
        api_key: Optional[str] = "secret",
        *,
        faults: Optional[Mapping[str, Any]] = None,
        page_size: int = 50,
        max_page_size: int = 1000,
        checks_rev: bool = True,
        iso_stamps: Optional[str] = None,
    ) -> None:
        self.api_key = api_key
        self.checks_rev = checks_rev
        self.iso_stamps = iso_stamps
        self.page_size = page_size
        self.max_page_size = max_page_size
        self._lock = threading.RLock()
        self._records: Dict[str, Dict[str, Any]] = {}
        self._tombstones: Dict[str, Dict[str, Any]] = {}
        self._revs: Dict[str, int] = {}
        self._clock: Optional[int] = None
        self._last_ts = 0
        self._log: List[LoggedRequest] = []
        self._faults: List[_Fault] = []
        self._unauthorized = False
        self._rejections: Dict[str, _Rejection] = {}
        self._httpd: Optional[_HTTPServer] = None
        self._thread: Optional[threading.Thread] = None
        #: The blobs under /api/blobs (see rest_blobs.py).
        self.blobs = BlobShelf()
        if faults:
            self.configure(**faults)

    def __repr__(self) -> str:
        return "RestServer(port=%s)" % (self.port if self._httpd else None)

    # lifecycle ---------------------------------------------------------------

    def start(self) -> "RestServer":
        if self._httpd is not None:
            return self
        self._httpd = _HTTPServer(self, (HOST, 0))
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
            name="RestServer:%d" % self.port, daemon=True,
        )
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def __enter__(self) -> "RestServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise ServerError("RestServer not started")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """Base URL, ``http://127.0.0.1:PORT``."""
        return "http://%s:%d" % (HOST, self.port)

    @property
    def items_url(self) -> str:
        return self.url + "/api/items"

    # faults ------------------------------------------------------------------

    def configure(self, **faults: Any) -> None:
        for name, value in faults.items():
            if name == "unauthorized":
                self.set_unauthorized(bool(value))
            elif name == "reject_uid":
                for uid in [value] if isinstance(value, str) else value:
                    self.reject_uid(uid)
            elif name in ("fail_next", "throttle_next", "drop_next"):
                getattr(self, name)(int(value))
            else:
                raise ValueError("unknown fault %r" % name)

    def fail_next(self, n: int = 1, status: int = 503, retry_after: Optional[Union[int, str]] = 1,
                  method: Optional[str] = None) -> None:
        """The next ``n`` requests (of ``method``, if given) get ``status`` with
        ``Retry-After`` (omitted when None) and ``{"error": ...}``."""
        with self._lock:
            self._faults.extend(_Fault("fail", method, status, retry_after) for _ in range(n))

    def throttle_next(self, n: int = 1, retry_after: Optional[Union[int, str]] = 1,
                      method: Optional[str] = None) -> None:
        self.fail_next(n, 429, retry_after, method)

    def drop_next(self, n: int = 1, method: Optional[str] = None) -> None:
        """The next ``n`` requests are read, then the connection is closed unanswered."""
        with self._lock:
            self._faults.extend(_Fault("drop", method) for _ in range(n))

    def delay_next(self, n: int, seconds: float, method: Optional[str] = None) -> None:
        """The next ``n`` requests are answered normally after ``seconds`` (at most 60)."""
        with self._lock:
            self._faults.extend(_Fault("delay", method, seconds=min(float(seconds), 60.0)) for _ in range(n))

    def set_unauthorized(self, on: bool = True) -> None:
        """While on, every request is answered 401, whatever its key."""
        with self._lock:
            self._unauthorized = on

    def reject_uid(self, uid: str, message: Optional[str] = None, status: int = 422,
                   methods: Iterable[str] = ("PUT", "PATCH")) -> None:
        """Writes of ``uid`` are refused with ``status`` and ``{"error": message}``."""
        with self._lock:
            self._rejections[uid] = _Rejection(message or "record %s is invalid" % uid, status,
                                               tuple(m.upper() for m in methods))

    def accept_uid(self, uid: str) -> None:
        with self._lock:
            self._rejections.pop(uid, None)

    def clear_faults(self) -> None:
        with self._lock:
            self._faults.clear()
            self._unauthorized = False
            self._rejections.clear()

    def pending_faults(self) -> int:
        with self._lock:
            return len(self._faults)

    # request log -------------------------------------------------------------

    def requests(self, method: Optional[str] = None, path: Optional[str] = None) -> List[LoggedRequest]:
        """The requests received so far, oldest first; ``path`` matches a prefix."""
        with self._lock:
            return [r for r in self._log
                    if (method is None or r.method == method.upper())
                    and (path is None or r.path.startswith(path))]

    def request_count(self, method: Optional[str] = None, path: Optional[str] = None) -> int:
        return len(self.requests(method, path))

    def clear_log(self) -> None:
        with self._lock:
            self._log.clear()

    # data, as the server sees it ---------------------------------------------

    def set_clock(self, ms: Optional[int]) -> None:
        """Pins ``version_ts`` of later writes to ``ms``; None follows real time again."""
        with self._lock:
            self._clock = None if ms is None else int(ms)

    def _stamp(self, version_ts: Optional[int] = None) -> int:
        if version_ts is not None:
            ts = int(version_ts)
        elif self._clock is not None:
            ts = self._clock
        else:
            # Never backwards, even if the wall clock is; equal stamps within
            # one millisecond are intended.
            ts = max(int(time.time() * 1000), self._last_ts)
        self._last_ts = max(self._last_ts, ts)
        return ts

    def _write(self, uid: str, fields: Mapping[str, Any], version_ts: Optional[int] = None) -> Dict[str, Any]:
        record = {k: v for k, v in fields.items() if k not in _CONTROL_FIELDS}
        rev = self._revs.get(uid, 0) + 1
        self._revs[uid] = rev
        record.update(uid=uid, rev=rev, version_ts=self._stamp(version_ts))
        if self.iso_stamps is not None:
            record["modified_at"] = iso_stamp(record["version_ts"], self.iso_stamps)
        self._records[uid] = record
        self._tombstones.pop(uid, None)
        return dict(record)

    def _remove(self, uid: str, version_ts: Optional[int] = None) -> Dict[str, Any]:
        del self._records[uid]
        self._revs[uid] = self._revs.get(uid, 0) + 1
        tomb = {"uid": uid, "removed": True, "version_ts": self._stamp(version_ts)}
        if self.iso_stamps is not None:
            tomb["modified_at"] = iso_stamp(tomb["version_ts"], self.iso_stamps)
        self._tombstones[uid] = tomb
        return dict(tomb)

    def set_record(self, record: Mapping[str, Any], version_ts: Optional[int] = None) -> Dict[str, Any]:
        """A server-side create or replace of ``record`` (which has ``uid``);
        bumps ``rev``; stamps it now (or ``version_ts``). Returns the stored copy."""
        with self._lock:
            return self._write(str(record["uid"]), record, version_ts)

    def patch_record(self, uid: str, fields: Mapping[str, Any], version_ts: Optional[int] = None) -> Dict[str, Any]:
        with self._lock:
            merged = dict(self._records[uid])
            merged.update(fields)
            return self._write(uid, merged, version_ts)

    def plant_stamp(self, uid: str, text: Any) -> None:
        """Sets ``modified_at`` of ``uid`` to ``text`` as it is (a server writing
        a stamp that is no date-time); its ``version_ts`` keeps its place."""
        with self._lock:
            self._records[uid]["modified_at"] = text

    def delete_record(self, uid: str, version_ts: Optional[int] = None) -> Dict[str, Any]:
        """A server-side delete; leaves (and returns) a tombstone."""
        with self._lock:
            return self._remove(uid, version_ts)

    def get_record(self, uid: str) -> Optional[Dict[str, Any]]:
        with self._lock:
            r = self._records.get(uid)
            return dict(r) if r is not None else None

    def records(self) -> List[Dict[str, Any]]:
        """Live records, sorted by (version_ts, uid)."""
        with self._lock:
            return [dict(r) for r in sorted(self._records.values(), key=_order)]

    def tombstones(self) -> List[Dict[str, Any]]:
        with self._lock:
            return [dict(t) for t in sorted(self._tombstones.values(), key=_order)]

    def clear(self) -> None:
        """Forgets all records, tombstones and revisions."""
        with self._lock:
            self._records.clear()
            self._tombstones.clear()
            self._revs.clear()

    # HTTP --------------------------------------------------------------------

    def _take_fault(self, method: str) -> Optional[_Fault]:
        with self._lock:
            for i, f in enumerate(self._faults):
                if f.method is None or f.method.upper() == method:
                    return self._faults.pop(i)
        return None

    def _handle(self, h: _Handler) -> None:
        try:
            body = h.read_body()
        except (OSError, ValueError):
            h.close_connection = True
            return
        parsed = urllib.parse.urlsplit(h.path)
        entry = LoggedRequest(
            method=h.command,
            path=urllib.parse.unquote(parsed.path),
            query=urllib.parse.parse_qs(parsed.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in h.headers.items()},
            body=body,
            target=h.path,
        )
        with self._lock:
            self._log.append(entry)
        fault = self._take_fault(h.command)
        if fault is not None and fault.kind == "drop":
            h.close_connection = True
            return
        if fault is not None and fault.kind == "delay":
            time.sleep(fault.seconds)
        try:
            if fault is not None and fault.kind == "fail":
                headers = {} if fault.retry_after is None else {"Retry-After": str(fault.retry_after)}
                raise _ErrorReply(fault.status, {"error": "injected %d" % fault.status}, headers)
            with self._lock:
                unauthorized = self._unauthorized
            if unauthorized or (self.api_key is not None and h.headers.get("X-Api-Key") != self.api_key):
                raise _ErrorReply(401, {"error": "missing or wrong X-Api-Key"})
            status, result, headers = self._route(h.command, entry, body)
        except _ErrorReply as e:
            status, result, headers = e.status, e.body, e.headers
        entry.status = status
        try:
            h.send_json(status, result, headers)
        except OSError:
            h.close_connection = True

    def _route(self, method: str, entry: LoggedRequest, body: bytes) -> Tuple[int, Any, Dict[str, str]]:
        path = entry.path.rstrip("/")
        if self.blobs.handles(entry.path):
            return self.blobs.route(method, entry.path, entry.headers, body)
        if path == "/api/items":
            if method not in ("GET", "HEAD"):
                raise _ErrorReply(405, {"error": "method not allowed"}, {"Allow": "GET"})
            return 200, self._list(entry.query), {}
        # The uid is cut from the raw path, so an escaped "/" stays in it.
        prefix = "/api/items/"
        raw = urllib.parse.urlsplit(entry.target).path
        if not raw.startswith(prefix) or "/" in raw[len(prefix):] or not raw[len(prefix):]:
            raise _ErrorReply(404, {"error": "no such resource"})
        uid = urllib.parse.unquote(raw[len(prefix):])
        if method in ("GET", "HEAD"):
            with self._lock:
                record = self._records.get(uid)
                if record is None:
                    raise _ErrorReply(404, {"error": "not found"})
                return 200, dict(record), {"ETag": '"%d"' % record["rev"]}
        if method == "DELETE":
            with self._lock:
                self._check_rejection(uid, method)
                if uid not in self._records:
                    raise _ErrorReply(404, {"error": "not found"})
                return 200, self._remove(uid), {}
        if method not in ("PUT", "PATCH"):
            raise _ErrorReply(405, {"error": "method not allowed"}, {"Allow": "GET, PUT, PATCH, DELETE"})
        try:
            fields = json.loads(body.decode("utf-8")) if body else None
        except ValueError:
            raise _ErrorReply(400, {"error": "body is not JSON"})
        if not isinstance(fields, dict):
            raise _ErrorReply(400, {"error": "body must be a JSON object"})
        if "uid" in fields and fields["uid"] != uid:
            raise _ErrorReply(400, {"error": "uid in body differs from the URL"})
        with self._lock:
            self._check_rejection(uid, method)
            current = self._records.get(uid)
            if self.checks_rev and fields.get("rev") is not None and (current is None or current["rev"] != fields["rev"]):
                shown = current if current is not None else self._tombstones.get(uid)
                raise _ErrorReply(409, {"current": dict(shown) if shown else None})
            if method == "PATCH":
                if current is None:
                    raise _ErrorReply(404, {"error": "not found"})
                merged = dict(current)
                merged.update(fields)
                fields = merged
            stored = self._write(uid, fields)
        return (201 if current is None else 200), stored, {"ETag": '"%d"' % stored["rev"]}

    def _check_rejection(self, uid: str, method: str) -> None:
        rejection = self._rejections.get(uid)
        if rejection is not None and method in rejection.methods:
            raise _ErrorReply(rejection.status, {"error": rejection.message})

    def _list(self, query: Dict[str, List[str]]) -> Dict[str, Any]:
        def one(name: str) -> Optional[str]:
            values = query.get(name)
            return values[-1] if values else None

        since = one("updated_after")
        try:
            limit = int(one("limit") or self.page_size)
            updated_after = None if since in (None, "") else (
                iso_ms(since) if self.iso_stamps is not None else int(since))  # type: ignore[arg-type]
        except ValueError:
            raise _ErrorReply(400, {"error": "limit is an integer, updated_after an integer or (with ISO stamps) a date-time"})
        if limit < 1:
            raise _ErrorReply(400, {"error": "limit must be positive"})
        limit = min(limit, self.max_page_size)
        after_key: Optional[Tuple[int, str]] = None
        cursor = one("cursor")
        if cursor:
            try:
                state = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")).decode("utf-8"))
                after_key = (int(state["ts"]), str(state["uid"]))
                # The cursor carries the first page's filter, so later pages
                # cannot drift from it whatever the query repeats.
                updated_after = state["ua"]
            except (ValueError, KeyError, TypeError, binascii.Error, UnicodeError):
                raise _ErrorReply(400, {"error": "bad cursor"})
        with self._lock:
            items = list(self._records.values())
            if updated_after is not None:
                items += list(self._tombstones.values())
                items = [r for r in items if r["version_ts"] > updated_after]
            items.sort(key=_order)
            if after_key is not None:
                items = [r for r in items if _order(r) > after_key]
            page = [dict(r) for r in items[:limit]]
        next_cursor = None
        if len(items) > limit:
            last = page[-1]
            state = {"ts": last["version_ts"], "uid": last["uid"], "ua": updated_after}
            next_cursor = base64.urlsafe_b64encode(json.dumps(state).encode("utf-8")).decode("ascii")
        return {"items": page, "next_cursor": next_cursor}


def _order(record: Mapping[str, Any]) -> Tuple[int, str]:
    return (record["version_ts"], record["uid"])


# --- the CLI -----------------------------------------------------------------


def _read_int(path: Path) -> Optional[int]:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def cli_kinto_start(directory: Path, backend: str, timeout: float, workers: Optional[int] = None,
                    commit_order: bool = True) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    pid = _read_int(directory / "kinto.pid")
    if pid is not None and _pid_alive(pid) and "kinto" in _pid_cmdline(pid):
        print("Kinto already runs from %s (pid %d); stop it first" % (directory, pid), file=sys.stderr)
        return 1
    try:
        server = KintoServer(backend, directory, startup_timeout=timeout, detached=True, workers=workers,
                             commit_order=commit_order)
        server.start()
    except (ServerError, ValueError) as e:
        print(str(e), file=sys.stderr)
        return 1
    if server.postgres is not None:
        assert server.postgres.tmpdir is not None
        (directory / "postgres.dir").write_text(str(server.postgres.tmpdir) + "\n")
        (directory / "postgres.dsn").write_text(server.postgres.dsn + "\n")
        (directory / "postgres.pid").write_text("%s\n" % server.postgres.postmaster_pid())
    (directory / "kinto.pid").write_text("%d\n" % server.pid)
    (directory / "kinto.url").write_text(server.url + "\n")
    print(server.url)
    return 0


def cli_kinto_stop(directory: Path, timeout: float) -> int:
    status = 0
    pid = _read_int(directory / "kinto.pid")
    if pid is not None and _pid_alive(pid):
        # The pid file may be stale and the number reused by another program.
        if "kinto" in _pid_cmdline(pid):
            try:
                _kill_pid(pid, timeout)
            except ServerError as e:
                print(str(e), file=sys.stderr)
                status = 1
        else:
            print("pid %d is not Kinto any more; left alone" % pid, file=sys.stderr)
            pid = None
    if pid is not None:
        # gunicorn's workers live in the session Kinto's process leads.
        try:
            # A stale number may lead someone else's session now.
            _kill_session(pid, marker="kinto")
        except ServerError as e:
            print(str(e), file=sys.stderr)
            status = 1
    pg_dir_file = directory / "postgres.dir"
    if pg_dir_file.exists():
        pg = PostgresServer(directory)
        pg.tmpdir = Path(pg_dir_file.read_text().strip())
        if pg.tmpdir.is_dir() and pg.tmpdir.name.startswith("tureen-pg-"):
            try:
                pg.bindir = postgres_bindir()
                pg.stop()
            except ServerError as e:
                print(str(e), file=sys.stderr)
                status = 1
    for name in ("kinto.pid", "kinto.url", "postgres.pid", "postgres.dir", "postgres.dsn"):
        try:
            (directory / name).unlink()
        except FileNotFoundError:
            pass
    return status


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Test servers for Tureen's sync tests.")
    sub = parser.add_subparsers(dest="server", required=True)
    kinto = sub.add_parser("kinto", help="a Kinto server, detached")
    kinto.add_argument("action", choices=("start", "stop"))
    kinto.add_argument("--dir", required=True, type=Path, help="where the ini, log, pid and url files go")
    kinto.add_argument("--backend", choices=sorted(_BACKENDS), default="memory")
    kinto.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for start or stop")
    kinto.add_argument("--workers", type=int, default=None,
                       help="serve with gunicorn and this many worker processes (default: one waitress process)")
    kinto.add_argument("--stock-timestamps", action="store_true",
                       help="PostgreSQL: leave Kinto's timestamp trigger as shipped (no commit_order.sql)")
    args = parser.parse_args(argv)
    directory = args.dir.resolve()
    if args.action == "start":
        return cli_kinto_start(directory, args.backend, args.timeout, args.workers, not args.stock_timestamps)
    return cli_kinto_stop(directory, args.timeout)


if __name__ == "__main__":
    sys.exit(main())
