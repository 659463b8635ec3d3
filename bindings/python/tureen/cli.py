"""``tureen``: look inside an encrypted store from a terminal (SmartStore's
Inspector, for shells). ``tureen --help`` lists the commands.

The key never comes from the command line (other users can read it there):
it is read from ``--key-file PATH`` (or ``--raw-key-file PATH``: 64 hex
digits), else from the environment variable ``TUREEN_KEY`` (``TUREEN_RAW_KEY``),
else asked for on the terminal; ``--unencrypted`` opens a store without one.

Exit status: 0 on success, 1 when the library reports an error (its class
and message go to standard error), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from typing import Any, Dict, Iterable, List, Optional, Sequence

from . import query
from .errors import Error
from .row import Row
from .store import Store
from .sync import SyncState

__all__ = ["main"]

BATCH = 500


def _read_secret(path: str) -> str:
    with open(path, "r", encoding="utf-8") as f:
        return f.read().strip()


def _keying(args: argparse.Namespace, new: bool = False) -> Dict[str, Any]:
    """How to open (or, with ``new``, rekey) the store, from files, the
    environment or a prompt; never from argv."""
    prefix = "new_" if new else ""
    env = "TUREEN_NEW_" if new else "TUREEN_"
    if getattr(args, prefix + "unencrypted"):
        return {"unencrypted": True}
    if getattr(args, prefix + "raw_key_file"):
        return {"raw_key": _read_secret(getattr(args, prefix + "raw_key_file"))}
    if getattr(args, prefix + "key_file"):
        return {"key": _read_secret(getattr(args, prefix + "key_file"))}
    if os.environ.get(env + "RAW_KEY"):
        return {"raw_key": os.environ[env + "RAW_KEY"]}
    if os.environ.get(env + "KEY"):
        return {"key": os.environ[env + "KEY"]}
    if not sys.stdin.isatty():
        raise SystemExit("tureen: no key: use --%skey-file, $%sKEY or a terminal to type it" % (prefix.replace("_", "-"), env))
    return {"key": getpass.getpass("new passphrase: " if new else "passphrase for %s: " % args.store)}


def _open(args: argparse.Namespace) -> Store:
    keying = _keying(args)
    if args.kdf_iter is not None and "key" in keying:
        keying["kdf_iter"] = args.kdf_iter
    return Store.open(args.store, create=False, **keying)


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")


def _table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
    """Rows as aligned columns, values as JSON text where not strings."""
    text = [[c if isinstance(c, str) else json.dumps(c, ensure_ascii=False) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in text if i < len(r)]) for i, h in enumerate(header)]
    for row in [list(header)] + text:
        sys.stdout.write("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() + "\n")


# --- commands ------------------------------------------------------------------


def cmd_info(args: argparse.Namespace, store: Store) -> None:
    soups = store.soup_names()
    syncs = store.count(query.all("syncs_soup")) if "syncs_soup" in soups else 0
    _print_json({"path": args.store, "bytes": store.size(),
                 "soups": {s: store.count(query.all(s)) for s in soups if s != "syncs_soup"}, "syncs": syncs})


def cmd_soups(args: argparse.Namespace, store: Store) -> None:
    _table(["soup", "entries"], [(s, store.count(query.all(s))) for s in store.soup_names()])


def cmd_specs(args: argparse.Namespace, store: Store) -> None:
    _table(["path", "type"], [(s.path, s.type) for s in store.index_specs(args.soup)])


def cmd_query(args: argparse.Namespace, store: Store) -> None:
    spec = json.loads(args.spec)
    rows = store.query(spec, args.page) if args.page is not None else list(store.iter_query(spec))
    _print_json(rows)


def cmd_sql(args: argparse.Namespace, store: Store) -> None:
    spec = query.smart(args.sql, json.loads(args.args) if args.args else None, page_size=args.page_size)
    rows = store.query(spec)
    if args.json:
        _print_json(rows)
    else:
        width = max((len(r) for r in rows), default=0)
        # The select list names the columns (select * does not).
        names = rows[0].keys() if rows and isinstance(rows[0], Row) else []
        _table(names or ["col%d" % (i + 1) for i in range(width)], rows)


def cmd_get(args: argparse.Namespace, store: Store) -> None:
    _print_json(store.retrieve(args.soup, args.ids))


def _read_entries(stream: Any) -> Iterable[Dict[str, Any]]:
    """Entries from ``stream``: one JSON array, or NDJSON (one per line),
    read line by line so an import of any size streams."""
    first = stream.read(1)
    while first and first.isspace():
        first = stream.read(1)
    if not first:
        return
    if first == "[":
        yield from json.loads(first + stream.read())
        return
    line = first + stream.readline()
    if line.strip():
        yield json.loads(line)
    for line in stream:
        if line.strip():
            yield json.loads(line)


def _upsert_stream(store: Store, soup: str, entries: Iterable[Dict[str, Any]], external_id: Optional[str]) -> int:
    batch: List[Dict[str, Any]] = []
    done = 0
    for e in entries:
        batch.append(e)
        if len(batch) == BATCH:
            store.upsert(soup, batch, external_id_path=external_id)
            done += len(batch)
            batch = []
    if batch:
        store.upsert(soup, batch, external_id_path=external_id)
        done += len(batch)
    return done


def cmd_put(args: argparse.Namespace, store: Store) -> None:
    n = _upsert_stream(store, args.soup, _read_entries(sys.stdin), args.external_id)
    sys.stderr.write("%d entr%s written to %s\n" % (n, "y" if n == 1 else "ies", args.soup))


cmd_import = cmd_put


def cmd_export(args: argparse.Namespace, store: Store) -> None:
    for entry in store.iter_query(query.all(args.soup, order_path="_soupEntryId", page_size=BATCH)):
        sys.stdout.write(json.dumps(entry, ensure_ascii=False) + "\n")


def cmd_syncs(args: argparse.Namespace, store: Store) -> None:
    if "syncs_soup" not in store.soup_names():
        return
    states = store.query(query.all("syncs_soup", page_size=10000))
    _table(["id", "name", "type", "soup", "status", "synced", "failed", "conflicts", "error"],
           [(s["_soupEntryId"], s.get("name") or "", s["type"], s["soupName"], s["status"], s.get("synced", 0),
             s.get("failed", 0), s.get("conflicts", 0), s.get("error") or "") for s in states])


def cmd_sync(args: argparse.Namespace, store: Store) -> None:
    def bar(state: SyncState) -> None:
        p = int(state.get("progress", 0))
        sys.stderr.write("\r[%-30s] %3d%% %s done" % ("#" * (p * 30 // 100), p, state.get("done", 0)))
        sys.stderr.flush()
    try:
        state = store.resync(int(args.sync) if args.sync.isdigit() else args.sync, progress=bar)
    finally:
        sys.stderr.write("\n")
    _print_json({k: state.get(k) for k in ("_soupEntryId", "name", "status", "synced", "failed", "conflicts")})


def cmd_conflicts(args: argparse.Namespace, store: Store) -> None:
    _print_json(store.conflicts(args.soup))


def cmd_pending(args: argparse.Namespace, store: Store) -> None:
    _print_json(store.pending(args.soup))


def cmd_check(args: argparse.Namespace, store: Store) -> None:
    store.check()
    sys.stdout.write("ok\n")


def cmd_compact(args: argparse.Namespace, store: Store) -> None:
    before = store.size()
    store.compact()
    sys.stdout.write("%d -> %d bytes\n" % (before, store.size()))


def cmd_rekey(args: argparse.Namespace, store: Store) -> None:
    store.rekey(**_keying(args, new=True))
    sys.stdout.write("rekeyed\n")


# --- the parser ----------------------------------------------------------------


def _keys(p: argparse.ArgumentParser, new: bool = False) -> None:
    prefix = "new-" if new else ""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--%skey-file" % prefix, metavar="PATH", help="a file holding the %spassphrase" % prefix)
    g.add_argument("--%sraw-key-file" % prefix, metavar="PATH", help="a file holding a 64-hex-digit key")
    g.add_argument("--%sunencrypted" % prefix, action="store_true", help="no key")


def parser() -> argparse.ArgumentParser:
    # No abbreviations: "--key SECRET" must be an error, not "--key-file SECRET".
    p = argparse.ArgumentParser(prog="tureen", description="Look inside a Tureen store (keys never on the command line).",
                                allow_abbrev=False)
    p.add_argument("store", help="the store file")
    _keys(p)
    p.add_argument("--kdf-iter", type=int, metavar="N", help="the passphrase's PBKDF2 rounds, if not the default")
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="size, soups and their entry counts, syncs")
    sub.add_parser("soups", help="soups and entry counts")
    sub.add_parser("specs", help="a soup's index specs").add_argument("soup")
    q = sub.add_parser("query", help="run a query spec (JSON); all pages unless --page")
    q.add_argument("spec")
    q.add_argument("--page", type=int)
    s = sub.add_parser("sql", help="run Smart SQL: a table, or --json")
    s.add_argument("sql")
    s.add_argument("--args", help="a JSON array of arguments for ?")
    s.add_argument("--json", action="store_true")
    s.add_argument("--page-size", type=int, default=100)
    g = sub.add_parser("get", help="entries by _soupEntryId")
    g.add_argument("soup")
    g.add_argument("ids", type=int, nargs="+")
    for name, what in (("put", "upsert entries from stdin (NDJSON or a JSON array)"),
                       ("import", "the same, for an export's NDJSON")):
        w = sub.add_parser(name, help=what)
        w.add_argument("soup")
        w.add_argument("--external-id", metavar="PATH")
    sub.add_parser("export", help="every entry of a soup as NDJSON (streamed)").add_argument("soup")
    sub.add_parser("syncs", help="every sync and its state (credentials redacted)")
    sub.add_parser("sync", help="run a sync again by name or id, with a progress bar").add_argument("sync")
    sub.add_parser("conflicts", help="a soup's conflicts").add_argument("soup")
    sub.add_parser("pending", help="a soup's local changes not yet synced").add_argument("soup")
    sub.add_parser("check", help="the integrity check")
    sub.add_parser("compact", help="reclaim the space of deleted data")
    r = sub.add_parser("rekey", help="a new key, from --new-key-file, $TUREEN_NEW_KEY or a prompt", allow_abbrev=False)
    _keys(r, new=True)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    command = globals()["cmd_" + args.command]
    try:
        with _open(args) as store:
            command(args, store)
    except Error as e:
        sys.stderr.write("tureen: %s: %s\n" % (type(e).__name__, e))
        return 1
    except (OSError, ValueError) as e:
        sys.stderr.write("tureen: %s\n" % e)
        return 1
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
