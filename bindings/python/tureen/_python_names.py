"""The Python call for each C function of ``include/tureen.h``.

The library's messages point to the call that fixes the problem ("change
them with tureen_soup_alter"); a Python caller never made that call and
looks for it in vain, so every message the binding raises names the call as
Python makes it.
"""

from __future__ import annotations

import re
from typing import Dict

__all__ = ["PYTHON_CALLS", "python_names"]

#: Every function of the header (and its structs a message may name), by the
#: Python call that does its work.
PYTHON_CALLS: Dict[str, str] = {
    # Library
    "tureen_version": "tureen.version()",
    "tureen_version_number": "tureen.version_number()",
    "tureen_errmsg": "Error.message",
    "tureen_status_name": "Error.status_name",
    # Stores
    "tureen_store_open": "tureen.Store.open",
    "tureen_store_close": "store.close",
    "tureen_store_rekey": "store.rekey",
    "tureen_store_size": "store.size",
    "tureen_store_remove": "tureen.remove_store",
    "tureen_store_compact": "store.compact",
    "tureen_store_check": "store.check",
    "tureen_store_interrupt": "store.interrupt",
    "tureen_store": "tureen.Store",
    # Soups
    "tureen_soup_register": "store.register_soup",
    "tureen_soup_exists": "store.soup_exists",
    "tureen_soup_names": "store.soup_names",
    "tureen_soup_index_specs": "store.index_specs",
    "tureen_soup_alter": "store.alter_soup",
    "tureen_soup_reindex": "store.reindex_soup",
    "tureen_soup_clear": "store.clear_soup",
    "tureen_soup_drop": "store.drop_soup",
    # Entries and queries
    "tureen_upsert": "store.upsert",
    "tureen_retrieve": "store.retrieve",
    "tureen_remove": "store.remove",
    "tureen_query": "store.query",
    "tureen_count": "store.count",
    "tureen_remove_by_query": "store.remove_by_query",
    # Sync
    "tureen_sync_down": "store.sync_down",
    "tureen_sync_up": "store.sync_up",
    "tureen_resync": "store.resync",
    "tureen_sync_status": "store.sync_status",
    "tureen_sync_cancel": "store.sync_cancel",
    "tureen_clean_ghosts": "store.clean_ghosts",
    "tureen_local_upsert": "store.local_upsert",
    "tureen_local_merge": "store.local_merge",
    "tureen_local_delete": "store.local_delete",
    "tureen_local_read": "store.local_read",
    "tureen_local_delete_records": "store.local_delete_records",
    "tureen_conflicts": "store.conflicts",
    "tureen_conflict_resolve": "store.resolve_conflict",
    "tureen_target_register": "store.register_target",
    "tureen_target_unregister": "store.unregister_target",
    "tureen_callbacks": "store.register_target",
    "tureen_auth_register": "store.register_auth",
    "tureen_auth_unregister": "store.unregister_auth",
    "tureen_auth_callbacks": "store.register_auth",
    "tureen_transformer_register": "store.register_transformer",
    "tureen_transformer_remove": "store.remove_transformer",
    "tureen_transformer": "store.register_transformer",
    "tureen_reencrypt": "store.reencrypt",
    # Logging and events
    "tureen_log_set": "tureen.log.set_level",
    "tureen_soup_listen": "store.listen",
    "tureen_live_query": "store.live_query",
    "tureen_sync_listen": "store.sync_listen",
    "tureen_listener_remove": "listener.remove",
    "tureen_listener": "tureen.listeners.Listener",
    "tureen_changes": "store.changes",
    # Managed syncs and the sync loop
    "tureen_syncs": "store.syncs",
    "tureen_sync_update": "store.sync_update",
    "tureen_sync_delete": "store.sync_delete",
    "tureen_sync_error_resolve": "store.sync_error_resolve",
    "tureen_sync_reset": "store.sync_reset",
    "tureen_sync_republish": "store.sync_republish",
    "tureen_sync_loop_start": "store.sync_loop_start",
    "tureen_sync_loop_stop": "store.sync_loop_stop",
    "tureen_sync_loop_force": "store.sync_loop_force",
    "tureen_sync_loop_status": "store.sync_loop_status",
    # Cached reads
    "tureen_cache_fetch": "store.cached_fetch",
    "tureen_cache_clear": "store.clear_cache",
    "tureen_cache_configure": "store.configure_cache",
    # Blobs
    "tureen_blob_put": "store.blob_put",
    "tureen_blob_get": "store.blob_get",
    "tureen_blob_import": "store.blob_put",
    "tureen_blob_export": "store.blob_export",
    "tureen_blob_fetch": "store.blob_fetch",
    "tureen_blob_info": "store.blob_info",
    "tureen_blob_collect": "store.collect_blobs",
    "tureen_blob_writer_open": "store.blob_put",
    "tureen_blob_writer_write": "store.blob_put",
    "tureen_blob_writer_finish": "store.blob_put",
    "tureen_blob_writer_cancel": "store.blob_put",
    "tureen_blob_reader_open": "store.blob_open",
    "tureen_blob_reader_read": "reader.read",
    "tureen_blob_reader_close": "reader.close",
    # Transactions across calls
    "tureen_transaction_begin": "store.transaction",
    "tureen_transaction_commit": "store.transaction",
    "tureen_transaction_rollback": "store.transaction",
}

_C_NAME = re.compile(r"\btureen_[a-z_]+\b")


def python_names(message: str) -> str:
    """``message`` with the C calls it names written as a Python caller
    makes them; other ``tureen_`` words (a Smart SQL function) are kept."""
    if "tureen_" not in message:
        return message
    return _C_NAME.sub(lambda m: PYTHON_CALLS.get(m.group(0), m.group(0)), message)
