"""Sync down, sync up, resync and the calls about one sync: the part of
:class:`tureen.Store` for ``tureen.h``'s "Sync"."""

from __future__ import annotations

import collections.abc
import ctypes
import json
from typing import Any, Callable, Dict, Iterable, Literal, Mapping, Optional, Tuple

from ._convert import c_string, json_text, plain_list
from ._interrupt import on_ctrl_c
from ._library import _take_string, call_for_string, check, errmsg, lib
from ._store_part import StorePart
from ._sync_call import PROGRESS, ProgressCallable, sync_call
from .errors import MisuseError, error_for
from .sync import MergeMode, SyncRef, SyncState, Target, sync_ref

__all__ = ["Syncs"]


def _target_text(target: Target) -> bytes:
    if not isinstance(target, collections.abc.Mapping):
        raise TypeError("a target must be a dict, not %s" % type(target).__name__)
    return json_text(dict(target), "the target")


def _options_text(
    name: Optional[str],
    merge_mode: Optional[str],
    fieldlist: Optional[Iterable[str]],
    options: Optional[Mapping[str, Any]],
) -> Optional[bytes]:
    """The sync options as JSON text, or None (NULL) when there are none.
    The keyword arguments win over the same members of ``options``."""
    if options is not None and not isinstance(options, collections.abc.Mapping):
        raise TypeError("options must be a dict, not %s" % type(options).__name__)
    merged: Dict[str, Any] = dict(options) if options else {}
    if name is not None:
        merged["name"] = name
    if merge_mode is not None:
        merged["mergeMode"] = merge_mode
    if fieldlist is not None:
        merged["fieldlist"] = plain_list(fieldlist, "fieldlist", "field names (str)")
    return json_text(merged, "the sync options") if merged else None


def _name_ref(name: Optional[str], options: Optional[Mapping[str, Any]]) -> Optional[bytes]:
    """The name a new sync is given (the keyword wins, as in _options_text),
    for a Ctrl-C that comes before its first report."""
    named = name if name is not None else (options or {}).get("name")
    return named.encode("utf-8") if isinstance(named, str) and "\0" not in named else None


