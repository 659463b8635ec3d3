"""The `tureen` inspector, end to end through subprocesses: the key from a
file, the environment or nowhere (never argv), every command, NDJSON export
and import, errors and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import tureen
from tureen import query

from conftest import child_env

KEY = "cli passphrase"


def cli(*args: str, key: Optional[str] = KEY, stdin: str = "", env: Optional[Dict[str, str]] = None
        ) -> "subprocess.CompletedProcess[str]":
    e = child_env(env)
    e.pop("TUREEN_KEY", None)
    if key is not None:
        e["TUREEN_KEY"] = key
    return subprocess.run([sys.executable, "-m", "tureen", *args], input=stdin, capture_output=True, text=True,
                          timeout=60, env=e)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    p = tmp_path / "cli.db"
    with tureen.Store.open(p, key=KEY, kdf_iter=1000) as s:
        s.register_soup("people", [("name", "string"), ("age", "integer")])
        s.upsert("people", [{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}])
        s.local_upsert("people", {"name": "Grace", "age": 85})
    return p


def ok(done: "subprocess.CompletedProcess[str]") -> str:
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_reading_commands(path: Path) -> None:
    info = json.loads(ok(cli(str(path), "--kdf-iter", "1000", "info")))
    assert info["soups"] == {"people": 3} and info["bytes"] > 0
    assert "people" in ok(cli(str(path), "--kdf-iter", "1000", "soups"))
    assert "age" in ok(cli(str(path), "--kdf-iter", "1000", "specs", "people"))
    rows = json.loads(ok(cli(str(path), "--kdf-iter", "1000", "query",
                             json.dumps(query.range("people", "age", 40, 100, order_path="age", page_size=1)))))
    assert [r["name"] for r in rows] == ["Alan", "Grace"]  # every page
    table = ok(cli(str(path), "--kdf-iter", "1000", "sql", "select {people:name}, {people:age} as years from {people} order by 2"))
    assert table.splitlines()[0].split() == ["name", "years"]  # named by the select list
    assert table.splitlines()[1].split() == ["Ada", "36"]
    as_json = json.loads(ok(cli(str(path), "--kdf-iter", "1000", "sql", "--json", "--args", "[40]",
                                "select {people:name} from {people} where {people:age} > ?")))
    assert as_json == [["Alan"], ["Grace"]]
    assert [e["name"] for e in json.loads(ok(cli(str(path), "--kdf-iter", "1000", "get", "people", "1")))] == ["Ada"]
    assert [e["name"] for e in json.loads(ok(cli(str(path), "--kdf-iter", "1000", "pending", "people")))] == ["Grace"]
    assert json.loads(ok(cli(str(path), "--kdf-iter", "1000", "conflicts", "people"))) == []
    assert ok(cli(str(path), "--kdf-iter", "1000", "check")).strip() == "ok"
    assert "->" in ok(cli(str(path), "--kdf-iter", "1000", "compact"))
    assert ok(cli(str(path), "--kdf-iter", "1000", "syncs")) == ""


def test_export_import_put_round_trip(path: Path, tmp_path: Path) -> None:
    exported = ok(cli(str(path), "--kdf-iter", "1000", "export", "people"))
    lines = [json.loads(x) for x in exported.splitlines()]
    assert [e["name"] for e in lines] == ["Ada", "Alan", "Grace"]
    other = tmp_path / "other.db"
    with tureen.Store.open(other, raw_key="ab" * 32) as s:
        s.register_soup("people", [("name", "string")])
    key_file = tmp_path / "raw.key"
    key_file.write_text("ab" * 32 + "\n")
    stripped = "\n".join(json.dumps({k: v for k, v in e.items() if not k.startswith("_soup")}) for e in lines)
    done = cli(str(other), "--raw-key-file", str(key_file), "import", "people", key=None, stdin=stripped)
    assert done.returncode == 0 and "3 entries" in done.stderr, done.stderr
    ok(cli(str(other), "--raw-key-file", str(key_file), "put", "people", "--external-id", "name", key=None,
           stdin=json.dumps([{"name": "Ada", "age": 37}])))
    with tureen.Store.open(other, raw_key="ab" * 32) as s:
        people = s.query(query.all("people", page_size=10))
    assert len(people) == 3 and [p["age"] for p in people if p["name"] == "Ada"] == [37]


def test_the_key_never_comes_from_argv_and_errors_say_what(path: Path, tmp_path: Path) -> None:
    no_key = cli(str(path), "info", key=None)
    assert no_key.returncode != 0 and "TUREEN_KEY" in no_key.stderr
    wrong = cli(str(path), "--kdf-iter", "1000", "info", key="wrong")
    assert wrong.returncode == 1 and "BadKeyError" in wrong.stderr
    missing = cli(str(tmp_path / "nope.db"), "info")
    assert missing.returncode == 1 and "NotFoundError" in missing.stderr and not (tmp_path / "nope.db").exists()
    bad_sql = cli(str(path), "--kdf-iter", "1000", "sql", "delete from {people}")
    assert bad_sql.returncode == 1 and "QueryError" in bad_sql.stderr
    usage = cli(str(path), "--key", "in-argv", "info")
    assert usage.returncode == 2  # there is no such option


def test_rekey_and_sync(path: Path, tmp_path: Path, rest_server: Any) -> None:
    from test_sync_rest import rest_target

    new_key = tmp_path / "new.key"
    new_key.write_text("new passphrase\n")
    ok(cli(str(path), "--kdf-iter", "1000", "rekey", "--new-key-file", str(new_key)))
    assert cli(str(path), "--kdf-iter", "1000", "info").returncode == 1
    with tureen.Store.open(path, key="new passphrase") as s:
        s.register_soup("items", [("uid", "string")])
        rest_server.set_record({"uid": "r1"})
        s.sync_down(rest_target(rest_server), "items", name="down")
    rest_server.set_record({"uid": "r2"})
    listed = ok(cli(str(path), "syncs", key="new passphrase"))
    assert "down" in listed and "DONE" in listed and "secret" not in listed
    done = cli(str(path), "sync", "down", key="new passphrase")
    assert done.returncode == 0 and json.loads(done.stdout)["status"] == "DONE" and "100%" in done.stderr
