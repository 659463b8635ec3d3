"""tureen.aio: long calls awaited from asyncio without holding the event
loop, a cancelled task stopping its call, listeners as async iterators."""

from __future__ import annotations

import asyncio
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Awaitable, List, TypeVar

import pytest

import tureen
import tureen.aio
from tureen import query

from servers import RestServer
from sync_support import rest_target

_T = TypeVar("_T")
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"


class Ticker:
    """A task that counts while the loop is free to run it."""

    def __init__(self) -> None:
        self.ticks = 0
        self.task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(0.01)
            self.ticks += 1

    async def wait_for(self, ticks: int, *, limit: float = 20.0) -> None:
        start = time.monotonic()
        while self.ticks < ticks:
            assert time.monotonic() - start < limit, "the loop was held"
            await asyncio.sleep(0.01)

    def stop(self) -> None:
        self.task.cancel()


async def cancelled(task: "asyncio.Task[_T]") -> float:
    """Cancels ``task`` and waits for it; returns how long it took to end."""
    start = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return time.monotonic() - start


def test_a_cancelled_sync_down_ends_stopped_and_the_loop_runs_meanwhile(tmp_path: Path,
                                                                       rest_server: RestServer) -> None:
    for i in range(200):
        rest_server.set_record({"uid": "r%03d" % i})
    rest_server.delay_next(10, 1.0, method="GET")  # slow pages
    target = rest_target(rest_server)

    async def main() -> None:
        async with tureen.aio.open(tmp_path / "s.db", unencrypted=True) as store:
            await store.register_soup("items", [("uid", "string")])
            ticker = Ticker()
            sync = asyncio.ensure_future(store.sync_down(target, "items", name="slow"))
            await ticker.wait_for(30)  # 0.3 s of ticks while the first page is held 1 s
            assert not sync.done()
            took = await cancelled(sync)
            ticker.stop()
            assert took < 3
            state = await store.sync_status("slow")
            assert state["status"] == "STOPPED"
            rest_server.clear_faults()
            assert (await store.resync("slow"))["status"] == "DONE"
            assert await store.count(query.all("items")) == 200

    asyncio.run(main())


def test_a_cancelled_query_is_interrupted(tmp_path: Path) -> None:
    async def main() -> None:
        store = await tureen.aio.open(tmp_path / "q.db", unencrypted=True, query_timeout_ms=0)
        try:
            ticker = Ticker()
            endless = asyncio.ensure_future(store.count(query.smart(ENDLESS)))
            await ticker.wait_for(20)
            assert not endless.done()
            took = await cancelled(endless)
            ticker.stop()
            assert took < 3
            assert await store.count(query.smart("SELECT 1")) == 1  # the store is not harmed
        finally:
            await store.close()
        assert store.closed

    asyncio.run(main())


def test_a_call_cancelled_before_it_began_never_runs(tmp_path: Path) -> None:
    busy = threading.Event()

    async def main() -> None:
        with ThreadPoolExecutor(max_workers=1) as executor:
            store = tureen.aio.AsyncStore(tureen.Store.open(tmp_path / "n.db", unencrypted=True), executor)
            await store.register_soup("notes", [("title", "string")])
            blocker = asyncio.get_running_loop().run_in_executor(executor, busy.wait)
            task = asyncio.ensure_future(store.upsert("notes", [{"title": "never"}]))  # queued behind it
            await asyncio.sleep(0.1)
            asyncio.get_running_loop().call_later(0.1, busy.set)
            await cancelled(task)
            await blocker
            assert await store.count(query.all("notes")) == 0
            await store.close()

    asyncio.run(main())


def test_events_are_an_async_iterator(tmp_path: Path) -> None:
    async def main() -> List[Any]:
        async with tureen.aio.open(tmp_path / "e.db", unencrypted=True) as store:
            await store.register_soup("notes", [("title", "string")])
            seen: List[Any] = []
            async with store.events("notes", timeout=10) as changes:
                for title in ("a", "b", "c"):
                    await store.upsert("notes", [{"title": title}])
                async for change in changes:
                    seen.append(change)
                    if len(seen) == 3:
                        break
            return seen

    seen = asyncio.run(main())
    assert [c["soup"] for c in seen] == ["notes"] * 3
    assert [len(c["created"]) for c in seen] == [1, 1, 1]


def test_closing_the_store_ends_its_event_iterators(tmp_path: Path) -> None:
    async def main() -> List[Any]:
        store = await tureen.aio.open(tmp_path / "c.db", unencrypted=True)
        await store.register_soup("notes", [("title", "string")])
        changes = store.events(None)  # no timeout: only the close ends it

        async def read() -> List[Any]:
            return [change async for change in changes]

        reader = asyncio.ensure_future(read())
        await store.upsert("notes", [{"title": "a"}])
        await asyncio.sleep(0.2)
        await store.close()
        return await asyncio.wait_for(reader, 10)

    seen = asyncio.run(main())
    assert [c["soup"] for c in seen] == ["notes"]


def test_quick_calls_stay_plain(tmp_path: Path) -> None:
    async def main() -> None:
        async with tureen.aio.open(tmp_path / "p.db", unencrypted=True) as store:
            assert isinstance(store.store, tureen.Store)
            assert store.interrupt() is None  # not a coroutine
            names: Awaitable[List[str]] = store.soup_names()
            assert await names == []
            with pytest.raises(tureen.NotFoundError):
                await store.index_specs("nothing")

    asyncio.run(main())


def test_live_query_pages_are_an_async_iterator(tmp_path: Path) -> None:
    async def main() -> List[Any]:
        async with tureen.aio.open(tmp_path / "l.db", unencrypted=True) as store:
            await store.register_soup("notes", [("title", "string")])
            pages: List[Any] = []
            async with store.live_query_events(query.all("notes", order_path="title"), timeout=10) as live:
                async for page in live:
                    pages.append([e["title"] for e in page])
                    if len(pages) == 1:
                        await store.upsert("notes", [{"title": "tea"}])
                    else:
                        break
            return pages

    assert asyncio.run(main()) == [[], ["tea"]]
