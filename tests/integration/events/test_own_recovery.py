"""A live worker ends what a Redis outage left half done in its own name — not only a dead
worker's: an event it claimed but never ran (the claim's reply was lost) goes back to its
queue, a run that nothing ended gets its one outcome and frees its marker, a model-gate
slot no task holds is freed, and a stopping worker leaves none of its slots behind. The
steps that end a run may run twice (a retried step whose first reply was lost) without
doing anything twice."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import redis.asyncio as aioredis
from event_helpers import script_answer

from novaberg.events.model import MSG_FAILED, MSG_RESPONSE, QueuedUtterance, build_event
from novaberg.events.outcomes import RUN_STRANDED
from novaberg.events.queues import TurnQueues, push_event
from novaberg.llm.gate import ModelGate
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys

PAIR = Pair("anna", "nova")
FAST = {"heartbeat_interval": 0.1, "heartbeat_ttl": 5.0}
"""Housekeeping every 0.1 s: a stranded entry is ended within two scans."""


def user_event(turn_id: str, ids: list[str]) -> Any:
    return build_event(
        user_id=PAIR.user_id,
        character_id=PAIR.character_id,
        source="user",
        typ="message",
        payload={"turn_id": turn_id, "nachrichten_ids": ids, "user_prompt": "Hallo?"},
    )


async def outcomes_of(redis: aioredis.Redis, timeout: float = 20.0) -> list[dict[str, Any]]:
    """The outcomes delivered to anna, once there is at least one."""
    for _ in range(int(timeout / 0.05)):
        logged = [json.loads(m) for m in await redis.zrange(keys.delivery_log("anna"), 0, -1)]
        found = [m for m in logged if m["typ"] in (MSG_RESPONSE, MSG_FAILED)]
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError("no outcome")


async def idle(redis: aioredis.Redis, worker_id: str) -> None:
    for _ in range(200):
        if not await redis.exists(keys.processing_list(PAIR, worker_id), keys.turn_marker(PAIR)):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the pair did not become idle")


async def test_finishing_twice_does_it_once(redis: aioredis.Redis) -> None:
    """A finish retried after its reply was lost: the event is pushed once, and a marker a
    later run took meanwhile is left alone."""
    queues = TurnQueues(redis, "w-1")
    await redis.rpush(
        keys.prompt_queue(PAIR),
        QueuedUtterance(nachrichten_id="m1", prompt="m1", empfangen_am=1000.0).wire(),
    )
    block = await queues.begin_turn(PAIR, "t-1")
    assert block is not None
    event = user_event("t-1", ["m1"])
    assert await queues.finish(PAIR, block, release_marker=False, push=event)
    assert not await queues.finish(PAIR, block, release_marker=False, push=event)
    assert await redis.llen(keys.event_queue(PAIR)) == 1

    claimed = await queues.claim_event(PAIR)
    assert claimed is not None
    assert await queues.finish(PAIR, claimed, release_marker=True)
    await redis.set(keys.turn_marker(PAIR), claimed.marker)  # a continue of the same turn
    assert not await queues.finish(PAIR, claimed, release_marker=True)
    assert await redis.get(keys.turn_marker(PAIR)) == claimed.marker


async def test_an_event_claimed_but_never_run_goes_back_and_is_answered(
    workers, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    script_answer(scripted, "Da bin ich.")
    worker = await workers(**FAST, consume=False)  # it starts nothing
    await push_event(redis, user_event("t-1", ["m1"]))
    entry = await worker.queues.claim_event(PAIR)  # as if the claim's reply had been lost
    assert entry is not None and await redis.get(keys.turn_marker(PAIR)) == entry.marker

    await workers(**FAST)  # a consumer that polls; the stranded entry blocks the pair
    found = await outcomes_of(redis)
    assert [(m["typ"], m["nachrichten_ids"]) for m in found] == [(MSG_RESPONSE, ["m1"])]
    await idle(redis, worker.worker_id)


async def test_a_run_that_nothing_ended_gets_one_outcome(
    workers, redis: aioredis.Redis, gate: ModelGate
) -> None:
    """The run started (its event is marked handled) but its task ended without its final
    steps (Redis was gone longer than they retried): its own worker fails it once, frees
    the marker and the slot it leaked."""
    worker = await workers(**FAST, consume=False)
    event = user_event("t-1", ["m1", "m2"])
    await push_event(redis, event)
    entry = await worker.queues.claim_event(PAIR)
    assert entry is not None
    await redis.set(keys.event_seen(event.event_id), "started")
    await redis.zadd(gate.key, {f"{worker.worker_id}:leaked": 9e12})  # never released

    found = await outcomes_of(redis)
    assert [(m["typ"], m["nachrichten_ids"], m["grund"]) for m in found] == [
        (MSG_FAILED, ["m1", "m2"], RUN_STRANDED)
    ]
    await idle(redis, worker.worker_id)
    for _ in range(100):
        if await gate.held() == 0:
            break
        await asyncio.sleep(0.05)
    assert await gate.held() == 0


async def test_a_slot_held_by_a_running_task_is_kept(workers, gate: ModelGate) -> None:
    worker = await workers(**FAST, consume=False)
    token = f"{worker.worker_id}:running"
    assert await gate.try_acquire(token)
    await asyncio.sleep(0.5)  # several housekeeping rounds
    assert await gate.held() == 1
    await gate.release(token)
    assert await gate.held() == 0


async def test_a_stopping_worker_frees_all_its_slots(workers, gate: ModelGate) -> None:
    """A slot whose release a Redis outage swallowed does not outlive a graceful stop."""
    worker = await workers(heartbeat_interval=3600, consume=False)  # no sweep before
    await gate.redis.zadd(gate.key, {f"{worker.worker_id}:leaked": 9e12})
    await gate.redis.zadd(gate.key, {"other-worker:busy": 9e12})
    await worker.stop()
    assert [str(m) for m in await gate.redis.zrange(gate.key, 0, -1)] == ["other-worker:busy"]
