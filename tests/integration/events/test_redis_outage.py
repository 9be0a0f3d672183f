"""A Redis outage mid-turn: the server is stopped while turns run and started again with
its AOF. Every accepted id still ends in exactly one outcome; the ids of the runs caught
in the outage within the bound the worker states (`OUTAGE_RECOVERY_BOUND`, scaled to
these workers' heartbeat, plus the model time a turn needs), everything queued behind
them afterwards; no processing entry, turn marker or model-gate slot is left behind.

The outage hits a Redis of this test's own (the other tests' server stays untouched)."""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from event_helpers import processing_entries, script_answer
from psycopg_pool import AsyncConnectionPool

from novaberg.config import Settings
from novaberg.events.intake import CharacterCache, Intake, intake_redis
from novaberg.events.model import MSG_FAILED, MSG_RESPONSE
from novaberg.events.worker import Worker
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.gate import ModelGate
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.runtime.embedded_redis import EmbeddedRedis
from novaberg.store import keys
from novaberg.store.characters import load_visible_ids
from novaberg.store.redis_client import create_redis
from novaberg.store.retry import MAX_PAUSE

USERS = [f"blip{i}" for i in range(6)]
HEARTBEAT_INTERVAL = 0.2
HEARTBEAT_TTL = 1.0
"""Shorter than the outage: without care, each worker would take the other for dead."""
OUTAGE_SECONDS = 2.0
TURN_MODEL_SECONDS = 1.5
"""Model time of one turn here (the scripted latencies below)."""
SLACK = 5.0
"""CPU time of the turns involved, on a loaded test machine."""
BOUND = MAX_PAUSE + 2 * HEARTBEAT_INTERVAL + 1.0 + 2 * TURN_MODEL_SECONDS + SLACK
"""`worker.OUTAGE_RECOVERY_BOUND` at this heartbeat, plus the model time a caught run still
needs — its own, and that of the run ahead of it when it waits for a gate slot (6 users,
4 slots) — plus slack: by then, after Redis answers again, every id of a run caught in
the outage has its outcome (about 10 s)."""
SETTLE = 60.0
"""Bound for everything queued behind (a bound to wait for, not a timing goal)."""


@pytest.fixture
async def own_redis(tmp_path: Path) -> AsyncIterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path / "redis")
    await asyncio.to_thread(server.start)
    yield server
    await asyncio.to_thread(server.stop)


async def delivered(redis: aioredis.Redis, user: str) -> list[dict[str, Any]]:
    return [json.loads(m) for m in await redis.zrange(keys.delivery_log(user), 0, -1)]


async def outcomes(redis: aioredis.Redis) -> list[dict[str, Any]]:
    found = []
    for user in USERS:
        found += [m for m in await delivered(redis, user) if m["typ"] in (MSG_RESPONSE, MSG_FAILED)]
    return found


async def in_flight(redis: aioredis.Redis) -> dict[str, list[str]]:
    """The ids of every run in a processing list now, by worker."""
    running: dict[str, list[str]] = {}
    for worker in await redis.smembers(keys.worker_registry()):
        for raw in await processing_entries(redis, worker):
            entry = json.loads(raw)
            if entry["art"] == "block":
                ids = [json.loads(item)["nachrichten_id"] for item in entry["items"]]
            else:
                ids = json.loads(entry["raw"])["payload"].get("nachrichten_ids", [])
            running.setdefault(worker, []).extend(ids)
    return running


async def test_every_id_ends_once_through_a_redis_restart_mid_turn(
    own_redis: EmbeddedRedis,
    settings: Settings,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
) -> None:
    script_answer(scripted, "Trotz allem da.", latency_ms=1200)
    scripted.add(".*", {}, schema="PerceptionResult", latency_ms=150)
    redis = create_redis(own_redis.url)
    intake_client = intake_redis(own_redis.url)
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model)
    graphs = GraphRuntime(deps)
    gate = ModelGate(redis, "scripted-outage", 4, wait_seconds=30, lease_seconds=600)
    workers = [
        Worker(
            redis,
            graphs,
            gate,
            heartbeat_interval=HEARTBEAT_INTERVAL,
            heartbeat_ttl=HEARTBEAT_TTL,
            poll_interval=0.02,
        )
        for _ in range(2)
    ]
    intake = Intake(intake_client, CharacterCache(lambda user: load_visible_ids(db, user)))
    accepted: list[str] = []

    async def say(round_: int) -> None:
        for user in USERS:
            done = await intake.accept(user, "nova", f"Runde {round_}, ich bin {user}.")
            accepted.append(done.message_id)

    try:
        for worker in workers:
            await worker.start()
        await say(1)
        deadline = time.monotonic() + 30
        while True:  # wait until several answers are being written (the responder is slow)
            responding = 0
            for user in USERS:
                nodes = [m.get("node") for m in await delivered(redis, user)]
                responding += "conversation_vector" in nodes and "responder" not in nodes
            if responding >= 3:
                break
            assert time.monotonic() < deadline, "the turns never reached the responder"
            await asyncio.sleep(0.05)
        await say(2)  # queued behind the running turns
        caught = [i for ids in (await in_flight(redis)).values() for i in ids]
        assert len(caught) >= 3, "the outage must hit running turns"

        await asyncio.to_thread(own_redis.stop)  # SIGTERM: Valkey writes its AOF and exits
        await asyncio.sleep(OUTAGE_SECONDS)
        await asyncio.to_thread(own_redis.start)  # same data directory: the AOF is loaded
        back = time.time()
        await say(3)

        deadline = time.monotonic() + SETTLE
        while True:
            named = Counter(i for m in await outcomes(redis) for i in m["nachrichten_ids"])
            if all(named[i] for i in accepted):
                break
            assert time.monotonic() < deadline, (
                f"unanswered after {SETTLE:.0f} s: {[i for i in accepted if not named[i]]}; "
                f"processing: {await in_flight(redis)}"
            )
            await asyncio.sleep(0.1)

        ended = await outcomes(redis)
        named = Counter(i for m in ended for i in m["nachrichten_ids"])
        assert {i: named[i] for i in accepted} == dict.fromkeys(accepted, 1), "exactly once"
        when = {i: m["gesendet_am"] for m in ended for i in m["nachrichten_ids"]}
        late = {i: round(when[i] - back, 1) for i in caught if when[i] - back > BOUND}
        assert not late, f"caught in the outage, ended later than {BOUND:.1f} s after: {late}"

        for _ in range(100):  # the last post-runs finish right after their answers
            if not any(w.prompts.running or w.events.running for w in workers):
                break
            await asyncio.sleep(0.05)
        for worker in workers:
            assert not await processing_entries(redis, worker.worker_id)
        for user in USERS:
            assert not await redis.exists(keys.turn_marker(Pair(user, "nova")))
        assert await gate.held() == 0, "no model-gate slot outlives its run"
    finally:
        for worker in workers:
            await worker.stop()
        assert await gate.held() == 0, "no slot survives the workers' stop"
        await intake_client.aclose()
        await redis.aclose()
        assert deps.log is not None
        await deps.log.close()
