"""A worker that is stopped while a turn runs: it keeps its heartbeat while it drains
(no other worker adopts a live turn), and it ends every turn it cuts off in an outcome."""

from __future__ import annotations

import httpx
import redis.asyncio as aioredis
from event_helpers import post

from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys

PAIR = Pair("anna", "nova")


async def test_a_stopped_worker_fails_the_turn_it_cuts_off(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM, redis: aioredis.Redis
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    scripted.add("Antworte kurz und natürlich", "zu spät", latency_ms=600_000)
    # drains longer than a heartbeat lives: a watcher would adopt the turn if the
    # stopping worker stopped beating before it had drained
    stopping = await workers(drain_seconds=2.5)
    sent = await post(http, anna, "Bist du da?")
    await ws.wait_for(
        lambda m: m.get("node") == "conversation_vector" and m.get("graph") == "character",
        timeout=60,
    )
    await workers()  # the watcher
    await stopping.stop()

    failed = await ws.wait_typ("turn_gescheitert")
    assert failed["nachrichten_ids"] == [sent.json()["nachrichten_id"]]
    assert failed["grund"] == "worker_beendet"  # failed by itself, not adopted as dead
    assert len(ws.of("turn_gescheitert")) == 1 and not ws.of("character_response")
    assert not await redis.exists(keys.processing_list(PAIR, stopping.worker_id))
    assert not await redis.exists(keys.turn_marker(PAIR))
    assert not await redis.sismember(keys.worker_registry(), stopping.worker_id)
