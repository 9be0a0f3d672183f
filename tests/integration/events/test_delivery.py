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
