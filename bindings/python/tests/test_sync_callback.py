"""Callback targets: Python callables doing an in-memory server's work through
Store.register_target, and what becomes of their answers and exceptions."""

from __future__ import annotations

import gc
import threading
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional

import pytest

import tureen
from tureen import sync
from tureen import _hosts as hosts_module
from sync_support import WAIT, app_fields, conflicted, entries, is_clean

RAW = "9e" * 32  # a raw key: no KDF, fast to open
SOUP = "things"


class MemoryServer:
    """A server in a dict, speaking the header's callback protocol.

    ``fail`` queues exceptions per operation: the next call of that
    operation raises the first one queued (None lets a call through).
    """

    def __init__(self, page_size: int = 10, id_field: str = "id", modified_field: str = "last_modified") -> None:
        self.page_size = page_size
        self.id_field = id_field
        self.modified_field = modified_field
        self.records: Dict[str, Dict[str, Any]] = {}
        self.tombstones: Dict[str, Dict[str, Any]] = {}
        self.clock = 1_700_000_000_000
        self.calls: List[tuple] = []
        self.faults: Dict[str, List[Optional[BaseException]]] = {}
        self.lock = threading.Lock()

    # the server's own changes ------------------------------------------------

    def _stamp(self) -> int:
        self.clock += 1
        return self.clock

    def put(self, record: Dict[str, Any]) -> Dict[str, Any]:
        stored = dict(record, **{self.modified_field: self._stamp()})
        self.records[stored[self.id_field]] = stored
        self.tombstones.pop(stored[self.id_field], None)
        return dict(stored)

    def patch(self, rid: str, fields: Dict[str, Any]) -> Dict[str, Any]:
        return self.put(dict(self.records[rid], **fields))

    def delete(self, rid: str) -> None:
        del self.records[rid]
        self.tombstones[rid] = {self.id_field: rid, "deleted": True, self.modified_field: self._stamp()}

    def fail(self, op: str, *errors: Optional[BaseException]) -> None:
        self.faults.setdefault(op, []).extend(errors)

    def _enter(self, op: str, request: Dict[str, Any]) -> None:
        self.calls.append((op, request))
        queued = self.faults.get(op)
        if queued:
            error = queued.pop(0)
            if error is not None:
                raise error

    def ops(self, op: str) -> List[Dict[str, Any]]:
        return [request for name, request in self.calls if name == op]

    # the callables -----------------------------------------------------------

    def fetch(self, request: Dict[str, Any]) -> Dict[str, Any]:
        self._enter("fetch", request)
        since = request["since"]
        items = list(self.records.values())
        if since is not None:
            # Inclusive: records sharing the last stamp come again, none is lost.
            items += list(self.tombstones.values())
            items = [r for r in items if r[self.modified_field] >= since]
        items.sort(key=lambda r: (r[self.modified_field], r[self.id_field]))
        start = int(request["cursor"] or 0)
        end = start + self.page_size
        return {"records": items[start:end], "cursor": end if end < len(items) else None}

    def _check_base(self, rid: str, base: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        current = self.records.get(rid)
        if current is None:
            raise sync.ServerConflict(None, "%s is gone" % rid)
        if base is not None and base.get(self.modified_field) != current[self.modified_field]:
            raise sync.ServerConflict(current)
        return current

    def create(self, request: Dict[str, Any]) -> Dict[str, Any]:
        self._enter("create", request)
        return {"record": self.put(request["record"])}

    def update(self, request: Dict[str, Any]) -> Dict[str, Any]:
        self._enter("update", request)
        record = request["record"]
        self._check_base(record[self.id_field], request.get("base"))
        return {"record": self.put(record)}

    def remove(self, request: Dict[str, Any]) -> None:
        self._enter("remove", request)
        rid = request["id"]
        if rid not in self.records:
            raise tureen.NotFoundError("%s is already gone" % rid)
        self._check_base(rid, request.get("base"))
        self.delete(rid)
        return None

    def register(self, store: tureen.Store, name: str = "mem") -> Dict[str, Any]:
        store.register_target(name, fetch=self.fetch, create=self.create, update=self.update, remove=self.remove)
        return sync.callback_target(name)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tureen.Store]:
    with tureen.Store.open(tmp_path / "callback.db", raw_key=RAW) as s:
        s.register_soup(SOUP, [("id", "string")])
        yield s


@pytest.fixture
def server() -> MemoryServer:
    return MemoryServer()


def local_by_id(store: tureen.Store, field: str = "id", soup: str = SOUP) -> Dict[str, Dict[str, Any]]:
    return {e[field]: e for e in entries(store, soup)}


