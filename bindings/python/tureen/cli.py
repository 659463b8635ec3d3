"""``tureen``: look inside an encrypted store from a terminal (SmartStore's
Inspector, for shells). ``tureen --help`` lists the commands; ``tureen
STORE`` alone on a terminal opens a shell taking the same commands.

The key never comes from the command line (other users can read it there):
it is read from ``--key-file PATH`` (or ``--raw-key-file PATH``: 64 hex
digits), else from the environment variable ``TUREEN_KEY`` (``TUREEN_RAW_KEY``),
else asked for on the terminal; ``--unencrypted`` opens a store without one.

Exit status: 0 on success, 1 when the library reports an error (its class
and message go to standard error, after the input it came from), when an
input is malformed, or when ``--read-only`` refuses a write; 2 for a usage
error.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import itertools
import json
import os
import sys
from typing import Any, Callable, Dict, IO, Iterable, Iterator, List, Optional, Sequence

from . import query
from ._cli_blobs import blob_rows, export_blob
from ._cli_output import FORMATS, emit, print_json, progress_bar
from ._cli_shell import shell
from ._cli_watch import watch
from .errors import Error
from .row import Row
from .store import Store

__all__ = ["main", "parser", "run"]

BATCH = 500

#: The commands ``--read-only`` refuses. The library has no read-only open,
#: so the refusal is here, before the store is opened or any input read.
WRITES = frozenset(("put", "import", "rm", "sync", "compact", "rekey"))


class InputError(Exception):
    """A malformed or refused input; the message begins with the input."""


@contextlib.contextmanager
def from_input(source: str) -> Iterator[None]:
    """Names ``source`` in the errors its use raises: which argument, file
    or line was wrong, not only what."""
    try:
        yield
    except Error as e:
        raise InputError("%s: %s: %s" % (source, type(e).__name__, e)) from e
    except BrokenPipeError:
        raise  # a reader that stopped reading: no error of the input
    except (ValueError, OSError) as e:
        raise InputError("%s: %s" % (source, e)) from e


def _read_secret(path: str) -> str:
    with from_input("key file %s" % path), open(path, "r", encoding="utf-8") as f:
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
    with from_input("store %s" % args.store):
        return Store.open(args.store, create=False, **keying)


def _format(args: argparse.Namespace, default: str) -> str:
    return getattr(args, "format", None) or default


def _json_argument(text: str, source: str) -> Any:
    with from_input(source):
        return json.loads(text)


# --- commands ------------------------------------------------------------------


def cmd_info(args: argparse.Namespace, store: Store) -> None:
    soups = store.soup_names(include_engine=True)
    syncs = store.count(query.all("syncs_soup")) if "syncs_soup" in soups else 0
    print_json({"path": args.store, "bytes": store.size(),
                "soups": {s: store.count(query.all(s)) for s in soups if s != "syncs_soup"}, "syncs": syncs})


def cmd_soups(args: argparse.Namespace, store: Store) -> None:
    emit([{"soup": s, "entries": store.count(query.all(s))} for s in store.soup_names(include_engine=True)], _format(args, "table"))


def cmd_specs(args: argparse.Namespace, store: Store) -> None:
    with from_input("soup %s" % args.soup):
        specs = store.index_specs(args.soup)
    emit([{"path": s.path, "type": s.type} for s in specs], _format(args, "table"))


def cmd_query(args: argparse.Namespace, store: Store) -> None:
    source = "query spec (argument SPEC)"
    spec = _json_argument(args.spec, source)
    with from_input(source):
        rows = store.query(spec, args.page) if args.page is not None else list(store.iter_query(spec))
    emit(rows, _format(args, "json"))


def cmd_sql(args: argparse.Namespace, store: Store) -> None:
    values = _json_argument(args.args, "--args") if args.args else None
    with from_input("Smart SQL (argument SQL)"):
        rows = store.query(query.smart(args.sql, values, page_size=args.page_size))
    # The select list names the columns (select * does not).
    names = rows[0].keys() if rows and isinstance(rows[0], Row) else []
    emit(rows, "json" if args.json else _format(args, "table"), names)


def cmd_get(args: argparse.Namespace, store: Store) -> None:
    with from_input("soup %s" % args.soup):
        entries = store.retrieve(args.soup, args.ids)
    emit(entries, _format(args, "json"))


def _read_entries(stream: IO[str], source: str) -> Iterable[Dict[str, Any]]:
    """Entries from ``stream``: one JSON array, or NDJSON (one per line),
    read line by line so an import of any size streams. A malformed entry
    is named by ``source`` and its line."""
    first = stream.read(1)
    skipped = 0  # lines before the first entry's
    while first and first.isspace():
        skipped += first == "\n"
        first = stream.read(1)
    if not first:
        return
    if first == "[":
        with from_input(source):
            yield from json.loads(first + stream.read())
        return
    for number, line in enumerate(itertools.chain([first + stream.readline()], stream), skipped + 1):
        if line.strip():
            try:
                yield json.loads(line)
            except json.JSONDecodeError as e:
                raise InputError("%s, line %d, column %d: %s" % (source, number, e.colno, e.msg)) from e


def _upsert_stream(store: Store, soup: str, entries: Iterable[Dict[str, Any]], external_id: Optional[str],
                   source: str) -> int:
    batch: List[Dict[str, Any]] = []
    done = 0

    def write() -> None:
        with from_input("%s, entries %d to %d" % (source, done + 1, done + len(batch))):
            store.upsert(soup, batch, external_id_path=external_id)
    for e in entries:
        batch.append(e)
        if len(batch) == BATCH:
            write()
            done += len(batch)
            batch = []
    if batch:
        write()
        done += len(batch)
    return done


def cmd_put(args: argparse.Namespace, store: Store) -> None:
    if args.file in (None, "-"):
        n = _upsert_stream(store, args.soup, _read_entries(sys.stdin, "standard input"), args.external_id,
                           "standard input")
    else:
        source = "file %s" % args.file
        with from_input(source):
            stream = open(args.file, "r", encoding="utf-8")
        with stream:
            n = _upsert_stream(store, args.soup, _read_entries(stream, source), args.external_id, source)
    sys.stderr.write("%d entr%s written to %s\n" % (n, "y" if n == 1 else "ies", args.soup))


cmd_import = cmd_put


def cmd_rm(args: argparse.Namespace, store: Store) -> None:
    with from_input("soup %s" % args.soup):
        found = {e["_soupEntryId"] for e in store.retrieve(args.soup, args.ids)}
        store.remove(args.soup, args.ids)
    missing = [i for i in args.ids if i not in found]
    sys.stderr.write("%d entr%s removed from %s%s\n" % (
        len(found), "y" if len(found) == 1 else "ies", args.soup,
        "; no entry %s" % ", ".join(map(str, missing)) if missing else ""))


def cmd_export(args: argparse.Namespace, store: Store) -> None:
    with from_input("soup %s" % args.soup):
        entries = store.iter_query(query.all(args.soup, order_path="_soupEntryId", page_size=BATCH))
        fmt = _format(args, "ndjson")
        if fmt != "ndjson":
            emit(list(entries), fmt)
            return
        for entry in entries:  # streamed: a soup of any size
            print_json(entry)


def cmd_syncs(args: argparse.Namespace, store: Store) -> None:
    fmt = _format(args, "table")
    synced = store.soup_exists("syncs_soup")
    if not synced and fmt == "table":
        return  # a store that never synced: not even a header
    states = store.query(query.all("syncs_soup", page_size=10000)) if synced else []
    emit([{"id": s["_soupEntryId"], "name": s.get("name") or "", "type": s["type"], "soup": s["soupName"],
           "status": s["status"], "synced": s.get("synced", 0), "failed": s.get("failed", 0),
           "conflicts": s.get("conflicts", 0), "error": s.get("error") or ""} for s in states],
         fmt, ["id", "name", "type", "soup", "status", "synced", "failed", "conflicts", "error"])


def cmd_sync(args: argparse.Namespace, store: Store) -> None:
    bar = progress_bar()
    try:
        with from_input("sync %s" % args.sync):
            state = store.resync(int(args.sync) if args.sync.isdigit() else args.sync, progress=bar)
    finally:
        if bar is not None:
            sys.stderr.write("\n")
    print_json({k: state.get(k) for k in ("_soupEntryId", "name", "status", "synced", "failed", "conflicts")})


def cmd_conflicts(args: argparse.Namespace, store: Store) -> None:
    with from_input("soup %s" % args.soup):
        rows = store.conflicts(args.soup)
    emit(rows, _format(args, "json"))


def cmd_pending(args: argparse.Namespace, store: Store) -> None:
    with from_input("soup %s" % args.soup):
        rows = store.pending(args.soup)
    emit(rows, _format(args, "json"))


def cmd_blobs(args: argparse.Namespace, store: Store) -> None:
    if args.blob_command == "export":
        with from_input("blob %s" % args.digest):
            export_blob(store, args.digest, args.path)
        return
    emit(blob_rows(store), _format(args, "table"), ["digest", "length", "content_type", "stored", "entries"])


def cmd_watch(args: argparse.Namespace, store: Store) -> None:
    watch(store, args.soup)


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

_EPILOG = """\
the key (never on the command line), first found of:
  --key-file PATH, --raw-key-file PATH, --unencrypted
  TUREEN_KEY       the passphrase, in the environment
  TUREEN_RAW_KEY   a 64-hex-digit key, in the environment
  a prompt on the terminal
