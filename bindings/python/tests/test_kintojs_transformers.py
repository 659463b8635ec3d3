"""kinto.js's remote-transformer test cases, ported case by case to Tureen on
a real Kinto (issue 49 item 6).

The cases are every ``it(...)`` of Kinto/kinto.js (commit d085bd2) that
involves ``remoteTransformers``: in test/collection_test.ts, test/index_test.ts
and test/integration_test.ts. Each test's docstring names its case and says
where Tureen's documented behaviour (include/tureen.h, "Remote transformers")
differs, and why.

kinto.js's ``Collection.sync({strategy})`` in Tureen's calls
(:func:`kintojs_sync`): a pull, then a push. The pull is a sync down in
LEAVE_IF_CHANGED (kinto.js never lets a pull overwrite a record not yet
pushed); the push a sync up in LEAVE_IF_CHANGED, whose conflicts kinto.js's
strategy then resolves: CLIENT_WINS as "yours" and a second push (kinto.js
pushes the resolved records again), SERVER_WINS as "theirs", MANUAL not at
all. kinto.js's SyncResultObject has no twin; its lists map to:

- ``created`` / ``updated``: the ids the pull's ``sync_complete`` event
  says it created / updated on the device;
- ``published``: the ids the pushes' ``sync_complete`` events say they
  created, updated or deleted on the server, read back from the store;
- ``resolved``: the conflicts the push met (``tureen_conflicts``), with
  ``"yours"`` and ``"theirs"`` as kinto.js's ``local`` and ``remote``.
"""

from __future__ import annotations

import ctypes
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

import pytest

import tureen
from tureen import sync
from tureen.status import Status

from sync_support import WAIT, close_unless_stuck, entries, is_clean, kinto_client, kinto_fields

RAW = "5e" * 32
SOUP = "tasks"
Record = Dict[str, Any]
Transform = Callable[[Record], Record]

MANUAL = "manual"
CLIENT_WINS = "client_wins"
SERVER_WINS = "server_wins"


# --- kinto.js's transformers, as Python functions --------------------------


def append_transformer(s: str) -> Tuple[Transform, Transform]:
    """integration_test.ts's ``appendTransformer(s)``: encode appends ``s``
    to the title, decode takes it off when it is there."""

    def encode(record: Record) -> Record:
        return dict(record, title=(record.get("title") or "") + s)

    def decode(record: Record) -> Record:
        title = record.get("title")
        if title and title.endswith(s):
            return dict(record, title=title[: -len(s)])
        return record

    return encode, decode


def char_transformer(char: str) -> Tuple[Transform, Transform]:
    """integration_test.ts's "Transformers" ``createTransformer(char)``:
    encode appends ``char``, decode drops the title's last character."""

    def encode(record: Record) -> Record:
        return dict(record, title=record["title"] + char)

    def decode(record: Record) -> Record:
        return dict(record, title=record["title"][:-1]) if "title" in record else record

    return encode, decode


def keep(record: Record) -> Record:
    return record


class Spy:
    """Wraps a transformer's function, keeping a copy of each record it got."""

    def __init__(self, function: Transform) -> None:
        self.function = function
        self.seen: List[Record] = []

    def __call__(self, record: Record) -> Record:
        self.seen.append(dict(record))
        return self.function(record)


# --- devices, targets and the server ---------------------------------------


def open_device(path: Path, transformers: Dict[str, Tuple[Transform, Transform]]) -> tureen.Store:
    store = tureen.Store.open(path, raw_key=RAW)
    store.register_soup(SOUP, [("id", "string"), ("title", "string")])
    for name, (encode, decode) in transformers.items():
        store.register_transformer(name, encode, decode)
    return store


@pytest.fixture
def stores() -> Iterator[List[tureen.Store]]:
    """The devices a test opens, closed after it."""
    opened: List[tureen.Store] = []
    try:
        yield opened
    finally:
        for s in opened:
            close_unless_stuck(s)


@pytest.fixture
def device(tmp_path: Path, stores: List[tureen.Store]) -> Callable[..., tureen.Store]:
    """``device(name=(encode, decode), ...)``: a new store with those transformers."""

    def make(**transformers: Tuple[Transform, Transform]) -> tureen.Store:
        store = open_device(tmp_path / ("device%d.db" % len(stores)), transformers)
        stores.append(store)
        return store

    return make


def target_for(kinto_collection: Dict[str, Any], *transformers: str) -> Dict[str, Any]:
    c = kinto_collection
    return sync.kinto_target(c["url"], c["bucket"], c["collection"], user=c["auth"]["user"],
                             password=c["auth"]["password"], transformers=list(transformers))


def server_list(kinto_collection: Dict[str, Any]) -> List[Dict[str, Any]]:
    """integration_test.ts's ``getRemoteList()``: the server's live records
    by title, as {title, done}."""
    records = kinto_client(kinto_collection).get_records(_sort="title")
    return [{"title": r.get("title"), "done": r.get("done")} for r in records]