def lent_buffers(store: tureen.Store) -> int:
    """Response buffers the library has not handed back yet (white box)."""
    return sum(
        len(hosts_module._targets[key]._buffers)
        for key in store._target_keys
        if key in hosts_module._targets
    )


# ---------------------------------------------------------------------------
# sync down


def test_sync_down_pages_and_resync(store: tureen.Store, server: MemoryServer) -> None:
    for i in range(25):
        server.put({"id": "t%02d" % i, "n": i})
    target = server.register(store)
    seen: List[Dict[str, Any]] = []
    state = store.sync_down(target, SOUP, name="down", progress=seen.append)
    assert state["status"] == "DONE" and state["done"] == 25
    assert [r["cursor"] for r in server.ops("fetch")] == [None, 10, 20]
    assert server.ops("fetch")[0]["since"] is None
    local = local_by_id(store)
    assert len(local) == 25 and all(is_clean(e) for e in local.values())
    assert app_fields(local["t07"]) == server.records["t07"]
    assert seen[-1]["status"] == "DONE" and len(seen) >= 3
    assert [s["done"] for s in seen] == sorted(s["done"] for s in seen)
    assert lent_buffers(store) == 0

    server.patch("t03", {"n": 300})
    server.delete("t04")  # a tombstone: {"id", "deleted": true, "last_modified"}
    server.put({"id": "t99", "n": 99})
    server.calls.clear()
    again = store.resync("down")
    assert again["status"] == "DONE"
    since = server.ops("fetch")[0]["since"]
    assert since is not None and since <= state["maxTimeStamp"] + 1
    assert again["done"] <= 4
    local = local_by_id(store)
    assert local["t03"]["n"] == 300 and "t04" not in local and local["t99"]["n"] == 99
    assert len(local) == 25


def test_id_and_modified_fields(store: tureen.Store) -> None:
    server = MemoryServer(id_field="uid", modified_field="ts")
    server.put({"uid": "u1", "v": 1})
    store.register_soup("by_uid", [("uid", "string")])
    store.register_target(
        "uids", fetch=server.fetch, create=server.create, update=server.update, remove=server.remove
    )
    target = sync.callback_target("uids", idField="uid", modifiedField="ts")
    assert store.sync_down(target, "by_uid")["maxTimeStamp"] == server.records["u1"]["ts"]
    store.local_upsert("by_uid", {"uid": "u1", "v": 2}, id_field="uid")
    assert store.sync_up(target, "by_uid")["status"] == "DONE"
    assert server.records["u1"]["v"] == 2
    assert server.ops("update")[0]["base"]["v"] == 1


# ---------------------------------------------------------------------------
# sync up


def test_sync_up_create_update_delete(store: tureen.Store, server: MemoryServer) -> None:
    server.put({"id": "keep", "v": 1})
    server.put({"id": "edit", "v": 1})
    server.put({"id": "drop", "v": 1})
    target = server.register(store)
    store.sync_down(target, SOUP)
    base_edit = dict(server.records["edit"])
    local = local_by_id(store)
    created = store.local_upsert(SOUP, {"v": "new"})
    store.local_upsert(SOUP, {"id": "edit", "v": 2})
    store.local_delete(SOUP, [local["drop"]["_soupEntryId"]])

    state = store.sync_up(target, SOUP)
    assert state["status"] == "DONE" and state["synced"] == 3

    [create] = server.ops("create")
    assert app_fields(create["record"]) == {"id": created["id"], "v": "new"}
    assert set(create["record"]) == {"id", "v"}  # no Tureen bookkeeping sent
    [update] = server.ops("update")
    assert update["record"]["id"] == "edit" and update["record"]["v"] == 2
    assert not any(k.startswith("__") or k.startswith("_soup") for k in update["record"])
    assert app_fields(update["base"]) == base_edit
    [remove] = server.ops("remove")
    assert remove["id"] == "drop"

    assert set(server.records) == {"keep", "edit", created["id"]}
    local = local_by_id(store)
    assert set(local) == set(server.records)
    for rid, entry in local.items():
        assert is_clean(entry)
        # The server's copy is kept, with its modification stamp.
        assert app_fields(entry) == server.records[rid]
    assert lent_buffers(store) == 0