rekey takes the new key the same way (--new-key-file, TUREEN_NEW_KEY, ...).

With no command on a terminal, STORE opens in a shell that takes the same
commands (help lists them; history in ~/.tureen_history).
Exit status: 0 done; 1 an error of the library or of an input, or a write
refused by --read-only; 2 a usage error."""


def _keys(p: argparse.ArgumentParser, new: bool = False) -> None:
    prefix = "new-" if new else ""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--%skey-file" % prefix, metavar="PATH", help="a file holding the %spassphrase" % prefix)
    g.add_argument("--%sraw-key-file" % prefix, metavar="PATH", help="a file holding a 64-hex-digit key")
    g.add_argument("--%sunencrypted" % prefix, action="store_true", help="no key")


def _listing(sub: Any, name: str, what: str, default: str) -> argparse.ArgumentParser:
    """A command that lists, with its own ``--format`` (the one before the
    command applies when it is not given)."""
    p: argparse.ArgumentParser = sub.add_parser(name, help=what, allow_abbrev=False)
    p.add_argument("--format", choices=FORMATS, default=argparse.SUPPRESS,
                   help="table, one JSON array, or one JSON value a line (default %s)" % default)
    return p


def parser() -> argparse.ArgumentParser:
    # No abbreviations: "--key SECRET" must be an error, not "--key-file SECRET".
    p = argparse.ArgumentParser(prog="tureen", description="Look inside a Tureen store (keys never on the command line).",
                                epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter,
                                allow_abbrev=False)
    p.add_argument("store", help="the store file")
    _keys(p)
    p.add_argument("--kdf-iter", type=int, metavar="N", help="the passphrase's PBKDF2 rounds, if not the default")
    p.add_argument("--format", choices=FORMATS, help="how listing commands write (each has its default)")
    p.add_argument("--read-only", action="store_true", help="refuse the commands that write (%s)" % ", ".join(sorted(WRITES)))
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("info", help="size, soups and their entry counts, syncs")
    _listing(sub, "soups", "soups and entry counts", "table")
    _listing(sub, "specs", "a soup's index specs", "table").add_argument("soup")
    q = _listing(sub, "query", "run a query spec (JSON); all pages unless --page", "json")
    q.add_argument("spec")
    q.add_argument("--page", type=int)
    s = _listing(sub, "sql", "run Smart SQL: a table, or --json", "table")
    s.add_argument("sql")
    s.add_argument("--args", help="a JSON array of arguments for ?")
    s.add_argument("--json", action="store_true", help="the same as --format json")
    s.add_argument("--page-size", type=int, default=100)
    g = _listing(sub, "get", "entries by _soupEntryId", "json")
    g.add_argument("soup")
    g.add_argument("ids", type=int, nargs="+")
    for name, what in (("put", "upsert entries from FILE or stdin (NDJSON or a JSON array)"),
                       ("import", "the same, for an export's NDJSON")):
        w = sub.add_parser(name, help=what)
        w.add_argument("soup")
        w.add_argument("file", nargs="?", metavar="FILE", help="the entries (default: standard input)")
        w.add_argument("--external-id", metavar="PATH")
    r = sub.add_parser("rm", help="remove entries by _soupEntryId")
    r.add_argument("soup")
    r.add_argument("ids", type=int, nargs="+")
    _listing(sub, "export", "every entry of a soup (streamed as NDJSON by default)", "ndjson").add_argument("soup")
    _listing(sub, "syncs", "every sync and its state (credentials redacted)", "table")
    sub.add_parser("sync", help="run a sync again by name or id (a progress bar on a terminal)").add_argument("sync")
    _listing(sub, "conflicts", "a soup's conflicts", "json").add_argument("soup")
    _listing(sub, "pending", "a soup's local changes not yet synced", "json").add_argument("soup")
    b = _listing(sub, "blobs", "the blobs entries refer to; blobs export DIGEST PATH writes one out", "table")
    bsub = b.add_subparsers(dest="blob_command", metavar="export")
    e = bsub.add_parser("export", help="write the blob DIGEST to PATH (- for standard output)")
    e.add_argument("digest")
    e.add_argument("path")
    sub.add_parser("watch", help="change and sync events, one JSON object a line, until Ctrl-C").add_argument(
        "soup", nargs="?", help="only this soup's changes")
    sub.add_parser("check", help="the integrity check")
    sub.add_parser("compact", help="reclaim the space of deleted data")
    k = sub.add_parser("rekey", help="a new key, from --new-key-file, $TUREEN_NEW_KEY or a prompt", allow_abbrev=False)
    _keys(k, new=True)
    return p


def run(args: argparse.Namespace, store: Optional[Store]) -> int:
    """Runs one parsed command on ``store`` (opened here when None) and
    reports its error on standard error; returns the exit status."""
    try:
        if args.read_only and args.command in WRITES:
            raise InputError("%s writes to the store, which --read-only keeps as it is" % args.command)
        command: Callable[[argparse.Namespace, Store], None] = globals()["cmd_" + args.command]
        if store is not None:
            command(args, store)
        else:
            with _open(args) as opened:
                command(args, opened)
    except InputError as e:
        sys.stderr.write("tureen: %s\n" % e)
        return 1
    except Error as e:
        sys.stderr.write("tureen: %s: %s\n" % (type(e).__name__, e))
        return 1
    except BrokenPipeError:
        return 0
    except (OSError, ValueError) as e:
        sys.stderr.write("tureen: %s\n" % e)
        return 1
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = parser()
    args = p.parse_args(argv)
    if args.command is not None:
        return run(args, None)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        p.error("a command is needed (the shell opens only on a terminal)")
    try:
        with _open(args) as store:
            return shell(store, args, p, run)
    except InputError as e:
        sys.stderr.write("tureen: %s\n" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
