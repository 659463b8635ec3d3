"""Several processes on one store file.

SQLite coordinates processes with POSIX locks, which belong to a process,
not to a descriptor: closing any descriptor of the file drops them all. A
library that reads the store file with a descriptor of its own while SQLite
has it open (to look at its header, say) silently unlocks the whole
process. Another process closing the store then thinks it is the last
user, checkpoints and deletes the WAL, and every later commit of the first
process goes to a log no one else reads. These tests catch that.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import List

import tureen

from conftest import run_python

KEY = "c3" * 32
SPECS = [{"path": "n", "type": "integer"}]
ALL = {"queryType": "all", "soupName": "x", "pageSize": 1}

COUNT = textwrap.dedent(
    """
    import sys, tureen
    with tureen.Store.open(sys.argv[1], raw_key=sys.argv[2]) as s:
        print(s.count({"queryType": "all", "soupName": "x"}))
    """
)


def other_process_count(path: Path) -> int:
    """Opens the store in a child process, counts, closes it (which
    checkpoints) and returns the count."""
    done = run_python(COUNT, [str(path), KEY])
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip())


def test_commits_after_another_process_closed_the_store_reach_other_processes(store_path: Path) -> None:
    with tureen.Store.open(store_path, raw_key=KEY) as store:
        store.register_soup("x", SPECS)
        for round_ in range(1, 5):
            store.upsert("x", [{"n": i} for i in range(10)])
            # A read makes a reader connection: its open must not unlock the process.
            assert store.count(ALL) == 10 * round_
            assert other_process_count(store_path) == 10 * round_
    # And after this process closed too, nothing was lost.
    assert other_process_count(store_path) == 40


def test_a_second_handle_of_the_same_file_keeps_the_first_one_locked(store_path: Path) -> None:
    with tureen.Store.open(store_path, key="pass", kdf_iter=10) as first:
        first.register_soup("x", SPECS)
        first.upsert("x", {"n": 1})
        # Opening a second handle reads the file's salt: through SQLite, or
        # the first handle's locks are gone.
        with tureen.Store.open(store_path, key="pass", kdf_iter=10) as second:
            assert second.count(ALL) == 1
        done = run_python(COUNT.replace("raw_key=sys.argv[2]", "key='pass', kdf_iter=10"), [str(store_path)])
        assert done.returncode == 0, done.stderr
        first.upsert("x", {"n": 2})
        done = run_python(COUNT.replace("raw_key=sys.argv[2]", "key='pass', kdf_iter=10"), [str(store_path)])
        assert done.stdout.strip() == "2", done.stderr


ALTER = textwrap.dedent(
    """
    import sys, tureen
    with tureen.Store.open(sys.argv[1], raw_key=sys.argv[2]) as s:
        s.alter_soup("x", [{"path": "n", "type": "integer"}, {"path": "m", "type": "string"}])
        s.register_soup("y", [{"path": "n", "type": "integer"}])
    """
)


def test_a_soup_another_process_altered_or_added_is_queried_as_it_now_is(store_path: Path) -> None:
    # A handle's readers keep the catalog they read until the file says
    # something changed: another process's alter must show at the next query.
    with tureen.Store.open(store_path, raw_key=KEY) as store:
        store.register_soup("x", SPECS)
        store.upsert("x", [{"n": i, "m": "abc"[i % 3]} for i in range(9)])
        by_m = {"queryType": "exact", "soupName": "x", "indexPath": "m", "matchKey": "b", "pageSize": 20}
        assert store.count(ALL) == 9
        try:
            store.count(by_m)
            raise AssertionError("m is not an index yet")
        except tureen.QueryError:
            pass
        done = run_python(ALTER, [str(store_path), KEY])
        assert done.returncode == 0, done.stderr
        assert sorted(e["n"] for e in store.query(by_m)) == [1, 4, 7]
        assert store.count({"queryType": "all", "soupName": "y"}) == 0


WRITER = textwrap.dedent(
    """
    import sys, time, tureen
    stop = time.monotonic() + float(sys.argv[3])
    with tureen.Store.open(sys.argv[1], raw_key=sys.argv[2], busy_timeout_ms=1000) as s:
        n = 0
        while time.monotonic() < stop:
            s.upsert("x", {"n": n})
            n += 1
    """
)


def test_a_writer_among_busy_writers_gets_its_turn_within_the_busy_timeout(store_path: Path) -> None:
    """Two threads on one handle, two on a second handle and another
    process write without pause for 4 s, each with busy_timeout_ms 1000:
    every write commits. A waiter must try again often enough to find the
    lock free between the others' transactions; waking up to 100 ms apart,
    as SQLite's own timeout does, one waited out its second and failed BUSY
    while the others went on committing."""
    import threading
    import time

    with tureen.Store.open(store_path, raw_key=KEY, busy_timeout_ms=1000) as first, \
            tureen.Store.open(store_path, raw_key=KEY, busy_timeout_ms=1000) as second:
        first.register_soup("x", SPECS)
        stop = time.monotonic() + 4.0
        errors: List[BaseException] = []
        writes = [0]

        def write(s: tureen.Store) -> None:
            try:
                while time.monotonic() < stop:
                    s.upsert("x", {"n": 1})
                    writes[0] += 1
            except BaseException as e:  # noqa: B902 - reported below
                errors.append(e)

        threads = [threading.Thread(target=write, args=(s,), daemon=True) for s in (first, first, second, second)]
        for t in threads:
            t.start()
        done = run_python(WRITER, [str(store_path), KEY, "4"])
        for t in threads:
            t.join(30)
        assert done.returncode == 0, done.stderr[-2000:]
        assert not errors, errors[:3]
        assert writes[0] > 100