@pytest.mark.parametrize("form", ["ServerConflict", "ConflictError(record)"])
def test_update_conflict(store: tureen.Store, server: MemoryServer, form: str) -> None:
    server.put({"id": "r1", "a": 1, "b": 1})
    target = server.register(store)
    store.sync_down(target, SOUP)
    entry = local_by_id(store)["r1"]
    current = server.patch("r1", {"a": 2})
    if form == "ConflictError(record)":
        # The same, as tureen.ConflictError carrying the record.
        server.fail("update", tureen.ConflictError(current))
    store.local_upsert(SOUP, {"id": "r1", "a": 1, "b": 3})

    state = conflicted(lambda: store.sync_up(target, SOUP, name="up", merge_mode=sync.LEAVE_IF_CHANGED),
                       sync.LEAVE_IF_CHANGED)
    assert state["conflictIds"] == [entry["_soupEntryId"]]
    [c] = store.conflicts(SOUP)
    assert app_fields(c["theirs"]) == current
    assert app_fields(c["yours"])["b"] == 3
    assert server.records["r1"] == current

    store.resolve_conflict(SOUP, entry["_soupEntryId"], sync.MERGED, {"id": "r1", "a": 2, "b": 3})
    assert store.resync("up")["status"] == "DONE"
    assert {k: server.records["r1"][k] for k in ("a", "b")} == {"a": 2, "b": 3}
    assert app_fields(local_by_id(store)["r1"]) == server.records["r1"]
    assert lent_buffers(store) == 0


def test_remove_of_a_record_already_gone_is_applied(store: tureen.Store, server: MemoryServer) -> None:
    server.put({"id": "r1"})
    target = server.register(store)
    store.sync_down(target, SOUP)
    server.delete("r1")
    store.local_delete(SOUP, [local_by_id(store)["r1"]["_soupEntryId"]])
    state = store.sync_up(target, SOUP)
    assert state["status"] == "DONE" and state["failed"] == 0
    assert entries(store, SOUP) == []


@pytest.mark.parametrize(
    "error",
    [tureen.NetworkError("flaky"), ConnectionResetError("reset"), TimeoutError("slow")],
    ids=["NetworkError", "ConnectionResetError", "TimeoutError"],
)
def test_network_errors_are_retried(store: tureen.Store, server: MemoryServer, error: Exception) -> None:
    target = server.register(store)
    store.local_upsert(SOUP, {"id": "r1", "v": 1})
    server.fail("create", error)
    state = store.sync_up(target, SOUP)
    assert state["status"] == "DONE"
    assert len(server.ops("create")) == 2 and "r1" in server.records


def test_a_failing_record_fails_alone(store: tureen.Store, server: MemoryServer) -> None:
    target = server.register(store)
    made = store.local_upsert(SOUP, [{"id": "r%d" % i} for i in range(3)])
    server.fail("create", None, tureen.HTTPError("quota exceeded for r1"))
    with pytest.raises(tureen.HTTPError) as info:
        store.sync_up(target, SOUP)
    state = info.value.state  # type: ignore[attr-defined]
    assert state["status"] == "FAILED" and state["failed"] == 1 and state["synced"] == 2
    assert state["failedIds"] == [made[1]["_soupEntryId"]]
    local = local_by_id(store)
    assert "quota exceeded" in local["r1"]["__last_error__"]
    assert local["r1"]["__local__"] is True
    assert is_clean(local["r0"]) and is_clean(local["r2"])
    assert set(server.records) == {"r0", "r2"}
    assert lent_buffers(store) == 0


def test_a_bug_in_a_callable_fails_the_record_and_is_chained(
    store: tureen.Store, server: MemoryServer
) -> None:
    target = server.register(store)
    store.local_upsert(SOUP, {"id": "r1"})
    server.fail("create", KeyError("oops"))
    with pytest.raises(tureen.Error) as info:
        store.sync_up(target, SOUP)
    assert isinstance(info.value.__cause__, KeyError)
    assert info.value.state["failed"] == 1  # type: ignore[attr-defined]
    assert "KeyError" in local_by_id(store)["r1"]["__last_error__"]
    # The next run, the callable works: the record goes.
    assert store.sync_up(target, SOUP)["status"] == "DONE"
    assert "r1" in server.records


def test_fetch_failure_fails_the_sync(store: tureen.Store, server: MemoryServer) -> None:
    target = server.register(store)
    server.fail("fetch", tureen.HTTPError("the server is on fire"))
    with pytest.raises(tureen.HTTPError) as info:
        store.sync_down(target, SOUP)
    assert "on fire" in info.value.message
    assert info.value.state["status"] == "FAILED"  # type: ignore[attr-defined]

    store.register_target("nothing", fetch=lambda request: {"no records": []})
    with pytest.raises(tureen.InvalidError):
        store.sync_down(sync.callback_target("nothing"), SOUP)

    store.register_target("unwritable", fetch=lambda request: {"records": [{1, 2}]})
    with pytest.raises(tureen.Error) as info:
        store.sync_down(sync.callback_target("unwritable"), SOUP)
    assert isinstance(info.value.__cause__, TypeError)
    assert lent_buffers(store) == 0


