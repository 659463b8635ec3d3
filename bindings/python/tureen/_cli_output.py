"""How the ``tureen`` inspector writes what it lists (``--format table|json|
ndjson``), and its progress bar."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

__all__ = ["FORMATS", "emit", "print_json", "progress_bar"]

FORMATS = ("table", "json", "ndjson")


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False) + "\n")


def _cell(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _columns(rows: Sequence[Any], columns: Optional[Sequence[str]]) -> List[str]:
    """The given names, else the keys of objects in order of first sight,
    else col1..colN for rows that are lists."""
    if columns:
        return list(columns)
    names: Dict[str, None] = {}
    width = 0
    for row in rows:
        if isinstance(row, Mapping):
            names.update((k, None) for k in row)
        else:
            width = max(width, len(row))
    return list(names) or ["col%d" % (i + 1) for i in range(width)]


def _table(rows: Sequence[Any], columns: Optional[Sequence[str]]) -> None:
    header = _columns(rows, columns)
    text = [[_cell(row.get(name, "")) for name in header] if isinstance(row, Mapping)
            else [_cell(value) for value in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in text if i < len(r)]) for i, h in enumerate(header)]
    for line in [header] + text:
        sys.stdout.write("  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() + "\n")


def emit(rows: Sequence[Any], fmt: str, columns: Optional[Sequence[str]] = None) -> None:
    """Writes ``rows`` (objects, or lists of values named by ``columns``)
    as aligned columns, one JSON array, or one JSON value per line."""
    if fmt == "table":
        _table(rows, columns)
    elif fmt == "ndjson":
        for row in rows:
            print_json(row)
    else:
        print_json(list(rows))


def progress_bar() -> Optional[Callable[[Mapping[str, Any]], None]]:
    """A bar redrawn in place on standard error, or None when standard error
    is not a terminal: a log file or a pipe would get a line of carriage
    returns per step."""
    if not sys.stderr.isatty():
        return None

    def draw(state: Mapping[str, Any]) -> None:
        p = int(state.get("progress", 0))
        sys.stderr.write("\r[%-30s] %3d%% %s done" % ("#" * (p * 30 // 100), p, state.get("done", 0)))
        sys.stderr.flush()
    return draw
