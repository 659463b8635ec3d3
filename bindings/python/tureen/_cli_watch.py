"""The ``tureen`` inspector's ``watch``: change and sync events, one JSON
object a line, as they happen, until Ctrl-C."""

from __future__ import annotations

import queue
import sys
from typing import Any, Dict, Iterator, Optional

from ._cli_output import print_json
from .store import Store

__all__ = ["watch"]

# Sync events reach only the handle that ran the sync; another process's
# syncs show here as writes to their states, read back for these members.
_STATE = ("type", "soupName", "status", "progress", "synced", "failed", "conflicts", "error")


def _sync_states(store: Store, change: Dict[str, Any]) -> Iterator[Dict[str, Any]]:
    ids = change.get("created", []) + change.get("updated", [])
    for state in store.retrieve("syncs_soup", ids) if ids else []:
        line = {"event": "sync", "code": "state", "syncId": state["_soupEntryId"], "name": state.get("name")}
        line.update((k, state[k]) for k in _STATE if k in state)
        yield line


def watch(store: Store, soup: Optional[str]) -> None:
    """Prints each event; returns on Ctrl-C. The library calls back on its
    own thread: the events are handed to this one through a queue, so that
    Ctrl-C (which only the main thread hears) ends the wait at once."""
    events: "queue.Queue[Dict[str, Any]]" = queue.Queue()
    with store.listen(soup, lambda change: events.put({"event": "change", **change})), \
            store.sync_listen(lambda event: events.put({"event": "sync", **event})):
        sys.stderr.write("watching %s (Ctrl-C to stop)\n" % (soup or "every soup"))
        sys.stderr.flush()
        try:
            while True:
                try:
                    event = events.get(timeout=0.5)
                except queue.Empty:
                    continue
                print_json(event)
                if event["event"] == "change" and event.get("soup") == "syncs_soup" and event["origin"] == "external":
                    for line in _sync_states(store, event):
                        print_json(line)
                sys.stdout.flush()
        except KeyboardInterrupt:
            pass
