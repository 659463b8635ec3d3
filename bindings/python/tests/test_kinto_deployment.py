"""The Kinto deployment the sync tests run on: PostgreSQL, several gunicorn
workers, and packaging/kinto/commit_order.sql. No Tureen here: what a sync
client relies on from the server, checked over plain HTTP.

Kinto's stock timestamp trigger, under concurrent writers of one
collection, drops records from the ``_since`` feed and answers 201 for
creates it then rolls back (bench/kinto_feed_bench.py shows it on a stock
deployment); these tests hold the deployment with the fix to losing nothing.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Iterator

import pytest

from conftest import KINTO_AUTH
from kinto_feed import run_trial
from servers import KintoServer, http_request, session_members, wait_until


@pytest.fixture(scope="module")
def kinto_workers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KintoServer]:
    server = KintoServer("postgresql", tmp_path_factory.mktemp("kinto_workers"), workers=2)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def test_the_since_feed_loses_nothing_under_concurrent_batches(kinto_workers: KintoServer) -> None:
    kinto_workers.create_collection("feed", "feed", KINTO_AUTH)
    # Four writers on two workers: the stock trigger loses records from the
    # feed in every such run of this size (bench/kinto_feed_bench.py).
    trial = run_trial(kinto_workers, "feed", "feed", KINTO_AUTH, writers=4, batches=8)
    assert trial.failed_batches == 0, trial.summary()
    assert trial.acknowledged == trial.final and len(trial.final) == trial.written, trial.summary()
    assert trial.lost == set(), trial.summary()


def test_the_trigger_is_in_place(kinto_workers: KintoServer) -> None:
    import psycopg2  # installed with kinto[postgresql]
    conn = psycopg2.connect(kinto_workers.dsn)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT tgname FROM pg_trigger WHERE tgrelid = 'objects'::regclass ORDER BY tgname")
            names = [r[0] for r in cur.fetchall()]
    finally:
        conn.close()
    # PostgreSQL fires triggers of one kind in name order: the lock first.
    assert names == ["tgr_objects_commit_order", "tgr_objects_last_modified"]


def test_a_killed_worker_is_replaced_and_stop_leaves_nothing(tmp_path: Path) -> None:
    server = KintoServer("postgresql", tmp_path, workers=2)
    with server:
        first = server.worker_pids()
        assert len(first) == 2
        os.kill(first[0], signal.SIGKILL)
        assert wait_until(lambda: len(server.worker_pids()) == 2 and first[0] not in server.worker_pids(), 60)
        assert http_request("GET", server.url + "/").status == 200
        leader = server.pid
        assert leader is not None
    assert session_members(leader) == []


def test_one_worker_and_the_memory_backend_use_no_gunicorn_unless_asked(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        KintoServer("memory", tmp_path, workers=2)
    with KintoServer("memory", tmp_path, workers=1) as server:
        assert len(server.worker_pids()) == 1
        assert http_request("GET", server.url + "/").status == 200
