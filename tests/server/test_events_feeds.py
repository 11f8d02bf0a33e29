"""The live standings streams' bookkeeping (``arena/server/events.py``), in process on one
event loop with a fake client: one feed (one reader) a ladder however many streams watch it,
each change sent to every stream, a comment when nothing changes, the slot and the feed's task
gone when the client leaves or the server stops."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the server tests need the bot-arena[server] extra")

from bot_arena.arena.server.errors import ApiError
from bot_arena.arena.server.events import Feeds
from tests import asyncrun

DEADLINE_S = 30.0


class Client:
    """A fake ASGI client: what the server sent, and a way to leave."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self.ended = False
        self.left = asyncio.Event()
        self.changed = asyncio.Event()

    async def receive(self) -> dict[str, Any]:
        await self.left.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            self.sent.append(message["body"])
            self.ended = self.ended or not message.get("more_body", False)
        self.changed.set()

    def events(self) -> list[str]:
        return [b.decode() for b in self.sent if b.startswith(b"event: ")]

    async def until(self, check: Callable[[], bool]) -> None:
        async with asyncio.timeout(DEADLINE_S):
            while not check():
                self.changed.clear()
                await self.changed.wait()


class Ladders:
    """The standings reader the feeds call: a text per ladder, reads counted."""

    def __init__(self) -> None:
        self.text = {"a": "A0", "b": "B0"}
        self.reads = 0

    async def read(self, name: str) -> str:
        self.reads += 1
        if name not in self.text:
            raise ApiError(404, "no such ladder")
        return self.text[name]


def run(body: Callable[[], Awaitable[None]]) -> None:
    asyncrun.run(body())


def test_each_change_reaches_every_stream_through_one_feed_a_ladder() -> None:
    async def body() -> None:
        feeds = Feeds(max_streams=10, per_client=10, poll=0.001, heartbeat=60)
        ladders = Ladders()
        clients = [Client() for _ in range(3)]
        tasks = []
        for i, client in enumerate(clients):
            name = "b" if i == 2 else "a"
            feeds.admit("x")
            first = await ladders.read(name)
            tasks.append(asyncio.create_task(
                feeds.stream(name, "x", ladders.read, first, client.receive, client.send)
            ))  # fmt: skip
        for client in clients:
            await client.until(lambda c=client: len(c.events()) == 1)  # type: ignore[misc]
        assert feeds.feeds() == 2 and feeds.open == 3  # two ladders watched: two feeds
        ladders.text["a"] = "A1"
        for client in clients[:2]:
            await client.until(lambda c=client: len(c.events()) == 2)  # type: ignore[misc]
        assert [c.events() for c in clients[:2]] == [
            ["event: standings\ndata: A0\n\n", "event: standings\ndata: A1\n\n"]
        ] * 2
        assert clients[2].events() == ["event: standings\ndata: B0\n\n"]  # b did not change
        for client in clients:
            client.left.set()
        await asyncio.wait_for(asyncio.gather(*tasks), DEADLINE_S)
        assert feeds.open == 0 and feeds.feeds() == 0  # slots freed, feeds ended
        others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        if others:  # the cancelled feed tasks end (none is left running)
            _, pending = await asyncio.wait(others, timeout=DEADLINE_S)
            assert pending == set()

    run(body)


def test_a_quiet_stream_sends_a_comment_and_a_stopped_server_ends_it() -> None:
    async def body() -> None:
        feeds = Feeds(max_streams=10, per_client=10, poll=0.001, heartbeat=0.01)
        ladders = Ladders()
        client = Client()
        feeds.admit("x")
        task = asyncio.create_task(
            feeds.stream("a", "x", ladders.read, "A0", client.receive, client.send)
        )
        await client.until(lambda: b": keep-alive\n\n" in client.sent)
        feeds.stop()
        await asyncio.wait_for(task, DEADLINE_S)
        assert client.ended  # the body closed properly, not cut
        assert feeds.open == 0 and feeds.feeds() == 0
        with pytest.raises(ApiError) as refused:
            feeds.admit("y")  # stopping: no new stream
        assert refused.value.status == 503

    run(body)


def test_a_ladder_that_goes_ends_its_streams() -> None:
    async def body() -> None:
        feeds = Feeds(max_streams=10, per_client=10, poll=0.001, heartbeat=60)
        ladders = Ladders()
        client = Client()
        feeds.admit("x")
        task = asyncio.create_task(
            feeds.stream("a", "x", ladders.read, "A0", client.receive, client.send)
        )
        await client.until(lambda: len(client.events()) == 1)
        del ladders.text["a"]
        await asyncio.wait_for(task, DEADLINE_S)
        assert client.ended and feeds.open == 0 and feeds.feeds() == 0

    run(body)


def test_the_caps() -> None:
    async def body() -> None:
        feeds = Feeds(max_streams=3, per_client=2, poll=1, heartbeat=60)
        feeds.admit("x")
        feeds.admit("x")
        with pytest.raises(ApiError) as per_client:
            feeds.admit("x")
        assert per_client.value.status == 429
        feeds.admit("y")
        with pytest.raises(ApiError) as full:
            feeds.admit("z")
        assert full.value.status == 503
        assert feeds.open == 3

    run(body)