def server_create(kinto_collection: Dict[str, Any], *records: Record) -> None:
    """Records written on the server by another client, as they are."""
    with kinto_client(kinto_collection).batch() as batch:
        for r in records:
            batch.create_record(id=r["id"], data=r)


def status(entry: Record) -> str:
    """kinto.js's ``_status`` of a Tureen entry."""
    if is_clean(entry):
        return "synced"
    if entry.get("__locally_deleted__"):
        return "deleted"
    return "created" if entry.get("__locally_created__") else "updated"


def local_list(store: tureen.Store) -> List[Dict[str, Any]]:
    """kinto.js's ``tasks.list({order: "title"})`` as {title, done, _status}."""
    found = sorted(entries(store, SOUP), key=lambda e: e.get("title") or "")
    return [{"title": e.get("title"), "done": e.get("done"), "_status": status(e)} for e in found]


def local_get(store: tureen.Store, record_id: str) -> Optional[Record]:
    """kinto.js's ``getAny(id)``: the entry, deleted locally or not; None."""
    found = store.local_read(SOUP, [record_id])
    return found[0] if found else None


# --- kinto.js's sync ---------------------------------------------------------


class Result(NamedTuple):
    """What a kinto.js ``sync()`` reports, as Tureen shows it."""

    pull: Dict[str, Any]  # the sync down's sync_complete event
    pushes: List[Dict[str, Any]]  # the sync ups' sync_complete events
    conflicts: List[Dict[str, Any]]  # tureen_conflicts after the first push
    store: tureen.Store

    @property
    def published_ids(self) -> List[str]:
        return [i for e in self.pushes for what in ("created", "updated", "deleted") for i in e[what]]

    @property
    def published(self) -> List[Record]:
        """The records published, as the store keeps them (none deleted)."""
        ids = self.published_ids
        return self.store.local_read(SOUP, ids) if ids else []


def kintojs_sync(store: tureen.Store, target: Dict[str, Any], strategy: str = MANUAL) -> Result:
    """kinto.js's ``collection.sync({strategy})`` (see the module's text)."""
    events: List[Dict[str, Any]] = []
    arrived = threading.Condition()

    def on_event(event: Dict[str, Any]) -> None:
        with arrived:
            events.append(event)
            arrived.notify_all()

    runs = 2
    with store.sync_listen(on_event, codes=["sync_complete"]):
        store.sync_down(target, SOUP, name="pull", merge_mode=sync.LEAVE_IF_CHANGED)
        store.sync_up(target, SOUP, name="push", merge_mode=sync.LEAVE_IF_CHANGED)
        conflicts = store.conflicts(SOUP)
        resolution = {CLIENT_WINS: sync.YOURS, SERVER_WINS: sync.THEIRS}.get(strategy)
        if resolution is not None and conflicts:
            for c in conflicts:
                store.resolve_conflict(SOUP, c["entryId"], resolution)
            if resolution == sync.YOURS:
                store.resync("push")
                runs = 3
        with arrived:
            assert arrived.wait_for(lambda: len(events) >= runs, WAIT), events
    assert [e["type"] for e in events] == ["syncDown"] + ["syncUp"] * (runs - 1)
    return Result(events[0], events[1:], conflicts, store)


# --- collection_test.ts: "transformers registration" -------------------------


@pytest.mark.parametrize("listed", [{"seal": True}, "seal", 1])
def test_registration_refuses_transformers_that_are_not_a_list(
    device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any], listed: Any
) -> None:
    """collection_test.ts, "transformers registration": it("should throw an
    error on non-array remoteTransformers"). The target's "transformers" is
    the list; anything else fails the sync before anything is fetched or
    saved (TUREEN_E_INVALID). (JSON null is not among them: a target reads
    it as an absent member, kinto.js's undefined, whatever the member.)"""
    store = device(seal=(keep, keep))
    server_create(kinto_collection, {"id": "r1", "title": "on the server"})
    target = dict(target_for(kinto_collection), transformers=listed)
    with pytest.raises(tureen.InvalidError) as info:
        store.sync_down(target, SOUP, name="pull")
    assert "transformers" in str(info.value)
    assert entries(store, SOUP) == []
    with pytest.raises(tureen.NotFoundError):
        store.sync_status("pull")


@pytest.mark.parametrize("listed", [[42], [{"encode": "x", "decode": "y"}], [""]])
def test_registration_refuses_a_transformer_that_is_not_a_name(
    device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any], listed: Any
) -> None:
    """collection_test.ts, "transformers registration": it("should throw an
    error on non-object transformer"). kinto.js lists transformer objects;
    a Tureen target lists the names of registered ones (a string is the
    valid form there), so what is refused is an entry that is no name, and
    a registration whose functions are not callables."""
    store = device()
    store.local_upsert(SOUP, {"id": "r1", "title": "stays here"})
    target = dict(target_for(kinto_collection), transformers=listed)
    with pytest.raises(tureen.InvalidError):
        store.sync_up(target, SOUP, name="push")
    assert kinto_client(kinto_collection).get_records() == []
    with pytest.raises(TypeError):
        store.register_transformer("invalid", "invalid", "invalid")  # type: ignore[arg-type]


