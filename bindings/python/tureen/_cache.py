"""Cached reads: the part of :class:`tureen.Store` that reads server data
through a cache kept in the encrypted store (SmartSync's cache policies,
Convertigo C8o's local cache). See ``tureen.h``, "Cached reads"."""

from __future__ import annotations

import ctypes
import json
from typing import Any, Dict, Literal, Mapping, Optional, TypedDict, Union

from ._convert import c_json
from ._library import call_for_string, check, lib
from ._store_part import StorePart
from .sync import Target

#: SmartSync's cache policies (iOS and Android spellings) and C8o's
#: priorities, by their own names.
CachePolicy = Literal[
    "IgnoreCacheData", "ReloadAndReturnCacheOnError", "ReloadAndReturnCacheOnFailure",
    "ReturnCacheDataDontReload", "ReturnCacheDataAndReload", "ReloadAndReturnCacheData",
    "ReloadIfExpiredAndReturnCacheData", "InvalidateCacheDontReload", "InvalidateCacheAndReload",
    "IGNORE_CACHE_DATA", "RELOAD_AND_RETURN_CACHE_ON_ERROR", "RELOAD_AND_RETURN_CACHE_ON_FAILURE",
    "RETURN_CACHE_DATA_DONT_RELOAD", "RETURN_CACHE_DATA_AND_RELOAD", "RELOAD_AND_RETURN_CACHE_DATA",
    "RELOAD_IF_EXPIRED_AND_RETURN_CACHE_DATA", "INVALIDATE_CACHE_DONT_RELOAD", "INVALIDATE_CACHE_AND_RELOAD",
    "SERVER", "LOCAL",
]

#: The soup that holds the cached answers (readable, written only by the cache).
CACHE_SOUP = "cache_soup"


class CachedAnswer(TypedDict):
    """What :meth:`Cache.cached_fetch` returns."""

    #: ``"server"``, ``"cache"``, or None (InvalidateCacheDontReload).
    source: Optional[Literal["server", "cache"]]
    #: The record (a dict) or the list of records.
    data: Any
    #: Epoch ms when the answer given was stored; None when it was not.
    storedAt: Optional[int]
    ageMs: Optional[int]
    #: Epoch ms after which the stored answer is stale; None: never.
    expiresAt: Optional[int]
    expired: bool
    #: Whether the answer is in the cache now.
    cached: bool
    #: Whether a background refresh was started (ReturnCacheDataAndReload).
    refreshing: bool
    #: Why the server was not used, when the cache answered instead.
    error: Optional[str]


def _request(target: Target, id: Optional[str], query: Optional[Mapping[str, Union[str, int, float, bool]]]) -> bytes:
    request: Dict[str, Any] = {"target": dict(target)}
    if id is not None:
        request["id"] = id
    if query is not None:
        request["query"] = dict(query)
    return c_json(request)


class Cache(StorePart):
    """Mixed into :class:`tureen.Store`: cached reads."""

    def cached_fetch(self, target: Target, id: Optional[str] = None,
                     query: Optional[Mapping[str, Union[str, int, float, bool]]] = None, *,
                     policy: CachePolicy = "ReloadAndReturnCacheOnError", ttl_ms: Optional[int] = None,
                     now_ms: Optional[int] = None) -> CachedAnswer:
        """Reads one record (``id``) or the records a query selects
        (``query``: the server's parameters, Kinto's filters) from
        ``target`` through the store's cache, as ``policy`` says. The
        answer's ``"source"`` says where it came from and ``"ageMs"`` how
        old it is. ``ttl_ms`` bounds the age of a fresh answer and the
        lifetime of the one stored; ``now_ms`` replaces the wall clock."""
        options: Dict[str, Any] = {"policy": policy}
        if ttl_ms is not None:
            options["ttl_ms"] = ttl_ms
        if now_ms is not None:
            options["now_ms"] = now_ms
        c_request, c_options = _request(target, id, query), c_json(options)
        with self._use(serving=True) as handle:
            answer: CachedAnswer = json.loads(call_for_string(lib.tureen_cache_fetch, handle, c_request, c_options))
        return answer

    def clear_cache(self, target: Optional[Target] = None, id: Optional[str] = None,
                    query: Optional[Mapping[str, Union[str, int, float, bool]]] = None) -> int:
        """Removes the cached answer to one request, or every cached answer
        (no target). Returns how many were removed."""
        c_request = None if target is None else _request(target, id, query)
        removed = ctypes.c_int64()
        with self._use() as handle:
            check(lib.tureen_cache_clear(handle, c_request, ctypes.byref(removed)))
        return int(removed.value)

    def configure_cache(self, max_bytes: int) -> None:
        """Sets the cache's size budget for this store handle (default 32
        MiB); the least recently used answers go first."""
        c_config = c_json({"max_bytes": max_bytes})
        with self._use() as handle:
            check(lib.tureen_cache_configure(handle, c_config))
