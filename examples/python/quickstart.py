"""Tureen quickstart: an encrypted store, a refused key, a rekey, removal.

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


def main(argv: List[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="tureen-quickstart-") as tmp:
        path = argv[1] if len(argv) > 1 else os.path.join(tmp, "quickstart.db")
        print("Tureen %s (library %s)" % (tureen.version(), tureen.LIBRARY_PATH))

        # Create an encrypted store; "with" closes it.
        with tureen.Store.open(path, key="correct horse battery staple") as store:
            print("opened  %s: %d bytes" % (store.path, store.size()))

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
            print("reopened with the new key: %d bytes" % store.size())

        # Delete the store and its -wal/-shm files.
        tureen.Store.remove(path)
        print("removed %s" % path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