def register_through_c(store: tureen.Store, missing: str) -> Tuple[int, str]:
    """tureen_transformer_register with the function ``missing`` NULL: the
    status and message."""
    from tureen import _library

    @_library.HostFn
    def function(ctx: Any, request: Any, response: Any) -> int:
        return 0

    @_library.ReleaseFn
    def release(ctx: Any, response: Any) -> None:
        pass

    functions = {"encode": function, "decode": function}
    functions[missing] = _library.HostFn()
    t = _library.tureen_transformer(_library.TRANSFORMER_VERSION, None, functions["encode"], functions["decode"],
                                    release, _library.FreeCtxFn())
    with store._use() as handle:  # type: ignore[attr-defined]
        rc = int(_library.lib.tureen_transformer_register(handle, b"half", ctypes.byref(t)))
        return rc, (_library.lib.tureen_errmsg() or b"").decode()


@pytest.mark.parametrize("missing", ["encode", "decode"])
def test_registration_refuses_a_transformer_without_encode_or_decode(
    device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any], missing: str
) -> None:
    """collection_test.ts, "transformers registration": it("should throw an
    error on encode method missing") and it("should throw an error on decode
    method missing"). Through the C ABI (a NULL function: TUREEN_E_INVALID,
    the message naming it, nothing registered, so a target naming it is not
    found) and Python (a TypeError naming the function)."""
    store = device()
    rc, message = register_through_c(store, missing)
    assert rc == Status.INVALID and "(NULL: %s)" % missing in message
    with pytest.raises(tureen.NotFoundError):
        store.sync_down(target_for(kinto_collection, "half"), SOUP)
    functions: Dict[str, Any] = {"encode": keep, "decode": keep, missing: None}
    with pytest.raises(TypeError) as info:
        store.register_transformer("half", functions["encode"], functions["decode"])
    assert missing in str(info.value)


# --- index_test.ts -------------------------------------------------------------


def test_a_target_without_transformers_sends_records_as_they_are(
    device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any]
) -> None:
    """index_test.ts: it("should make the collection's remoteTransformers
    default to []"). A target without "transformers" (and one with an empty
    list) passes records through no transformer, even with some registered
    on the store."""
    spy = Spy(append_transformer("!")[0])
    store = device(bang=(spy, keep))
    store.local_upsert(SOUP, {"id": "a", "title": "plain"})
    target = target_for(kinto_collection)
    del target["transformers"]
    state = store.sync_up(target, SOUP, name="push")
    assert state["status"] == "DONE" and "transformers" not in state["target"]
    store.local_upsert(SOUP, {"id": "b", "title": "plain too"})
    assert store.sync_up(target_for(kinto_collection), SOUP)["status"] == "DONE"
    assert server_list(kinto_collection) == [{"title": "plain", "done": None}, {"title": "plain too", "done": None}]
    assert spy.seen == []


def test_a_target_keeps_its_transformers_in_order(
    device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any]
) -> None:
    """index_test.ts: it("should set collection's remoteTransformers"). The
    sync keeps the target's list as given, and runs it: the state shows it
    and the server holds what it encoded."""
    store = device(bang=append_transformer("!"), ask=append_transformer("?"))
    store.local_upsert(SOUP, {"id": "a", "title": "t"})
    state = store.sync_up(target_for(kinto_collection, "ask", "bang"), SOUP, name="push")
    assert state["target"]["transformers"] == ["ask", "bang"]
    assert store.sync_status("push")["target"]["transformers"] == ["ask", "bang"]
    assert server_list(kinto_collection) == [{"title": "t?!", "done": None}]


# --- collection_test.ts: "#gatherLocalChanges" › "transformers" ----------------


def test_encodes_in_list_order_however_long_each_step_takes(
    device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any]
) -> None:
    """collection_test.ts, "#gatherLocalChanges", "transformers": it("should
    asynchronously encode records"). kinto.js's steps return promises
    settled after 10 ms ("?") and 5 ms ("!"); Tureen's are synchronous
    functions on the sync's thread, so the slower first step sleeps: the
    order is still the list's. kinto.js's decode there returns nothing;
    Tureen decodes the server's answer to every write, so this one takes
    the characters off again and the store keeps the titles as written."""

    def slow(char: str, seconds: float) -> Tuple[Transform, Transform]:
        encode, decode = append_transformer(char)

        def slow_encode(record: Record) -> Record:
            time.sleep(seconds)
            return encode(record)

        return slow_encode, decode

    store = device(ask=slow("?", 0.010), bang=slow("!", 0.005))
    store.local_upsert(SOUP, [{"title": "abcdef"}, {"title": "ghijkl"}])
    assert store.sync_up(target_for(kinto_collection, "ask", "bang"), SOUP)["status"] == "DONE"
    assert [r["title"] for r in server_list(kinto_collection)] == ["abcdef?!", "ghijkl?!"]
    assert [e["title"] for e in local_list(store)] == ["abcdef", "ghijkl"]


