"""The ``tureen`` inspector's ``blobs``: the blobs entries refer to, and a
blob written out by its digest."""

from __future__ import annotations

import shutil
import sys
from typing import Any, Dict, Iterator, List

from . import query
from .store import Store

__all__ = ["blob_rows", "export_blob"]

_PAGE = 500


def _references(value: Any) -> Iterator[Dict[str, Any]]:
    """Every blob reference anywhere in an entry's JSON."""
    if isinstance(value, dict):
        if value.get("@type") == "blob" and isinstance(value.get("digest"), str):
            yield value
        for member in value.values():
            yield from _references(member)
    elif isinstance(value, list):
        for member in value:
            yield from _references(member)


def blob_rows(store: Store) -> List[Dict[str, Any]]:
    """One row per digest some entry refers to, in digest order. The header
    lists no blobs, so the entries are read: a blob no entry refers to any
    more (collected later) is not shown. "stored" is False for one a lazy
    sync has yet to fetch."""
    found: Dict[str, Dict[str, Any]] = {}
    for soup in store.soup_names(include_engine=True):
        for entry in store.iter_query(query.all(soup, order_path="_soupEntryId", page_size=_PAGE)):
            for ref in _references(entry):
                row = found.setdefault(ref["digest"], {
                    "digest": ref["digest"], "length": ref.get("length"),
                    "content_type": ref.get("content_type"), "stored": None, "entries": []})
                row["entries"].append("%s/%s" % (soup, entry["_soupEntryId"]))
    for row in found.values():
        row["stored"] = store.blob_info(row["digest"]) is not None
    return [found[d] for d in sorted(found)]


def export_blob(store: Store, digest: str, path: str) -> None:
    """Writes the blob to ``path`` (whole and verified, or not at all), or
    to standard output for ``-``."""
    if path != "-":
        store.blob_export(digest, path)
        return
    with store.blob_open(digest) as reader:
        shutil.copyfileobj(reader, sys.stdout.buffer)
    sys.stdout.flush()
