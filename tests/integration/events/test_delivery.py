"""Delivery: per-user sequence numbers, fan-out across hubs (API processes), reconnect
catch-up after `since`, and the bounded catch-up window."""

from __future__ import annotations

import asyncio
import json

import pytest
import redis.asyncio as aioredis

from novaberg.events import delivery as delivery_mod
from novaberg.events.delivery import Delivery, DeliveryHub
from novaberg.events.model import StageMessage
from novaberg.store import keys


def stage(n: int) -> StageMessage:
    return StageMessage(
        character_id="nova", turn_id=f"t{n}", node="router", label="x", graph="character"
    )


async def test_reconnect_receives_what_it_missed(sockets, token, redis: aioredis.Redis) -> None:
    anna = await token("anna")
    sender = Delivery(redis)
    first = await sockets(anna)
    for n in range(3):
        await sender.send("anna", stage(n))
    seen = [await first.wait_for(lambda m, n=n: m.get("turn_id") == f"t{n}") for n in range(3)]
    last_seq = seen[-1]["seq"]
    await first.close()
    for n in range(3, 6):  # sent while the client is away
        await sender.send("anna", stage(n))
    again = await sockets(anna, since=last_seq)
    for n in range(6, 8):  # live after the reconnect
        await sender.send("anna", stage(n))
    await again.wait_for(lambda m: m.get("turn_id") == "t7")
    got = [m["turn_id"] for m in again.seen if m.get("typ") == "character_stage"]
    assert got == [f"t{n}" for n in range(3, 8)], "missed ones first, in order, no duplicates"
    seqs = [m["seq"] for m in again.seen if "seq" in m]
    assert seqs == list(range(last_seq + 1, last_seq + 6))


async def test_connect_without_since_gets_only_new_messages(
    sockets, token, redis: aioredis.Redis
) -> None:
    anna = await token("anna")
    sender = Delivery(redis)
    await sender.send("anna", stage(0))
    ws = await sockets(anna)
    assert ws.seen[0]["seq_aktuell"] == 1
    await sender.send("anna", stage(1))
    await ws.wait_for(lambda m: m.get("turn_id") == "t1")
    assert [m.get("turn_id") for m in ws.seen[1:]] == ["t1"]


async def test_two_hubs_both_deliver(redis: aioredis.Redis) -> None:
    """Two API processes (two hubs) with a connection each for the same user both get it."""

    class Sink:
        def __init__(self) -> None:
            self.got: list[str] = []

        async def send_text(self, data: str) -> None:
            self.got.append(data)

        async def close(self, code: int = 1000, reason: str | None = None) -> None:
            return None

    hubs = [DeliveryHub(redis), DeliveryHub(redis)]
    sinks = [Sink(), Sink()]
    pumps = []
    for hub, sink in zip(hubs, sinks, strict=True):
        await hub.start()
        conn = await hub.attach(sink, "anna", None, None)
        pumps.append(asyncio.create_task(hub.pump(conn)))
    await Delivery(redis).send("anna", stage(1))
    await Delivery(redis).send("bob", stage(2))
    for _ in range(200):
        if all(len(s.got) >= 2 for s in sinks):
            break
        await asyncio.sleep(0.01)
    for sink in sinks:
        assert [json.loads(m).get("turn_id") for m in sink.got] == [None, "t1"]
    for pump in pumps:
        pump.cancel()
    for hub in hubs:
        await hub.stop()


async def test_catch_up_window_keeps_the_last_messages(
    redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(delivery_mod, "LOG_KEEP", 5)
    sender = Delivery(redis)
    for n in range(12):
        await sender.send("anna", stage(n))
    kept = await sender.since("anna", 0)
    assert [json.loads(m)["seq"] for m in kept] == [8, 9, 10, 11, 12]
    assert 0 < await redis.ttl(keys.delivery_log("anna")) <= delivery_mod.LOG_MAX_AGE
    later = await sender.since("anna", 0, now=json.loads(kept[-1])["gesendet_am"] + 86_401)
    assert later == [], "messages older than 24 h are not replayed"


class StalledSink:
    """A peer that stopped reading: every send blocks (as the server's does once the
    transport's buffer is full)."""

    def __init__(self) -> None:
        self.sent = 0
        self.closed: list[tuple[int, str | None]] = []

    async def send_text(self, data: str) -> None:
        self.sent += 1
        await asyncio.Event().wait()

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        self.closed.append((code, reason))


async def test_a_stalled_connection_is_given_up_by_bytes_and_frees_its_queue(
    redis: aioredis.Redis,
) -> None:
    """The queue is capped by bytes: past the cap what was queued is dropped at once and
    the pump ends (its socket is then closed with 4408), even while it is blocked in a
    send the peer never reads."""
    cap = 64 * 1024
    hub = DeliveryHub(redis, buffer_bytes=cap)
    await hub.start()
    sink = StalledSink()
    conn = await hub.attach(sink, "anna", None, None)
    pump = asyncio.create_task(hub.pump(conn))
    sender = Delivery(redis)
    big = StageMessage(
        character_id="nova", turn_id="t", node="router", label="x" * 16_000, graph="character"
    )
    peak = 0
    for _ in range(12):  # 12 x 16 KB > 64 KiB
        await sender.send("anna", big)
        await asyncio.sleep(0.02)
        peak = max(peak, conn.queued_bytes)
    await asyncio.wait_for(pump, 10)
    assert conn.overflowed
    assert peak <= cap, "never more than the cap queued"
    assert (len(conn.queue), conn.queued_bytes) == (0, 0), "the queue is freed at once"
    assert sink.sent == 1, "the blocked send was the only one"
    await hub.stop()


async def test_one_message_larger_than_the_cap_still_reaches_a_reading_peer(
    redis: aioredis.Redis,
) -> None:
    class Sink:
        def __init__(self) -> None:
            self.got: list[str] = []

        async def send_text(self, data: str) -> None:
            self.got.append(data)

        async def close(self, code: int = 1000, reason: str | None = None) -> None:
            return None

    hub = DeliveryHub(redis, buffer_bytes=64 * 1024)
    await hub.start()
    sink = Sink()
    conn = await hub.attach(sink, "anna", None, None)
    pump = asyncio.create_task(hub.pump(conn))
    huge = stage(1).model_copy(update={"label": "y" * 200_000})
    await Delivery(redis).send("anna", huge)
    for _ in range(200):
        if len(sink.got) == 2:
            break
        await asyncio.sleep(0.01)
    assert len(sink.got) == 2 and not conn.overflowed
    pump.cancel()
    await hub.stop()


async def test_a_user_holds_at_most_the_allowed_sockets(
    server, sockets, token, redis: aioredis.Redis
) -> None:
    """One socket over the cap is refused with 4429; closing one makes room again."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    server.app.state.chat.hub.max_per_user = 3
    anna = await token("anna")
    held = [await sockets(anna) for _ in range(3)]
    async with connect(f"{server.ws_url}?token={anna}") as extra:
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                await asyncio.wait_for(extra.recv(), 10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4429
    assert server.app.state.chat.hub.connection_count("anna") == 3
    bob = await sockets(await token("bob"))  # another user is not affected
    assert bob.seen[0]["typ"] == "verbindung"
    await held[0].close()
    for _ in range(200):
        if server.app.state.chat.hub.connection_count("anna") < 3:
            break
        await asyncio.sleep(0.01)
    again = await sockets(anna)
    assert again.seen[0]["typ"] == "verbindung"