def test_encodes_a_deletion_as_its_tombstone(
    device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any]
) -> None:
    """collection_test.ts, "#gatherLocalChanges", "transformers": it("should
    encode even deleted records"). The encode of a local deletion gets its
    tombstone, {"id", "deleted": true}. kinto.js's transformer there gives
    it another id ("remote-" + id), which Tureen refuses (the header: both
    functions must keep the record's id, by which the server's record and
    the local entry are found): that deletion fails alone and stays local;
    a transformer that keeps the id has it sent."""
    record_id = str(uuid.uuid4())

    def remote_id(record: Record) -> Record:
        return dict(record, id="remote-" + record["id"])

    moving, keeping = Spy(remote_id), Spy(keep)
    store = device(moving=(moving, keep), keeping=(keeping, keep))
    store.local_upsert(SOUP, {"id": record_id, "title": "some title"})
    store.sync_up(target_for(kinto_collection), SOUP)
    store.local_delete_records(SOUP, [record_id])

    with pytest.raises(tureen.HTTPError) as info:
        store.sync_up(target_for(kinto_collection, "moving"), SOUP, name="moving")
    assert moving.seen == [{"id": record_id, "deleted": True}]
    state = info.value.state
    assert state is not None and state["failed"] == 1 and state["synced"] == 0
    (error,) = state["recordErrors"]
    assert error["id"] == record_id and error["operation"] == "delete" and "moving" in error["error"]
    assert server_list(kinto_collection) == [{"title": "some title", "done": None}]
    assert status(local_get(store, record_id) or {}) == "deleted"

    assert store.sync_up(target_for(kinto_collection, "keeping"), SOUP)["status"] == "DONE"
    assert keeping.seen == [{"id": record_id, "deleted": True}]
    assert server_list(kinto_collection) == [] and local_get(store, record_id) is None


# --- collection_test.ts: "#pullChanges" › "With transformers" ------------------


def decode_transformer(char: str) -> Tuple[Transform, Transform]:
    """collection_test.ts's ``createDecodeTransformer(char)``: decode
    appends ``char`` to the title; encode is not used."""
    return keep, lambda record: dict(record, title=record["title"] + char)


@pytest.mark.parametrize("listed, title", [(["hash"], "bar#"), (["bang", "ask"], "bar?!")])
def test_decodes_incoming_records_in_reverse_order(
    device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any], listed: List[str], title: str
) -> None:
    """collection_test.ts, "#pullChanges", "With transformers": it("should
    decode incoming encoded records using a single transformer") (["#"]:
    "bar#") and it("should decode incoming encoded records using multiple
    transformers") (["!", "?"]: "bar?!", decoded in reverse order)."""
    store = device(hash=decode_transformer("#"), bang=decode_transformer("!"), ask=decode_transformer("?"))
    record_id = str(uuid.uuid4())
    server_create(kinto_collection, {"id": record_id, "title": "bar"})
    result = kintojs_sync(store, target_for(kinto_collection, *listed))
    assert result.pull["created"] == [record_id]
    assert kinto_fields(local_get(store, record_id)) == {"id": record_id, "title": title}


def test_decodes_incoming_deletions(device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any]) -> None:
    """collection_test.ts, "#pullChanges", "With transformers": it("should
    decode incoming records even when deleted"). A deletion the pull
    receives is decoded ({"id", "last_modified", "deleted": true}) and
    deletes the local record. kinto.js's transformer there maps the id to
    "local-" + id, to delete a local record of that id; Tureen refuses a
    changed id (see test_encodes_a_deletion_as_its_tombstone): that
    deletion fails alone and the record stays."""
    record_id = str(uuid.uuid4())

    def local_id(record: Record) -> Record:
        return dict(record, id="local-" + record["id"])

    keeping, moving = Spy(keep), Spy(local_id)
    one = device(t=(keep, keeping))
    two = device(t=(keep, keep))
    target = target_for(kinto_collection, "t")
    server_create(kinto_collection, {"id": record_id, "title": "some title"})
    for store in (one, two):
        kintojs_sync(store, target)
    keeping.seen.clear()
    two.register_transformer("t", keep, moving)
    kinto_client(kinto_collection).delete_record(id=record_id)

    assert kintojs_sync(one, target).pull["deleted"] == [record_id]
    (tombstone,) = keeping.seen
    assert tombstone["id"] == record_id and tombstone["deleted"] is True
    assert local_get(one, record_id) is None

    with pytest.raises(tureen.HTTPError) as info:
        two.resync("pull")
    state = info.value.state
    assert state is not None and state["failedRecordIds"] == [record_id]
    assert [e["id"] for e in state["recordErrors"]] == [record_id]
    assert [r["id"] for r in moving.seen] == [record_id]
    assert kinto_fields(local_get(two, record_id)) == {"id": record_id, "title": "some title"}