def test_keyboard_interrupt_in_a_callable_is_raised(store: tureen.Store, server: MemoryServer) -> None:
    for i in range(30):
        server.put({"id": "t%02d" % i})
    target = server.register(store)
    server.fail("fetch", None, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        store.sync_down(target, SOUP, name="down")
    assert store.sync_status("down")["status"] in ("FAILED", "STOPPED")
    assert store.resync("down")["status"] == "DONE"
    assert len(entries(store, SOUP)) == 30


def test_progress_exception_stops_a_sync_down_between_pages(
    store: tureen.Store, server: MemoryServer
) -> None:
    for i in range(50):
        server.put({"id": "t%02d" % i})
    target = server.register(store)
    calls: List[Dict[str, Any]] = []

    def progress(state: Dict[str, Any]) -> None:
        calls.append(state)
        raise ValueError("seen enough")

    with pytest.raises(ValueError, match="seen enough") as info:
        store.sync_down(target, SOUP, name="down", progress=progress)
    assert len(calls) == 1  # not called again once it raised
    cause = info.value.__cause__
    assert isinstance(cause, tureen.CancelledError)
    assert cause.state["status"] == "STOPPED"  # type: ignore[attr-defined]
    assert len(server.ops("fetch")) < 5
    assert store.resync("down")["status"] == "DONE"
    assert len(entries(store, SOUP)) == 50


def test_sync_on_another_thread(store: tureen.Store, server: MemoryServer) -> None:
    for i in range(15):
        server.put({"id": "t%02d" % i})
    threads_seen: List[str] = []
    fetch = server.fetch

    def recording_fetch(request: Dict[str, Any]) -> Dict[str, Any]:
        threads_seen.append(threading.current_thread().name)
        return fetch(request)

    store.register_target("threaded", fetch=recording_fetch)
    result: Dict[str, Any] = {}
    worker = threading.Thread(
        target=lambda: result.update(state=store.sync_down(sync.callback_target("threaded"), SOUP)),
        name="sync-worker",
        daemon=True,
    )
    worker.start()
    worker.join(WAIT)
    assert not worker.is_alive()
    assert result["state"]["status"] == "DONE"
    assert set(threads_seen) == {"sync-worker"}  # callbacks run on the syncing thread


def test_a_callable_syncing_its_own_soup_again_is_refused_not_stuck(store: tureen.Store, server: MemoryServer) -> None:
    """A soup's syncs run one at a time, and a sync waits for another of
    its soup to end; a callable of the running sync starting one of the same
    soup would wait for itself, so that call is refused at once."""
    server.put({"id": "a", "v": 1})
    target = server.register(store)
    store.sync_up(target, SOUP, name="up", options={"start": False})
    store.local_upsert(SOUP, {"id": "b", "v": 2})
    nested: List[BaseException] = []
    fetch = server.fetch

    def fetch_and_push(request: Dict[str, Any]) -> Dict[str, Any]:
        if not nested:
            try:
                store.resync("up")
            except tureen.Error as e:
                nested.append(e)
        return fetch(request)

    store.register_target("nested", fetch=fetch_and_push)
    state = store.sync_down(sync.callback_target("nested"), SOUP)
    assert state["status"] == "DONE"
    assert len(nested) == 1 and isinstance(nested[0], tureen.MisuseError)
    assert "one at a time" in str(nested[0])
    assert store.resync("up")["status"] == "DONE" and "b" in server.records


# ---------------------------------------------------------------------------
# registering


def test_register_replace_and_unregister(store: tureen.Store, server: MemoryServer) -> None:
    server.put({"id": "a"})
    target = server.register(store)
    first_key = max(store._target_keys)
    assert store.sync_down(target, SOUP)["status"] == "DONE"

    other = MemoryServer()
    other.put({"id": "b"})
    other.register(store)  # the same name: replaces it
    gc.collect()
    assert first_key not in hosts_module._targets  # the library let go: free_ctx ran
    store.sync_down(target, SOUP)
    assert set(local_by_id(store)) == {"a", "b"}
    assert other.ops("fetch") and len(server.ops("fetch")) == 1

    key = max(store._target_keys)
    store.unregister_target("mem")
    assert key not in hosts_module._targets
    with pytest.raises(tureen.NotFoundError):
        store.sync_down(target, SOUP)
    with pytest.raises(tureen.NotFoundError):
        store.unregister_target("mem")


def test_register_errors(store: tureen.Store, server: MemoryServer) -> None:
    with pytest.raises(TypeError):
        store.register_target("x", fetch="not callable")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.register_target("x", fetch=server.fetch, update=42)  # type: ignore[arg-type]
    with pytest.raises(tureen.InvalidError):
        store.register_target("bad name!", fetch=server.fetch)
    # Fetch only: sync down works, sync up cannot.
    store.register_target("read-only", fetch=server.fetch)
    target = sync.callback_target("read-only")
    assert store.sync_down(target, SOUP)["status"] == "DONE"
    store.local_upsert(SOUP, {"id": "r1"})
    with pytest.raises(tureen.Error):
        store.sync_up(target, SOUP)
    assert local_by_id(store)["r1"]["__local__"] is True


def test_targets_are_dropped_when_the_store_closes(tmp_path: Path, server: MemoryServer) -> None:
    s = tureen.Store.open(tmp_path / "closing.db", raw_key=RAW)
    s.register_soup(SOUP, [("id", "string")])
    server.register(s)
    keys = set(s._target_keys)
    assert keys and keys <= set(hosts_module._targets)
    s.close()
    gc.collect()
    assert not keys & set(hosts_module._targets)


def test_callables_are_not_kept_alive_by_the_module(tmp_path: Path) -> None:
    """What a target holds is freed with it (no reference cycle through ctypes)."""
    import weakref

    class Fetcher:
        def __call__(self, request: Dict[str, Any]) -> Dict[str, Any]:
            return {"records": [], "cursor": None}

    fetcher = Fetcher()
    ref = weakref.ref(fetcher)
    with tureen.Store.open(tmp_path / "weak.db", raw_key=RAW) as s:
        s.register_target("t", fetch=fetcher)
        del fetcher
        assert ref() is not None
        s.unregister_target("t")
    gc.collect()
    assert ref() is None


def test_a_registration_racing_close_is_released_or_refused(tmp_path: Path) -> None:
    """A call that looked the handle up just before tureen_store_close made
    a new sync manager for the closing store, which nothing ended: a target
    registered there was never released (its free_ctx never called) and
    kept the closed store alive. Such a call is refused (MISUSE) or, having
    gone through before, its target is released with the store. A race:
    the old library leaked in about one try in thirty here (some ten
    leaks a run)."""
    import ctypes
    from tureen import _library

    lib = _library.lib
    freed = [0]
    count_lock = threading.Lock()

    @_library.FreeCtxFn
    def free_ctx(ctx: Any) -> None:
        with count_lock:
            freed[0] += 1

    @_library.HostFn
    def fetch(ctx: Any, request: Any, response: Any) -> int:
        return 0

    @_library.ReleaseFn
    def release(ctx: Any, response: Any) -> None:
        pass

    callbacks = _library.tureen_callbacks(_library.CALLBACKS_VERSION, None, fetch, _library.HostFn(),
                                          _library.HostFn(), _library.HostFn(), release, free_ctx)
    registered = 0
    refusals = set()
    for i in range(400):
        handle = _library.StoreHandle()
        path = str(tmp_path / ("race%d.db" % i)).encode()
        assert lib.tureen_store_open(path, b'{"unencrypted": true}', ctypes.byref(handle)) == 0
        oks = [0]
        rcs: List[int] = []
        started = threading.Event()

        def register() -> None:
            started.set()
            while True:
                rc = lib.tureen_target_register(handle, b"t", ctypes.byref(callbacks))
                if rc != 0:
                    rcs.append(rc)
                    return
                oks[0] += 1

        worker = threading.Thread(target=register, daemon=True)
        worker.start()
        started.wait(WAIT)
        time.sleep(0.002)  # registering at full speed: a close in the middle of a call is likelier
        assert lib.tureen_store_close(handle) == 0
        worker.join(WAIT)
        assert not worker.is_alive()
        registered += oks[0]
        refusals.update(rcs)
        lib.tureen_store_remove(path)
    assert refusals == {1}  # TUREEN_E_MISUSE
    deadline = time.monotonic() + 5
    while freed[0] != registered and time.monotonic() < deadline:
        time.sleep(0.05)
    assert freed[0] == registered, "%d registered targets were never released" % (registered - freed[0])
