"""The `tureen` inspector, end to end through subprocesses: the key from a
file, the environment or nowhere (never argv), every command, NDJSON export
and import, --format, --read-only, blobs, rm, errors naming their input and
exit codes. (The shell, progress bars and watch: test_cli_terminal.py.)"""

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
    assert done.returncode == 0 and json.loads(done.stdout)["status"] == "DONE"
    assert "\r" not in done.stderr  # standard error is a pipe: no bar (the bar is in test_cli_terminal)


def base(path: Path, *args: str, **kw: Any) -> "subprocess.CompletedProcess[str]":
    return cli(str(path), "--kdf-iter", "1000", *args, **kw)


def table(text: str) -> List[List[str]]:
    return [line.split() for line in text.splitlines()]


def test_every_listing_command_writes_table_json_and_ndjson(path: Path) -> None:
    with tureen.Store.open(path, key=KEY, kdf_iter=1000) as s:
        ref = s.blob_put(b"photo bytes", "image/jpeg")
        s.upsert("people", [{"name": "Edsger", "age": 72, "photo": ref}])
    listings = [["soups"], ["specs", "people"], ["query", json.dumps(query.all("people", page_size=2))],
                ["sql", "select {people:name} as name from {people} order by 1"], ["get", "people", "1", "2"],
                ["export", "people"], ["syncs"], ["conflicts", "people"], ["pending", "people"], ["blobs"]]
    for command in listings:
        as_json = json.loads(ok(base(path, *command, "--format", "json")))
        lines = ok(base(path, "--format", "ndjson", *command)).splitlines()  # before the command too
        assert isinstance(as_json, list) and [json.loads(x) for x in lines] == as_json, command
        rows = table(ok(base(path, *command, "--format", "table")))
        if as_json and isinstance(as_json[0], dict):
            first = list(as_json[0])  # the header names the members, the first row's first
            assert rows[0][:len(first)] == first and set(rows[0]) == {k for r in as_json for k in r}, command
            assert len(rows) == len(as_json) + 1, command
    soups = json.loads(ok(base(path, "soups", "--format", "json")))
    assert soups == [{"soup": "people", "entries": 4}]
    assert table(ok(base(path, "soups"))) == [["soup", "entries"], ["people", "4"]]  # the default stays a table
    assert [e["name"] for e in json.loads(ok(base(path, "pending", "people", "--format", "json")))] == ["Grace"]
    names = json.loads(ok(base(path, "sql", "--format", "json", "select {people:name} from {people} order by 1")))
    assert names == [["Ada"], ["Alan"], ["Edsger"], ["Grace"]]
    bad = base(path, "soups", "--format", "xml")
    assert bad.returncode == 2


def test_read_only_refuses_every_write_and_leaves_the_file_as_it_was(path: Path, tmp_path: Path) -> None:
    new_key = tmp_path / "new.key"
    new_key.write_text("other\n")
    before = path.read_bytes()
    writes = [(["put", "people"], json.dumps({"name": "Barbara"})), (["import", "people"], json.dumps({"name": "B"})),
              (["rm", "people", "1"], ""), (["compact"], ""), (["rekey", "--new-key-file", str(new_key)], ""),
              (["sync", "down"], "")]
    for command, stdin in writes:
        done = base(path, "--read-only", *command, stdin=stdin)
        assert done.returncode == 1, (command, done.stderr)
        assert done.stderr == "tureen: %s writes to the store, which --read-only keeps as it is\n" % command[0]
    assert path.read_bytes() == before
    with tureen.Store.open(path, key=KEY, kdf_iter=1000) as s:
        assert sorted(e["name"] for e in s.query(query.all("people", page_size=10))) == ["Ada", "Alan", "Grace"]
    assert json.loads(ok(base(path, "--read-only", "soups", "--format", "json")))[0]["entries"] == 3  # reads go on


def test_rm_removes_entries_by_id(path: Path) -> None:
    done = base(path, "rm", "people", "1", "99")
    assert done.returncode == 0, done.stderr
    with tureen.Store.open(path, key=KEY, kdf_iter=1000) as s:
        assert [e["_soupEntryId"] for e in s.query(query.all("people", order_path="_soupEntryId", page_size=10))] == [2, 3]
    assert base(path, "rm", "nosuchsoup", "1").returncode == 1