# --- integration_test.ts: "Incoming conflict" › "CLIENT_WINS strategy with transformers"


def seed_collection(store: tureen.Store, target: Dict[str, Any], kinto_collection: Dict[str, Any],
                    data: Dict[str, List[Record]], strategy: str) -> Result:
    """integration_test.ts's ``collectionTestSync``: "localSynced" written on
    the server and synced; then "localUnsynced" written locally and
    "server" on the server (as they are, by another client); then a sync."""
    server_create(kinto_collection, *data["localSynced"])
    kintojs_sync(store, target)
    store.local_upsert(SOUP, data["localUnsynced"])
    server_create(kinto_collection, *data["server"])
    return kintojs_sync(store, target, strategy)


CONFLICTING_ID = str(uuid.uuid4())


@pytest.fixture
def incoming_conflict(device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any]) -> Result:
    store = device(bang=append_transformer("!"))
    data = {
        "localSynced": [
            {"id": str(uuid.uuid4()), "title": "task1", "done": True},
            {"id": str(uuid.uuid4()), "title": "task2", "done": False},
            {"id": str(uuid.uuid4()), "title": "task3", "done": True},
        ],
        "localUnsynced": [{"id": CONFLICTING_ID, "title": "task4-local", "done": False}],
        "server": [{"id": CONFLICTING_ID, "title": "task4-remote", "done": True}],
    }
    return seed_collection(store, target_for(kinto_collection, "bang"), kinto_collection, data, CLIENT_WINS)


def test_incoming_conflict_client_wins_publishes_the_local_version(incoming_conflict: Result) -> None:
    """integration_test.ts, "Incoming conflict", "CLIENT_WINS strategy with
    transformers": it("should publish resolved conflict using local
    version"). kinto.js meets the conflict at the pull; Tureen's pull leaves
    an unsynced record alone and its push meets it (the server refuses the
    create), as the module's text says."""
    (published,) = incoming_conflict.published
    assert kinto_fields(published) == {"id": CONFLICTING_ID, "title": "task4-local", "done": False}


def test_incoming_conflict_client_wins_updates_nothing(incoming_conflict: Result) -> None:
    """integration_test.ts, "Incoming conflict", "CLIENT_WINS strategy with
    transformers": it("should not update anything")."""
    assert incoming_conflict.pull["updated"] == [] and incoming_conflict.pull["created"] == []


def test_incoming_conflict_client_wins_lists_the_resolved_record(incoming_conflict: Result) -> None:
    """integration_test.ts, "Incoming conflict", "CLIENT_WINS strategy with
    transformers": it("should list resolved records"). The accepted copy is
    "yours"; "theirs" is the server's, decoded (it was written without the
    transformer, so decoding leaves it as it is)."""
    (conflict,) = incoming_conflict.conflicts
    assert conflict["id"] == CONFLICTING_ID
    assert kinto_fields(conflict["yours"]) == {"id": CONFLICTING_ID, "title": "task4-local", "done": False}
    assert kinto_fields(conflict["theirs"]) == {"id": CONFLICTING_ID, "title": "task4-remote", "done": True}


def test_incoming_conflict_client_wins_local_state(incoming_conflict: Result) -> None:
    """integration_test.ts, "Incoming conflict", "CLIENT_WINS strategy with
    transformers": it("should put local database in the expected state")."""
    assert local_list(incoming_conflict.store) == [
        {"title": "task1", "_status": "synced", "done": True},
        {"title": "task2", "_status": "synced", "done": False},
        {"title": "task3", "_status": "synced", "done": True},
        {"title": "task4-local", "_status": "synced", "done": False},
    ]


def test_incoming_conflict_client_wins_server_state(incoming_conflict: Result,
                                                    kinto_collection: Dict[str, Any]) -> None:
    """integration_test.ts, "Incoming conflict", "CLIENT_WINS strategy with
    transformers": it("should put remote test server data in the expected
    state"). The records written by another client stay as they are; the
    one published holds the encoded title."""
    assert server_list(kinto_collection) == [
        {"title": "task1", "done": True},
        {"title": "task2", "done": False},
        {"title": "task3", "done": True},
        {"title": "task4-local!", "done": False},
    ]


# --- integration_test.ts: "Outgoing conflict" -----------------------------------


