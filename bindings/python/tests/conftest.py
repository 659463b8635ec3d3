"""Shared helpers for the binding's tests.

Run from the repository root:
    PYTHONPATH=bindings/python python -m pytest bindings/python/tests -q
(or with the package installed). The library is found the way the binding
finds it ($TUREEN_LIB, the package directory, then .build/release).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional

import pytest

try:
    import tureen
except ImportError:
    # Run without PYTHONPATH (e.g. `.venv/bin/python -m pytest FILE` from the
    # repository root): the package beside these tests is the one meant.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import tureen

from servers import KintoServer, RestServer

REPO = Path(__file__).resolve().parents[3]
HEADER = REPO / "include" / "tureen.h"

# What no encrypted store may show on disk: SQLite's magic header, the name
# and schema of the table every store has, and that table's one row.
PLAINTEXT_MARKERS = (b"SQLite format 3", b"tureen_meta", b"CREATE TABLE", b"format_version")


def header_text() -> str:
    """include/tureen.h with its comments removed."""
    text = HEADER.read_text(encoding="utf-8")
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


def package_parent() -> str:
    """The directory that holds the imported ``tureen`` package."""
    return str(Path(tureen.__file__).resolve().parent.parent)


def child_env(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """Environment for a child Python: the same library and package as ours."""
    env = dict(os.environ)
    env["TUREEN_LIB"] = tureen.LIBRARY_PATH
    env["PYTHONPATH"] = os.pathsep.join(
        [package_parent()] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    )
    if extra:
        env.update(extra)
    return env


def run_python(
    code: str, args: Iterable[str] = (), timeout: float = 60, **kwargs
) -> "subprocess.CompletedProcess[str]":
    """Runs ``code`` in a new interpreter (sys.executable unless ``executable``
    is given) with :func:`child_env`; captures its output."""
    executable = kwargs.pop("executable", sys.executable)
    env = kwargs.pop("env", None) or child_env()
    cmd: List[str] = [executable, "-c", code, *args]
    return subprocess.run(
        cmd, env=env, capture_output=True, text=True, timeout=timeout, **kwargs
    )


def file_bytes(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


def assert_no_plaintext(path: Path) -> None:
    """The store file (and its WAL, if any) shows none of the plaintext markers."""
    for p in (path, Path(str(path) + "-wal")):
        data = file_bytes(p)
        for marker in PLAINTEXT_MARKERS:
            assert marker not in data, "%r found in %s" % (marker, p)


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store.db"


# --- sync servers (see servers.py) -------------------------------------------

KINTO_AUTH = {"user": "alice", "password": "pw"}


@pytest.fixture(scope="session")
def kinto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KintoServer]:
    """Kinto with memory backends, shared by the whole run; tests keep apart
    by using their own bucket (see ``kinto_collection``)."""
    server = KintoServer("memory", tmp_path_factory.mktemp("kinto"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def kinto_pg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KintoServer]:
    """Kinto on its own PostgreSQL cluster, shared by the whole run."""
    server = KintoServer("postgresql", tmp_path_factory.mktemp("kinto_pg"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def rest_server() -> Iterator[RestServer]:
    """A fresh non-Kinto REST API whose key is "secret"."""
    server = RestServer(api_key="secret")
    server.start()
    try:
        yield server
    finally:
        server.stop()


def new_kinto_collection(server: KintoServer) -> Dict[str, Any]:
    """A new bucket and collection on ``server``, owned by alice: the Tureen
    Kinto target's JSON without "type"."""
    suffix = uuid.uuid4().hex[:12]
    target = {"url": server.url, "bucket": "b" + suffix, "collection": "c" + suffix, "auth": dict(KINTO_AUTH)}
    server.create_collection(target["bucket"], target["collection"], KINTO_AUTH)
    return target


@pytest.fixture
def kinto_collection(kinto: KintoServer) -> Dict[str, Any]:
    return new_kinto_collection(kinto)