def test_blobs_lists_what_entries_refer_to_and_exports_by_digest(path: Path, tmp_path: Path) -> None:
    data = bytes(range(256)) * 100
    with tureen.Store.open(path, key=KEY, kdf_iter=1000) as s:
        ref = s.blob_put(data, "application/x-test")
        s.upsert("people", [{"name": "Edsger", "files": [ref]}, {"name": "Tony", "cv": {"pdf": ref}}])
    rows = json.loads(ok(base(path, "blobs", "--format", "json")))
    assert rows == [{"digest": ref["digest"], "length": len(data), "content_type": "application/x-test",
                     "stored": True, "entries": ["people/4", "people/5"]}]
    ok(base(path, "blobs", "export", ref["digest"], str(tmp_path / "out.bin")))
    assert (tmp_path / "out.bin").read_bytes() == data
    to_stdout = subprocess.run([sys.executable, "-m", "tureen", str(path), "--kdf-iter", "1000", "blobs", "export",
                                ref["digest"], "-"], capture_output=True, timeout=60, env=child_env({"TUREEN_KEY": KEY}))
    assert to_stdout.returncode == 0 and to_stdout.stdout == data
    missing = "sha256-" + "0" * 64
    done = base(path, "blobs", "export", missing, str(tmp_path / "none.bin"))
    assert done.returncode == 1 and done.stderr.startswith("tureen: blob %s: NotFoundError: " % missing)
    assert not (tmp_path / "none.bin").exists()


def test_errors_name_the_input_they_come_from(path: Path, tmp_path: Path) -> None:
    bad_spec = base(path, "query", "{not json")
    assert bad_spec.returncode == 1
    assert bad_spec.stderr.startswith("tureen: query spec (argument SPEC): Expecting property name")
    no_soup = base(path, "query", json.dumps(query.all("nosuch")))
    assert no_soup.stderr.startswith("tureen: query spec (argument SPEC): NotFoundError: ")
    bad_args = base(path, "sql", "--args", "[1,", "select {people:name} from {people} where {people:age} > ?")
    assert bad_args.returncode == 1 and bad_args.stderr.startswith("tureen: --args: ")
    entries = tmp_path / "x.json"
    entries.write_text('{"name": "Barbara"}\n\n{"name": oops}\n')
    bad_file = base(path, "put", "people", str(entries))
    assert bad_file.returncode == 1
    assert bad_file.stderr == "tureen: file %s, line 3, column 10: Expecting value\n" % entries
    bad_stdin = base(path, "put", "people", stdin='{"name": "B"}\n[1]\n')
    assert bad_stdin.returncode == 1
    assert bad_stdin.stderr.startswith("tureen: standard input, entries 1 to 2: InvalidError: ")
    absent = base(path, "put", "people", str(tmp_path / "absent.json"))
    assert absent.returncode == 1 and absent.stderr.startswith("tureen: file %s: " % (tmp_path / "absent.json"))
    wrong = base(path, "info", key="wrong")
    assert wrong.returncode == 1 and wrong.stderr.startswith("tureen: store %s: BadKeyError: " % path)
    no_key_file = cli(str(path), "--key-file", str(tmp_path / "k"), "info", key=None)
    assert no_key_file.returncode == 1 and no_key_file.stderr.startswith("tureen: key file %s: " % (tmp_path / "k"))
    with tureen.Store.open(path, key=KEY, kdf_iter=1000) as s:
        assert s.count(query.all("people")) == 3  # nothing of the bad inputs was written
    good = tmp_path / "good.json"
    good.write_text(json.dumps([{"name": "Barbara", "age": 84}]))
    ok(base(path, "put", "people", str(good)))
    with tureen.Store.open(path, key=KEY, kdf_iter=1000) as s:
        assert [e["age"] for e in s.query(query.exact("people", "name", "Barbara"))] == [84]


def test_help_names_the_key_variables(path: Path) -> None:
    done = cli("--help")
    assert done.returncode == 0
    names = {line.split()[0] for line in done.stdout.splitlines() if line.strip()}
    assert {"TUREEN_KEY", "TUREEN_RAW_KEY"} <= names
    assert cli(str(path), "--kdf-iter", "1000").returncode == 2  # no command and no terminal: no shell