def setup_outgoing_conflict(device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any],
                            remote_deleted: bool) -> Tuple[tureen.Store, Dict[str, Any]]:
    """integration_test.ts's ``setupConflict`` of "Outgoing conflict" (the
    record removed locally without a trace, then created again locally) and
    of "Outgoing conflict (remote deleted)" (the record deleted on the
    server, then updated locally). The server's record is written encoded,
    as kinto.js's ``_encodeRecord("remote", ...)`` does."""
    encode, decode = append_transformer("!")
    store = device(bang=(encode, decode))
    target = target_for(kinto_collection, "bang")
    record = dict(encode({"title": "task1-remote", "done": True}), id=str(uuid.uuid4()))
    server_create(kinto_collection, record)
    (record_id,) = kintojs_sync(store, target).pull["created"]
    if remote_deleted:
        kinto_client(kinto_collection).delete_record(id=record_id)
        store.local_upsert(SOUP, {"id": record_id, "title": "task1-local", "done": False})
    else:
        (entry,) = store.local_read(SOUP, [record_id])
        store.remove(SOUP, [entry["_soupEntryId"]])  # kinto.js's delete(id, {virtual: false})
        store.local_upsert(SOUP, {"id": record_id, "title": "task1-local", "done": False})
    return store, target


@pytest.fixture
def outgoing_conflict(device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any],
                      request: pytest.FixtureRequest) -> Result:
    store, target = setup_outgoing_conflict(device, kinto_collection, remote_deleted=False)
    return kintojs_sync(store, target, request.param)


@pytest.mark.parametrize("outgoing_conflict", [CLIENT_WINS], indirect=True)
def test_outgoing_conflict_client_wins_local_state(outgoing_conflict: Result) -> None:
    """integration_test.ts, "Outgoing conflict", "CLIENT_WINS strategy with
    transformers": it("should put local database in the expected state")."""
    assert local_list(outgoing_conflict.store) == [{"title": "task1-local", "_status": "synced", "done": False}]


@pytest.mark.parametrize("outgoing_conflict", [CLIENT_WINS], indirect=True)
def test_outgoing_conflict_client_wins_server_state(outgoing_conflict: Result,
                                                    kinto_collection: Dict[str, Any]) -> None:
    """integration_test.ts, "Outgoing conflict", "CLIENT_WINS strategy with
    transformers": it("should put the remote database in the expected
    state")."""
    assert server_list(kinto_collection) == [{"title": "task1-local!", "done": False}]


@pytest.mark.parametrize("outgoing_conflict", [SERVER_WINS], indirect=True)
def test_outgoing_conflict_server_wins_publishes_nothing(outgoing_conflict: Result,
                                                         kinto_collection: Dict[str, Any]) -> None:
    """integration_test.ts, "Outgoing conflict", "SERVER_WINS strategy with
    transformers": it("should not publish anything")."""
    assert outgoing_conflict.published_ids == []
    assert server_list(kinto_collection) == [{"title": "task1-remote!", "done": True}]


@pytest.mark.parametrize("outgoing_conflict", [SERVER_WINS], indirect=True)
def test_outgoing_conflict_server_wins_updates_nothing(outgoing_conflict: Result) -> None:
    """integration_test.ts, "Outgoing conflict", "SERVER_WINS strategy with
    transformers": it("should not update anything"): the pull leaves the
    local record alone (the resolution, not the pull, takes the server's)."""
    assert outgoing_conflict.pull["updated"] == [] and outgoing_conflict.pull["created"] == []


@pytest.mark.parametrize("outgoing_conflict", [SERVER_WINS], indirect=True)
def test_outgoing_conflict_server_wins_lists_the_resolved_record(outgoing_conflict: Result) -> None:
    """integration_test.ts, "Outgoing conflict", "SERVER_WINS strategy with
    transformers": it("should list resolved records"): the accepted copy,
    "theirs", decoded from the server's "task1-remote!"."""
    (conflict,) = outgoing_conflict.conflicts
    assert kinto_fields(conflict["theirs"]) == {"id": conflict["id"], "title": "task1-remote", "done": True}
    assert kinto_fields(conflict["yours"]) == {"id": conflict["id"], "title": "task1-local", "done": False}


@pytest.mark.parametrize("outgoing_conflict", [SERVER_WINS], indirect=True)
def test_outgoing_conflict_server_wins_local_state(outgoing_conflict: Result) -> None:
    """integration_test.ts, "Outgoing conflict", "SERVER_WINS strategy with
    transformers": it("should put local database in the expected state")."""
    assert local_list(outgoing_conflict.store) == [{"title": "task1-remote", "_status": "synced", "done": True}]


# --- integration_test.ts: "Outgoing conflict (remote deleted)" ------------------


@pytest.fixture
def remote_deleted(device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any],
                   request: pytest.FixtureRequest) -> Result:
    """kinto.js deletes the server's bucket and forges its collection's
    lastModified, so that its pull sees no deletion and its push meets it.
    Kinto keeps a tombstone and Tureen's pull receives it: the deletion
    meets the local update there (a conflict with "theirs" null, kept by
    LEAVE_IF_CHANGED) instead of at the push; the strategy resolves it the
    same way."""
    store, target = setup_outgoing_conflict(device, kinto_collection, remote_deleted=True)
    return kintojs_sync(store, target, request.param)


