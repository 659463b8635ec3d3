"""Tureen quickstart: an encrypted store, a soup of JSON entries, queries,
an alter, a file attached to an entry, a refused key, a rekey, removal.

Run from the repository root (after building libtureen.so):

    PYTHONPATH=bindings/python python3 examples/python/quickstart.py [STORE_PATH]

Without STORE_PATH the store is made in a temporary directory.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import List

import tureen
from tureen import IndexSpec, query


def soups_and_queries(store: tureen.Store) -> None:
    """Registers a soup, upserts entries, queries them, alters the soup."""
    store.register_soup(
        "recipes",
        [IndexSpec("title", "string"), IndexSpec("minutes", "integer"), IndexSpec("code", "string")],
    )
    print("soups: %s" % store.soup_names())

    # A batch is one transaction: every entry is written, or none.
    stored = store.upsert(
        "recipes",
        [
            {"title": "Miso soup", "minutes": 15, "code": "R-1", "tags": ["japanese", "quick"]},
            {"title": "Pot-au-feu", "minutes": 240, "code": "R-2", "tags": ["french"]},
            {"title": "Gazpacho", "minutes": 20, "code": "R-3", "tags": ["spanish", "cold"]},
            {"title": "Borscht", "minutes": 90, "code": "R-4", "tags": ["ukrainian"]},
            {"title": "Pho", "minutes": 180, "code": "R-5", "tags": ["vietnamese"]},
        ],
    )
    print("upserted %d entries, ids %s" % (len(stored), [e["_soupEntryId"] for e in stored]))

    # By external id: "code" identifies the entry, so this updates R-3 (an
    # update replaces the whole entry) ...
    gazpacho = store.upsert(
        "recipes",
        {"title": "Gazpacho andaluz", "minutes": 25, "code": "R-3", "tags": ["spanish", "cold"]},
        external_id_path="code",
    )
    print("updated by external id: %s (id %d)" % (gazpacho["title"], gazpacho["_soupEntryId"]))
    # ... and this one, with a code no entry has, inserts a new entry.
    ramen = store.upsert("recipes", {"title": "Ramen", "minutes": 60, "code": "R-6"}, "code")
    print("inserted by external id: %s (id %d)" % (ramen["title"], ramen["_soupEntryId"]))

    # An exact query: the key is converted to the index's type ("15" -> 15).
    quick = store.query(query.exact("recipes", "minutes", "15"))
    print("exact minutes=15: %s" % [e["title"] for e in quick])

    # Paging: iter_query reads page after page (2 entries each here) lazily.
    spec = query.range("recipes", "minutes", begin=20, order="descending", page_size=2)
    print("range minutes>=20, longest first (%d entries, pages of 2):" % store.count(spec))
    for entry in store.iter_query(spec):
        print("  %4d min  %s" % (entry["minutes"], entry["title"]))

    # Alter: index the tags too, and drop the "code" index. The entries, their
    # ids and dates are kept; the new index is computed from every entry.
    store.alter_soup(
        "recipes",
        [IndexSpec("title", "string"), IndexSpec("minutes", "integer"), IndexSpec("tags", "full_text")],
    )
    print("after alter: %s" % [tuple(spec) for spec in store.index_specs("recipes")])
    cold = store.query(query.like("recipes", "tags", "%cold%"))
    print("like tags %%cold%%: %s" % [e["title"] for e in cold])

    # Full-text search over the full_text index (SmartStore's match syntax:
    # words, OR, NOT, prefix*, "phrases").
    found = store.query(query.match("recipes", "tags", "japanese OR spanish", order_path="title"))
    print("match tags 'japanese OR spanish': %s" % [e["title"] for e in found])

    # Smart SQL: one read-only SELECT over soups; rows come back, and "?"
    # parameters are bound from args, never pasted into the SQL.
    rows = store.query(query.smart(
        "select {recipes:title}, {recipes:minutes} from {recipes} "
        "where {recipes:minutes} < ? order by {recipes:minutes}", args=[60]))
    print("smart sql, under an hour: %s" % rows)
    # Each row is a list that can also be read by column name, as sqlite3.Row.
    print("the quickest: %s, %d minutes" % (rows[0]["title"], rows[0]["minutes"]))

    store.remove_by_query(query.range("recipes", "minutes", begin=120))
    titles = [e["title"] for e in store.iter_query(query.all("recipes", order_path="title"))]
    print("after removing the long ones: %s" % titles)


def attach_a_file(store: tureen.Store, folder: str) -> None:
    """Stores a file as a blob (encrypted with the store, streamed) and
    refers to it from an entry; reads it back."""
    photo = os.path.join(folder, "miso.jpg")
    with open(photo, "wb") as f:
        f.write(b"pretend these are the bytes of a JPEG")
    ref = store.blob_put(photo, "image/jpeg")  # bytes or a binary file object work too
    store.upsert("recipes", {"title": "Miso soup, with a photo", "minutes": 15, "photo": ref})
    print("attached %s (%d bytes) to an entry" % (ref["digest"][:19] + "...", ref["length"]))
    (entry,) = store.query(query.exact("recipes", "title", "Miso soup, with a photo"))
    with store.blob_open(entry["photo"]) as blob:  # a seekable binary file; its digest is checked
        print("read back: %r" % blob.read())


def main(argv: List[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="tureen-quickstart-") as tmp:
        path = argv[1] if len(argv) > 1 else os.path.join(tmp, "quickstart.db")
        print("Tureen %s (library %s)" % (tureen.version(), tureen.LIBRARY_PATH))

        # Create an encrypted store; "with" closes it.
        with tureen.Store.open(path, key="correct horse battery staple") as store:
            print("opened  %s: %d bytes" % (store.path, store.size()))
            soups_and_queries(store)
            attach_a_file(store, tmp)

        # A wrong key is refused, with a message saying what is wrong.
        try:
            tureen.Store.open(path, key="guess")
        except tureen.BadKeyError as e:
            print("refused the wrong key: %s (code %d)" % (e.message, e.code))
        else:
            print("error: the wrong key was accepted", file=sys.stderr)
            return 1

        # Rekey: afterwards only the new key opens the store.
        with tureen.Store.open(path, key="correct horse battery staple") as store:
            store.rekey(key="a new passphrase")
            print("rekeyed; store size %d bytes" % store.size())
        with tureen.Store.open(path, key="a new passphrase") as store:
            count = store.count(query.all("recipes"))
            print("reopened with the new key: %d bytes, %d recipes" % (store.size(), count))

        # Delete the store and its -wal/-shm files.
        tureen.remove_store(path)
        print("removed %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