class Syncs(StorePart):
    """Mixed into :class:`tureen.Store`: running syncs and reading their state."""

    def _run_sync(
        self, function: Callable[..., int], args: Tuple[Any, ...], progress: Optional[ProgressCallable],
        ref: Optional[bytes] = None,
    ) -> SyncState:
        """Runs a sync function, ``function(handle, *args, progress_fn, ctx,
        &state_json)``, and returns the final state.

        A failed sync raises the exception of its status with ``state`` set to
        the final state (None when the library returned none, as for a bad
        target). An exception raised by ``progress`` (or a KeyboardInterrupt
        in a target callable) stopped the sync and is raised here, chained to
        the sync's own error.
        """
        if progress is not None and not callable(progress):
            raise TypeError("progress must be callable, not %s" % type(progress).__name__)
        out = ctypes.c_void_p()
        # A call that may talk to a server: close does not wait for it (a
        # sync waiting for its soup may have no id to cancel it by), the
        # library's close ends it.
        with self._use(serving=True) as handle, sync_call(handle, progress, ref) as (call, key):
            with on_ctrl_c(call.cancel):  # a Ctrl-C raises KeyboardInterrupt as it ends
                rc = function(handle, *args, PROGRESS, key, ctypes.byref(out))
                error = error_for(rc, errmsg()) if rc != 0 else None
                text = _take_string(out)
            if isinstance(error, MisuseError) and text is None:
                raise error  # after close: CancelledError (see Store._use)
        state: Optional[SyncState] = json.loads(text) if text else None
        if error is not None:
            error.state = state
            if call.host_error is not None and call.error is None:
                error.__cause__ = call.host_error
        if call.error is not None:
            raise call.error from error
        if error is not None:
            raise error
        return state if state is not None else {}

    def sync_down(
        self,
        target: Target,
        soup: str,
        *,
        name: Optional[str] = None,
        merge_mode: Optional[MergeMode] = None,
        blobs: Optional[Literal["eager", "lazy"]] = None,
        options: Optional[Mapping[str, Any]] = None,
        progress: Optional[ProgressCallable] = None,
    ) -> SyncState:
        """Fetches every record of ``target`` into ``soup`` and saves the sync
        state (in the soup ``"syncs_soup"``), so that :meth:`resync` can fetch
        only what changed since.

        The soup must have a string index on the target's id field (``"id"``
        unless the target says otherwise). Records stored carry
        ``"__local__"`` and the three ``"__locally_*__"`` flags, all False.

        Given the ``name`` of an existing sync with the same target, soup
        and options, it runs that sync again, as :meth:`resync` does (with
        ``options={"start": False}`` it returns its state untouched): the
        call can be made at every start of the app ($fh.sync's ``manage``).

        Args:
            target: a dict, e.g. from :func:`tureen.sync.kinto_target`,
                :func:`~tureen.sync.rest_target` or
                :func:`~tureen.sync.callback_target`. It is stored with the
                sync state, credentials included, inside the encrypted store.
            soup: the soup's name.
            name: a unique name for the sync (else it is known by its id).
            merge_mode: :data:`tureen.sync.OVERWRITE` (the library's default)
                or :data:`~tureen.sync.LEAVE_IF_CHANGED` (records changed
                locally are kept).
            blobs: ``"eager"`` (the default: the blobs records refer to
                come down with their page) or ``"lazy"`` (on first read, or
                :meth:`blob_fetch`); Kinto targets with kinto-attachment.
            options: more options as a dict (the keyword arguments win).
            progress: called with the state dict after each page and at the
                end, on this thread. It must not write to this store. If it
                raises, the sync is cancelled (it ends STOPPED, and a resync
                continues it) and the exception is raised from this call.

        Returns:
            The final sync state, status ``"DONE"``.

        Raises:
            InvalidError: a bad target or option, a name an existing sync
                has with another target, soup, options or direction (the
                message says which; change it with :meth:`sync_update`), a
                soup without an index on the id field.
            NotFoundError: no soup ``soup``, or an unregistered callback target.
            NetworkError, HTTPError: the server could not be reached, or
                refused (after the retries).
            ConflictError: records in conflict (the others were synced).
            CancelledError: stopped by :meth:`sync_cancel`.
            KeyboardInterrupt: Ctrl-C, on the main thread: the sync stops at
                its next request and ends STOPPED, and a resync continues it.
            Every error of a sync that started has ``state``: the final state
            (status ``"FAILED"`` or ``"STOPPED"``, with ``"error"``,
            ``"failed"``, ``"failedIds"``, ...); it is None when the library
            kept no state (a bad target, say).
        """
        c_target = _target_text(target)
        c_soup = c_string(soup, "the soup name")
        if blobs is not None:
            options = dict(options or {}, blobs=blobs)
        c_options = _options_text(name, merge_mode, None, options)
        return self._run_sync(lib.tureen_sync_down, (c_target, c_soup, c_options), progress, _name_ref(name, options))

    def sync_up(
        self,
        target: Target,
        soup: str,
        *,
        name: Optional[str] = None,
        merge_mode: Optional[MergeMode] = None,
        fieldlist: Optional[Iterable[str]] = None,
        options: Optional[Mapping[str, Any]] = None,
        progress: Optional[ProgressCallable] = None,
    ) -> SyncState:
        """Sends the local changes of ``soup`` (records with ``"__local__"``
        true, e.g. from :meth:`local_upsert` and :meth:`local_delete`) to
        ``target``: creates, updates and deletes, batched where the server
        allows it (Kinto: 25 changes per request).

        A record the server rejects fails alone: it keeps its flags and gets
        ``"__last_error__"``; the others are synced, and the call raises
        :class:`~tureen.HTTPError` whose ``state`` lists ``"failedIds"``.

        Args:
            target, soup, name, options, progress: as :meth:`sync_down`.
            merge_mode: :data:`tureen.sync.OVERWRITE` (default),
                :data:`~tureen.sync.LEAVE_IF_CHANGED`,
                :data:`~tureen.sync.MERGE_ACCEPT_YOURS`,
                :data:`~tureen.sync.MERGE_FAIL_IF_CONFLICT` or
                :data:`~tureen.sync.MERGE_FAIL_IF_CHANGED`. The last ones
                compare the server's copy with the base copy kept at sync
                down; conflicts are kept (see :meth:`conflicts`) and the call
                raises :class:`~tureen.ConflictError`.
            fieldlist: send only these fields (and the id).

        Returns:
            The final sync state, status ``"DONE"``.

        Raises:
            As :meth:`sync_down`.
        """
        c_target = _target_text(target)
        c_soup = c_string(soup, "the soup name")
        c_options = _options_text(name, merge_mode, fieldlist, options)
        return self._run_sync(lib.tureen_sync_up, (c_target, c_soup, c_options), progress, _name_ref(name, options))

    def resync(self, sync: SyncRef, progress: Optional[ProgressCallable] = None) -> SyncState:
        """Runs the sync ``sync`` (its id, name or state) again.

        A sync down fetches only what changed since its last run, deletions
        included; a stopped or failed one continues from its last saved page.
        A sync up sends the changes made since. A soup's syncs run one at a
        time across every handle and process of the store: this call waits
        while another sync of the soup runs (:meth:`sync_cancel` ends the
        wait).

        Raises:
            NotFoundError: no such sync.
            MisuseError: the sync is running now, on this handle, another
                one, or in another process; or this is called from a
                callback of a running sync of the same soup.
            Otherwise as :meth:`sync_down`.
        """
        ref = sync_ref(sync)
        return self._run_sync(lib.tureen_resync, (ref,), progress, ref)

    def sync_status(self, sync: SyncRef) -> SyncState:
        """The state of the sync ``sync`` (its id, name or state).

        Raises:
            NotFoundError: no such sync.
        """
        c_sync = sync_ref(sync)
        with self._use() as handle:
            text = call_for_string(lib.tureen_sync_status, handle, c_sync)
        state: SyncState = json.loads(text)
        return state

    def sync_cancel(self, sync: SyncRef) -> None:
        """Asks the running sync ``sync`` to stop; meant to be called from
        another thread than the one running it (or from its progress
        callable's helpers).

        The sync stops between pages or batches, saves what it has and ends
        STOPPED: its call raises :class:`~tureen.CancelledError` (with
        ``state``), and :meth:`resync` continues it. Cancelling a sync that is
        not running does nothing.

        Raises:
            NotFoundError: no such sync.
        """
        c_sync = sync_ref(sync)
        with self._use() as handle:
            check(lib.tureen_sync_cancel(handle, c_sync))

    def clean_ghosts(self, sync: SyncRef) -> int:
        """For the sync down ``sync``: fetches the ids the server holds now
        and removes the soup's records that the server no longer has (local
        changes are kept). Returns how many were removed.

        Raises:
            InvalidError: ``sync`` is a sync up.
            Otherwise as :meth:`resync`.
        """
        c_sync = sync_ref(sync)
        out = ctypes.c_int64()
        with self._use(serving=True) as handle:
            check(lib.tureen_clean_ghosts(handle, c_sync, ctypes.byref(out)))
        return int(out.value)

    def reencrypt(self, target: Target) -> int:
        """On a target with ``encryption=``: seals again under its first
        key every record of its collection sealed under another listed key
        (or held in clear), each write conditional on the record not having
        changed since it was read, and every blob those records refer to
        that the server holds only under an older key's name (uploaded
        again under the first key's, the older names then removed).
        Returns how many records were re-encrypted; records changed
        meanwhile or not decrypting are left as they are.

        Raises:
            InvalidError: the target has no ``"encryption"``.
            Otherwise as :meth:`resync`.
        """
        c_target = _target_text(target)
        with self._use(serving=True) as handle:
            result = json.loads(call_for_string(lib.tureen_reencrypt, handle, c_target))
        return int(result["reencrypted"])

