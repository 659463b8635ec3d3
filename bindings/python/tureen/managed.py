"""Managed syncs, sync events and the sync loop: the part of
:class:`tureen.Store` that keeps datasets in step with the server in the
background (Red Hat's ``$fh.sync``, RhoConnect). See ``tureen.h``, "Sync
events", "Managed syncs" and "The sync loop", for what each call does."""

from __future__ import annotations

import ctypes
import json
from typing import Any, Callable, ContextManager, Dict, Iterable, List, Literal, Mapping, Optional, Union

from ._convert import c_json, c_string
from ._interrupt import on_ctrl_c
from ._library import call_for_string, check, lib
from ._store_part import StorePart
from .listeners import FREE_CTX, Changes, EventCallable, Listener
from .sync import SyncRef, SyncState, Target, sync_ref

#: $fh.sync's eleven notification codes, and Tureen's own for blobs.
SyncEventCode = Literal[
    "sync_started", "sync_complete", "sync_failed", "offline_update", "collision_detected",
    "remote_update_failed", "remote_update_applied", "local_update_applied", "delta_received",
    "record_delta_received", "client_storage_failed", "blob_transferred", "blob_progress",
]
#: What :meth:`ManagedSyncs.sync_error_resolve` may do with a refused change.
ErrorAction = Literal["retry", "rollback", "recreate", "delete"]
#: A sync event: ``{"code", "time", "syncId", "name", "soup", ...}``.
SyncEvent = Dict[str, Any]