@pytest.mark.parametrize("remote_deleted", [CLIENT_WINS], indirect=True)
def test_remote_deleted_client_wins_local_state(remote_deleted: Result) -> None:
    """integration_test.ts, "Outgoing conflict (remote deleted)",
    "CLIENT_WINS strategy with transformers": it("should put local database
    in the expected state")."""
    assert local_list(remote_deleted.store) == [{"title": "task1-local", "_status": "synced", "done": False}]


@pytest.mark.parametrize("remote_deleted", [CLIENT_WINS], indirect=True)
def test_remote_deleted_client_wins_server_state(remote_deleted: Result, kinto_collection: Dict[str, Any]) -> None:
    """integration_test.ts, "Outgoing conflict (remote deleted)",
    "CLIENT_WINS strategy with transformers": it("should put the remote
    database in the expected state")."""
    assert server_list(kinto_collection) == [{"title": "task1-local!", "done": False}]


@pytest.mark.parametrize("remote_deleted", [SERVER_WINS], indirect=True)
def test_remote_deleted_server_wins_publishes_nothing(remote_deleted: Result,
                                                      kinto_collection: Dict[str, Any]) -> None:
    """integration_test.ts, "Outgoing conflict (remote deleted)",
    "SERVER_WINS strategy with transformers": it("should not publish
    anything")."""
    assert remote_deleted.published_ids == [] and server_list(kinto_collection) == []


@pytest.mark.parametrize("remote_deleted", [SERVER_WINS], indirect=True)
def test_remote_deleted_server_wins_updates_nothing(remote_deleted: Result) -> None:
    """integration_test.ts, "Outgoing conflict (remote deleted)",
    "SERVER_WINS strategy with transformers": it("should not update
    anything"): the pull applies the deletion to nothing, leaving the local
    update to the conflict."""
    assert remote_deleted.pull["updated"] == [] and remote_deleted.pull["deleted"] == []


@pytest.mark.parametrize("remote_deleted", [SERVER_WINS], indirect=True)
def test_remote_deleted_server_wins_lists_the_resolved_record(remote_deleted: Result) -> None:
    """integration_test.ts, "Outgoing conflict (remote deleted)",
    "SERVER_WINS strategy with transformers": it("should list resolved
    records"): the rejected copy is "yours", of the conflict's id; the
    server's is the deletion (null)."""
    (conflict,) = remote_deleted.conflicts
    assert conflict["theirs"] is None
    assert kinto_fields(conflict["yours"]) == {"id": conflict["id"], "title": "task1-local", "done": False}


@pytest.mark.parametrize("remote_deleted", [SERVER_WINS], indirect=True)
def test_remote_deleted_server_wins_local_state(remote_deleted: Result) -> None:
    """integration_test.ts, "Outgoing conflict (remote deleted)",
    "SERVER_WINS strategy with transformers": it("should put local database
    in the expected state")."""
    assert local_list(remote_deleted.store) == []


# --- integration_test.ts: "Transformers" ----------------------------------------


@pytest.fixture
def two_transformers(device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any]) -> Result:
    store = device(bang=char_transformer("!"), ask=char_transformer("?"))
    store.local_upsert(SOUP, [{"id": str(uuid.uuid4()), "title": "abc"}, {"id": str(uuid.uuid4()), "title": "def"}])
    return kintojs_sync(store, target_for(kinto_collection, "bang", "ask"))


def test_transformers_list_published_records_unencoded(two_transformers: Result) -> None:
    """integration_test.ts, "Transformers": it("should list published records
    unencoded"): the copies the server answered with, as the store keeps
    them."""
    assert sorted(r["title"] for r in two_transformers.published) == ["abc", "def"]


def test_transformers_store_encoded_data_remotely(two_transformers: Result,
                                                  kinto_collection: Dict[str, Any]) -> None:
    """integration_test.ts, "Transformers": it("should store encoded data
    remotely")."""
    assert [r["title"] for r in server_list(kinto_collection)] == ["abc!?", "def!?"]


def test_transformers_keep_local_data_decoded(two_transformers: Result) -> None:
    """integration_test.ts, "Transformers": it("should keep local data
    decoded")."""
    assert [(e["title"], e["_status"]) for e in local_list(two_transformers.store)] == [
        ("abc", "synced"), ("def", "synced")]


# --- integration_test.ts: "Transforming local deletes" ---------------------------


def local_delete_transformer(encoded: List[Record]) -> Tuple[Transform, Transform]:
    """integration_test.ts's ``localDeleteTransformer()``: encode turns a
    deleted record whose title holds "preserve-on-send" into an update
    marked "wasDeleted"; decode turns a record marked so into a deletion.
    Tureen's deletion carries no title and no ``_status``: its tombstone is
    {"id", "deleted": true}. ``encoded`` keeps what encode got."""

    def encode(record: Record) -> Record:
        encoded.append(dict(record))
        if record.get("deleted") and "preserve-on-send" in (record.get("title") or ""):
            return dict({k: v for k, v in record.items() if k != "deleted"}, wasDeleted=True)
        return record

    def decode(record: Record) -> Record:
        return dict(record, deleted=True) if record.get("wasDeleted") else record

    return encode, decode


