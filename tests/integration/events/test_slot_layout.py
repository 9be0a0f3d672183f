"""Every script and transaction of the event model keeps to one Redis Cluster slot, proved
on a single Redis by watching what the scenarios send (tests/slot_check.py). The whole
scenario suite runs under the same watch with `NOVABERG_SLOT_CHECK=1`."""

from __future__ import annotations

import asyncio

import httpx
import redis.asyncio as aioredis
from event_helpers import post, script_answer

from novaberg.events.model import MSG_RESPONSE, build_event
from novaberg.events.queues import TurnQueues, push_event
from novaberg.events.worker import Worker
from novaberg.llm.gate import ModelGate
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.scripts import script
from slot_check import SlotWatch

PAIR = Pair("anna", "nova")


async def test_the_watch_sees_a_cross_slot_script_and_transaction(
    redis: aioredis.Redis, slot_watch: SlotWatch
) -> None:
    """The watch itself: what a cluster would refuse is reported (the fixture's own final
    assertion is what the other tests rely on)."""
    await script(redis, "return redis.call('SET', KEYS[1], '1')")(keys=["a{x}"], args=[])
    await script(redis, "return redis.call('SET', KEYS[1], KEYS[2])")(
        keys=["a{x}", "b{y}"], args=[]
    )
    await script(redis, "return redis.call('SET', 'c{z}', '1')")(keys=["a{x}"], args=[])
    async with redis.pipeline(transaction=True) as pipe:
        pipe.set("a{x}", "1")
        pipe.set("b{y}", "1")
        await pipe.execute()
    await slot_watch.stop()
    found = slot_watch.violations()
    assert len(found) == 3, found
    assert any("declares keys in 2 slots" in f and "b{y}" in f for f in found)
    assert any("outside its slot" in f and "c{z}" in f for f in found)
    assert any("transaction touches 2 slots" in f for f in found)
    slot_watch.found.clear()  # the fixture's own check must pass now


async def test_a_turn_touches_one_slot_per_step(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    slot_watch: SlotWatch,
) -> None:
    """Intake, ready list, block cut, the graphs' memory scripts, finish and the outcome:
    every script and transaction of a whole turn keeps to one slot."""
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Hallo Anna.")
    await workers()
    await post(http, anna, "Hallo Nova")
    answer = await ws.wait_typ(MSG_RESPONSE)
    assert answer["nachricht"] == "Hallo Anna."
    assert slot_watch.scripts_seen > 5, "the watch saw the turn's scripts"


async def test_orphan_recovery_and_events_touch_one_slot_per_step(
    redis: aioredis.Redis, gate: ModelGate, workers, slot_watch: SlotWatch
) -> None:
    """A dead worker's entry (found through its index) is adopted and ended; an event is
    claimed and finished — each step in one slot."""
    dead = TurnQueues(redis, "tot")
    await redis.sadd(keys.worker_registry(), "tot")
    await push_event(
        redis,
        build_event(
            user_id="anna",
            character_id="nova",
            source="user",
            typ="message",
            payload={"turn_id": "t-9", "nachrichten_ids": ["m9"], "user_prompt": "m9"},
        ),
    )
    entry = await dead.claim_event(PAIR)
    assert entry is not None
    assert await redis.sismember(keys.processing_index("tot"), "anna:nova")
    rescuer: Worker = await workers(consume=False)
    for _ in range(200):
        if not await redis.sismember(keys.worker_registry(), "tot"):
            break
        await asyncio.sleep(0.05)
    assert not await redis.exists(keys.processing_list(PAIR, "tot"))
    assert not await redis.exists(keys.processing_index("tot"))
    assert rescuer.worker_id != "tot"