class ManagedSyncs(StorePart):
    """Mixed into :class:`tureen.Store`: managed syncs, sync events and the
    sync loop."""

    def sync_listen(self, callback: EventCallable,
                    codes: Optional[Union[Iterable[SyncEventCode], Mapping[str, bool]]] = None) -> Listener:
        """Calls ``callback(event)`` with each sync event on the library's
        thread: every code, or those in ``codes``, or as $fh.sync's flags
        say (``{"notify_sync_complete": True}``). Returns a
        :class:`~tureen.listeners.Listener` (a context manager).

        Each event is a dict with ``"code"`` and ``"time"``, the sync's
        ``"syncId"``, ``"name"``, ``"soup"``, ``"type"``, and $fh.sync's
        members: ``"dataset_id"`` (the sync's name, or its id as a string;
        the soup's name for a local write's events), ``"message"`` and, on
        record events, ``"uid"`` (the record id); see tureen.h, "Sync
        events"."""
        if codes is None:
            c_filter = None
        elif isinstance(codes, Mapping):
            c_filter = c_json(dict(codes))
        else:
            c_filter = c_json({"codes": list(codes)})
        with self._use() as handle:
            return Listener(lambda fn, key, out: lib.tureen_sync_listen(
                handle, c_filter, fn, key, FREE_CTX, ctypes.byref(out)), callback)

    def sync_events(self, codes: Optional[Iterable[SyncEventCode]] = None,
                    timeout: Optional[float] = None) -> Changes:
        """An iterator over sync events as they come (``for event in
        store.sync_events(timeout=5)``); ends after ``timeout`` seconds
        without one. A context manager."""
        wanted = None if codes is None else list(codes)
        return Changes(lambda fn: self.sync_listen(fn, wanted), timeout)

    def syncs(self) -> List[SyncState]:
        """Every sync of the store with its state (credentials redacted)."""
        with self._use() as handle:
            result: List[SyncState] = json.loads(call_for_string(lib.tureen_syncs, handle))
        return result

    def sync_update(self, sync: SyncRef, target: Optional[Target] = None,
                    options: Optional[Mapping[str, Any]] = None) -> SyncState:
        """Changes a sync's target (credentials, parameters, place) and
        options; returns its new state. A target in another place starts it
        from scratch; new credentials keep its position."""
        c_sync = sync_ref(sync)
        c_target = None if target is None else c_json(dict(target))
        c_options = None if options is None else c_json(dict(options))
        with self._use() as handle:
            check(lib.tureen_sync_update(handle, c_sync, c_target, c_options))
            state: SyncState = json.loads(call_for_string(lib.tureen_sync_status, handle, c_sync))
        return state

    def sync_delete(self, sync: SyncRef) -> None:
        """Deletes a sync's state and kept credentials (not its records)."""
        c_sync = sync_ref(sync)
        with self._use() as handle:
            check(lib.tureen_sync_delete(handle, c_sync))

    def sync_error_resolve(self, soup: str, entry_id: int, action: ErrorAction) -> None:
        """Acts on an entry whose change the server refused: ``"retry"``,
        ``"rollback"``, ``"recreate"`` or ``"delete"``."""
        c_soup, c_action = c_string(soup, "soup"), c_string(action, "action")
        with self._use() as handle:
            check(lib.tureen_sync_error_resolve(handle, c_soup, int(entry_id), c_action))

    def sync_reset(self) -> None:
        """Stops the loop, empties every synced soup and deletes every sync
        state with its credentials (RhoConnect's full reset and logout)."""
        with self._use() as handle:
            check(lib.tureen_sync_reset(handle))

    def sync_republish(self, sync: SyncRef) -> int:
        """After the server lost data (the sync down's state says
        ``serverFlushed``): marks the soup's records to be published again by
        the next sync up and starts the sync down over. Returns how many."""
        c_sync = sync_ref(sync)
        count = ctypes.c_int64()
        with self._use() as handle:
            check(lib.tureen_sync_republish(handle, c_sync, ctypes.byref(count)))
        return int(count.value)

    def sync_loop_start(self, config: Optional[Mapping[str, Any]] = None, **options: Any) -> "SyncLoop":
        """Starts the store's sync loop with ``config`` (and/or keyword
        options: ``sync_frequency_ms=200``...). Returns a
        :class:`SyncLoop`, a context manager that stops it."""
        merged: Dict[str, Any] = dict(config or {})
        merged.update(options)
        c_config = c_json(merged) if merged else None
        with self._use() as handle:
            check(lib.tureen_sync_loop_start(handle, c_config))
        return SyncLoop(self)

    def sync_loop_stop(self) -> None:
        """Stops the loop; a run in flight stops at its next safe point."""
        with self._use() as handle:
            check(lib.tureen_sync_loop_stop(handle))

    def sync_loop_force(self, sync: Optional[SyncRef] = None) -> None:
        """With the loop running: makes ``sync`` (None: every sync of the
        loop) due now, and resumes a paused loop. Without a loop: runs
        ``sync`` (None: every sync of the store, a soup's syncs up first)
        once, here, as :meth:`resync` does ($fh.sync's ``forceSync``,
        RhoConnect's ``syncAll``); read the outcome with :meth:`sync_status`.

        Raises:
            NotFoundError: no such sync.
            InvalidError: a sync the running loop's ``syncs`` leaves out.
            Without a loop, as :meth:`resync`: a run that failed raises its
            error once every sync has run (for None, the first failure,
            its message naming the sync); a run cancelled (Ctrl-C,
            :meth:`sync_cancel`, close) ends the cycle with
            :class:`~tureen.CancelledError`."""
        c_sync = None if sync is None else sync_ref(sync)
        # Without a loop the syncs run in this call: close ends it, and so
        # does Ctrl-C (it cancels the run under way, which ends the cycle).
        with self._use(serving=True) as handle, on_ctrl_c(lambda: _cancel_syncs(handle, c_sync)):
            check(lib.tureen_sync_loop_force(handle, c_sync))

    def sync_loop_status(self) -> Dict[str, Any]:
        """The loop's state: ``{"running", "active", "offline", "syncs": [...]}``."""
        with self._use() as handle:
            status: Dict[str, Any] = json.loads(call_for_string(lib.tureen_sync_loop_status, handle))
        return status


def _cancel_syncs(handle: Any, ref: Optional[bytes]) -> None:
    """Cancels the sync ``ref``, or every sync of the store (None): the one
    running stops; cancelling the others does nothing."""
    if ref is not None:
        lib.tureen_sync_cancel(handle, ref)
        return
    for state in json.loads(call_for_string(lib.tureen_syncs, handle)):
        lib.tureen_sync_cancel(handle, str(state["_soupEntryId"]).encode("ascii"))


class SyncLoop:
    """The running sync loop of a store: ``with store.sync_loop_start(...):``
    stops it when the block ends."""

    def __init__(self, store: ManagedSyncs) -> None:
        self._store = store

    def stop(self) -> None:
        self._store.sync_loop_stop()

    def force(self, sync: Optional[SyncRef] = None) -> None:
        self._store.sync_loop_force(sync)

    def status(self) -> Dict[str, Any]:
        return self._store.sync_loop_status()

    def __enter__(self) -> "SyncLoop":
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._store.sync_loop_status().get("running"):
            self.stop()