class LocalDeletes(NamedTuple):
    store: tureen.Store
    target: Dict[str, Any]
    encoded: List[Record]
    ids: Dict[str, str]


@pytest.fixture
def local_deletes(device: Callable[..., tureen.Store], kinto_collection: Dict[str, Any]) -> LocalDeletes:
    """The "Transforming local deletes" beforeEach: two records created
    locally and synced, then deleted locally; one written on the server by
    another client, synced; one written there marked "wasDeleted" since."""
    encoded: List[Record] = []
    store = device(local_deletes=local_delete_transformer(encoded))
    target = target_for(kinto_collection, "local_deletes")
    ids = {name: str(uuid.uuid4()) for name in ("new", "old", "on_receive", "other_client")}
    store.local_upsert(SOUP, [{"id": ids["new"], "title": "preserve-on-send new"},
                              {"id": ids["old"], "title": "preserve-on-send old", "last_modified": 1234}])
    server_create(kinto_collection, {"id": ids["other_client"], "title": "deleted-by-other-client"})
    kintojs_sync(store, target)
    store.local_delete_records(SOUP, [ids["new"], ids["old"]])
    server_create(kinto_collection, {"id": ids["on_receive"], "title": "delete-on-receive", "wasDeleted": True})
    encoded.clear()
    return LocalDeletes(store, target, encoded, ids)


def server_record(kinto_collection: Dict[str, Any], record_id: str) -> Record:
    """The server's record of that id, a tombstone included."""
    (record,) = [r for r in kinto_client(kinto_collection).get_records(_since="0") if r["id"] == record_id]
    return record


@pytest.mark.parametrize("which", ["new", "old"])
def test_local_deletes_are_sent_as_deletions(local_deletes: LocalDeletes, kinto_collection: Dict[str, Any],
                                             which: str) -> None:
    """integration_test.ts, "Transforming local deletes": it("should have
    sent preserve-on-send new remotely") and it("should have sent
    preserve-on-send old remotely"). Differs: kinto.js sends what encode
    returns, so its transformer turns the deletion of a whole local record
    into an update the server keeps. Tureen's encode gets the deletion's
    tombstone, {"id", "deleted": true}, and a deletion sends its id alone
    (the header: "its encoded tombstone is not sent"; the issue's "encode
    before a record is sent", a deletion sending none): the server holds
    the deletion. An app that wants the server to keep a record updates it
    (with a mark) instead of deleting it."""
    kintojs_sync(local_deletes.store, local_deletes.target)
    record_id = local_deletes.ids[which]
    assert {"id": record_id, "deleted": True} in local_deletes.encoded
    assert server_record(kinto_collection, record_id)["deleted"] is True


@pytest.mark.parametrize("which", ["new", "old"])
def test_local_deletes_leave_no_local_record(local_deletes: LocalDeletes, which: str) -> None:
    """integration_test.ts, "Transforming local deletes": it("should have
    locally deleted preserve-on-send new") and it("should have locally
    deleted preserve-on-send old"). kinto.js gets there by decoding the
    server's answer to its update into a deletion; Tureen by the deletion
    going through."""
    record_id = local_deletes.ids[which]
    assert status(local_get(local_deletes.store, record_id) or {}) == "deleted"
    result = kintojs_sync(local_deletes.store, local_deletes.target)
    assert record_id in result.pushes[0]["deleted"]
    assert local_get(local_deletes.store, record_id) is None


def test_local_deletes_a_record_decoded_as_deleted_is_not_created(local_deletes: LocalDeletes) -> None:
    """integration_test.ts, "Transforming local deletes": it("should have
    deleted delete-on-receive"): a new server record that decodes to a
    deletion ("deleted": true) is a deletion, of a record this device never
    had."""
    record_id = local_deletes.ids["on_receive"]
    result = kintojs_sync(local_deletes.store, local_deletes.target)
    assert record_id not in result.pull["created"]
    assert local_get(local_deletes.store, record_id) is None


def test_local_deletes_a_record_decoded_as_deleted_deletes_it(local_deletes: LocalDeletes,
                                                               kinto_collection: Dict[str, Any]) -> None:
    """integration_test.ts, "Transforming local deletes": it("should have
    deleted deleted-by-other-client"): a synced record that the server now
    holds marked "wasDeleted" decodes to a deletion, applied locally."""
    record_id = local_deletes.ids["other_client"]
    assert local_get(local_deletes.store, record_id)["title"] == "deleted-by-other-client"  # type: ignore[index]
    kinto_client(kinto_collection).update_record(
        id=record_id, data={"id": record_id, "title": "deleted-by-other-client", "wasDeleted": True})
    result = kintojs_sync(local_deletes.store, local_deletes.target)
    assert record_id in result.pull["deleted"]
    assert local_get(local_deletes.store, record_id) is None
