"""The Jepsen-style proof run (docs/proof.md) at a small size: four device
processes on Kinto (PostgreSQL, two gunicorn workers, its history kept),
each behind its own port of the seeded fault-injecting proxy, with device
and worker SIGKILLs and partitions; then every check of convergence.py and
proof_checks.py. ``make proof`` runs the long version."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

import pytest

import convergence
import proof_checks
from conftest import KINTO_AUTH
from fault_proxy import FAULTS, FaultProxy
from servers import KintoServer, http_request

#: Change it to explore; a failure names the seed and the replaying command.
PROOF_SEED = int(os.environ.get("TUREEN_PROOF_SEED", "20261129"))
HISTORY = {"kinto.includes": "kinto.plugins.flush kinto.plugins.history", "kinto.retry_after_seconds": "1"}


@pytest.fixture(scope="module")
def kinto_history(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KintoServer]:
    with KintoServer("postgresql", tmp_path_factory.mktemp("kinto_proof"), workers=2, settings=HISTORY) as server:
        yield server


@pytest.mark.parametrize("seed", [PROOF_SEED, PROOF_SEED + 1])
def test_devices_stay_consistent_through_faults_kills_and_partitions(
    kinto_history: KintoServer, tmp_path: Path, seed: int
) -> None:
    replay = ("TUREEN_PROOF_SEED=%d python -m pytest bindings/python/tests/test_proof.py -k 'consistent and %d'"
              % (seed, seed))
    # More drop-cuts than the long run's: at this size they are what makes
    # writes whose answer was lost, edited again, then synced down.
    report = convergence.run(kinto_history, tmp_path, devices=4, ops=100, seed=seed, device_kills=4, worker_kills=2,
                             bucket="proof%d" % seed, budget=240, faults=True, partitions=2, replay=replay,
                             strict=True, fault_shares=dict(FAULTS, **{"drop-cut": 0.1}))
    assert report.device_kills + report.worker_kills > 0 and report.partitions == 2, report
    # The proxy did its work and the history checks ran on real traffic.
    assert report.faults.get("drop", 0) > 0 and report.faults.get("pass", 0) > 0, report.faults
    assert report.history.commits > convergence.SHARED and report.history.reads > 0 and report.history.writes > 0, report
    # Strict: a write sent again without a precondition over a later one
    # is a replay, whether a later run or a retry inside one sent it.
    assert report.history.replays == 0 and report.history.blind_replays == 0 and report.problems == [], report


def test_the_proxy_drops_an_answer_after_kinto_committed(kinto_history: KintoServer, tmp_path: Path) -> None:
    """A "drop" reaches Kinto, which commits, and the device sees its
    connection reset; the log says so, and the same seed drops the same
    request again."""
    kinto_history.create_collection("proxyb", "c", KINTO_AUTH)
    seed = next(s for s in range(1000) if FaultProxy(kinto_history.url, 1, s, tmp_path / "probe.log",
                                                     faults={"drop": 0.5}).choose(0, 0, "PUT") == "drop")
    with FaultProxy(kinto_history.url, 1, seed, tmp_path / "proxy.log", faults={"drop": 0.5}) as proxy:
        with pytest.raises(OSError):
            http_request("PUT", proxy.url(0) + "/buckets/proxyb/collections/c/records/r", {"data": {"v": 1}},
                         auth=KINTO_AUTH, timeout=10)
    r = kinto_history.request("GET", "/buckets/proxyb/collections/c/records/r", auth=KINTO_AUTH)
    assert r.status == 200 and r.json()["data"]["v"] == 1
    log = [json.loads(line) for line in (tmp_path / "proxy.log").read_text().splitlines()]
    assert log[0]["fault"] == "drop" and log[0]["status"] == [201] and log[0]["n"] == 0


def test_a_partition_cuts_one_device_off_and_not_the_others(kinto_history: KintoServer, tmp_path: Path) -> None:
    with FaultProxy(kinto_history.url, 2, 1, tmp_path / "proxy.log", faults={}) as proxy:
        proxy.partition(0, 30.0, "reset")
        with pytest.raises(OSError):
            http_request("GET", proxy.url(0) + "/", timeout=10)
        assert http_request("GET", proxy.url(1) + "/", timeout=10).status == 200
        proxy.calm()
        assert http_request("GET", proxy.url(0) + "/", timeout=10).status == 200


def test_the_history_checks_name_a_replayed_write() -> None:
    """T, U, T on the server is a replay; T, T (the proxy's duplicate) and
    T, U, T after its writer chose "yours" are not."""
    history = {"r": [(1, "0.1.1"), (2, "1.1.1"), (3, "0.1.1")], "s": [(1, "0.1.2"), (2, "0.1.2")]}
    journals = {0: ["did r 0.1.1", "did s 0.1.2"], 1: ["read r 0.1.1", "did r 1.1.1"]}
    fig = proof_checks.check(history, journals)
    assert fig.replays == 1 and fig.duplicates == 1, fig
    assert any(p.startswith("replayed write: r got 0.1.1") for p in fig.problems), fig.problems
    fig = proof_checks.check(history, {0: journals[0] + ["yours r 0.1.1 3"], 1: journals[1]})
    assert fig.replays == 0 and fig.problems == [], fig.problems


def test_the_history_checks_name_each_session_guarantee() -> None:
    history = {"r": [(1, "a"), (2, "b"), (3, "c")]}
    assert [p.split(":")[0] for p in proof_checks.check(history, {0: ["read r b", "read r a"]}).problems] \
        == ["monotonic reads"]
    assert [p.split(":")[0] for p in proof_checks.check(history, {0: ["acked-write r c", "read r b"]}).problems] \
        == ["read-your-writes"]
    assert [p.split(":")[0] for p in proof_checks.check(history, {0: ["read r c", "did r b"]}).problems] \
        == ["writes-follow-reads"]
    assert [p.split(":")[0] for p in proof_checks.check(history, {0: ["did r c", "did r b"]}).problems] \
        == ["monotonic writes"]
    assert [p.split(":")[0] for p in proof_checks.check(history, {0: ["acked-write r z"]}).problems] \
        == ["acknowledged write lost"]
