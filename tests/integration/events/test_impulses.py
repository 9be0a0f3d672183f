"""Impulse delivery: every gate holds on its own, an open set of gates queues exactly one
impulse event, and a worker stopped mid-delivery loses and duplicates nothing."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import pytest
import redis.asyncio as aioredis
from event_helpers import script_answer
from impulse_helpers import PAIR, Clock, at, direction, entry, prime, user_turn

from novaberg.agents.pending import store_pending
from novaberg.graph.agent_graph import build_agent_graph
from novaberg.graph.contract import GraphDeps
from novaberg.impulses import settings as impulse_settings
from novaberg.impulses import stack as impulse_stack
from novaberg.impulses.delivery import ImpulseDelivery, impulse_ids
from novaberg.impulses.gates import FIRED, HELD
from novaberg.store import character_activation, keys
from novaberg.store.session import read_turns

GATES = [
    "impulse",
    "pausiert",
    "ruhezeit",
    "tageslimit",
    "stapel",
    "ausloeser",
    "turn_laeuft",
    "rueckfrage",
    "burst",
    "naehe",
    "initiative",
    "stress",
    "auswahl",
]


@pytest.fixture
def clock() -> Clock:
    return Clock(at("2026-12-03 15:00"))


@pytest.fixture
async def delivery(settings, redis, db, model, clock) -> AsyncIterator[ImpulseDelivery]:  # type: ignore[no-untyped-def]
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model, clock=clock)
    yield ImpulseDelivery(deps, build_agent_graph(deps), clock=clock)
    assert deps.log is not None
    await deps.log.close()


async def _log(db) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT ergebnis, grund, eintrag_id, turn_id, tore FROM impuls_protokoll ORDER BY id"
        )
        return [dict(r) for r in await cur.fetchall()]


async def test_open_gates_queue_one_impulse_and_clear_the_entry_after_the_push(
    delivery: ImpulseDelivery, redis: aioredis.Redis, db, clock: Clock
) -> None:  # type: ignore[no-untyped-def]
    first = await prime(redis, clock.now)
    near = await entry(redis, clock.now, embedding=direction(0, mix=0.5), text="Wie geht es dir?")
    far = await entry(redis, clock.now, embedding=direction(5), text="Etwas ganz anderes.")
    before = len(await read_turns(redis, PAIR))

    decision = await delivery.check(PAIR)

    assert decision.fired and decision.entry is not None and decision.entry.id == first.id
    queued = await redis.lrange(keys.event_queue(PAIR), 0, -1)
    assert len(queued) == 1
    event = json.loads(queued[0])
    payload = event["payload"]
    assert (event["source"], event["typ"]) == ("character", "message")
    assert event["event_id"], payload["turn_id"] == impulse_ids(first)
    assert payload["reiz_herkunft"] == "eigener_impuls"
    assert payload["eigener_gedanke"] == first.inhalt
    assert payload["gedanke_arousal"] == 0.4
    assert payload["ausloeser_turn_id"] == "t-ausloeser"
    assert "user_prompt" not in payload
    left = {e.id for e in await impulse_stack.entries(redis, PAIR)}
    assert left == {far.id}, "the entry and its near-duplicate leave, the far one stays"
    assert near.id not in left
    assert await redis.get(keys.impulse_burst(PAIR)) == "1"
    assert len(await read_turns(redis, PAIR)) == before, "the AgentGraph writes no session turn"
    rows = await _log(db)
    assert [r["ergebnis"] for r in rows] == [FIRED]
    assert [g["tor"] for g in rows[0]["tore"]] == GATES
    assert all(g["offen"] for g in rows[0]["tore"])


async def _hold_setup(name: str, redis: aioredis.Redis, db, clock: Clock) -> None:  # type: ignore[no-untyped-def]
    if name == "impulse":
        await impulse_settings.update(db, "anna", "nova", {"impulse": False})
    elif name == "pausiert":
        await character_activation.set_active(db, PAIR, False, datetime.now(UTC))
    elif name == "ruhezeit":
        clock.now = at("2026-12-03 23:30")
        await prime_again(redis, clock)
    elif name == "tageslimit":
        await impulse_settings.update(db, "anna", "nova", {"pro_tag": 0})
    elif name == "stapel":
        await redis.delete(keys.impulse_stack(PAIR))
    elif name == "ausloeser":
        await redis.set(keys.last_activity(PAIR.user_id), clock.now - 5)
    elif name == "turn_laeuft":
        await redis.set(keys.turn_marker(PAIR), "t-running")
    elif name == "rueckfrage":
        await store_pending(
            redis, "anna", agent_name="notizen", action="agent", target="Liste",
            rueckfrage="Soll ich die Liste anlegen?", parameter={},
        )  # fmt: skip
    elif name == "burst":
        await redis.set(keys.impulse_burst(PAIR), 2)
    elif name == "naehe":
        await redis.hset(keys.stance(PAIR), "naehe", "0.1")
    elif name == "initiative":
        await redis.hset(keys.stance(PAIR), "initiative", "0")
    elif name == "stress":
        await user_turn(redis, clock.now - 60, emotion="stress")
    elif name == "auswahl":
        await redis.delete(keys.impulse_stack(PAIR))
        await entry(redis, clock.now, task="recherche")  # negative mood: only nachfragen


async def prime_again(redis: aioredis.Redis, clock: Clock) -> None:
    await redis.delete(keys.impulse_stack(PAIR), keys.session_turns(PAIR))
    await prime(redis, clock.now)


@pytest.mark.parametrize("gate", GATES)
async def test_each_gate_holds_the_impulse_on_its_own(
    gate: str, delivery: ImpulseDelivery, redis: aioredis.Redis, db, clock: Clock
) -> None:  # type: ignore[no-untyped-def]
    await prime(redis, clock.now)
    await _hold_setup(gate, redis, db, clock)
    size = await impulse_stack.size(redis, PAIR)

    decision = await delivery.check(PAIR)

    assert not decision.fired
    closed = [g.name for g in decision.gates if not g.open]
    assert closed == ([gate, "auswahl"] if gate == "stapel" else [gate])  # nothing to choose
    assert await redis.llen(keys.event_queue(PAIR)) == 0
    assert await impulse_stack.size(redis, PAIR) == size, "a held entry stays on the stack"
    rows = await _log(db)
    assert rows[-1]["ergebnis"] == HELD and rows[-1]["grund"].startswith(gate)


async def test_without_a_stance_the_closeness_gate_holds_as_haltung_fehlt(
    delivery: ImpulseDelivery, redis: aioredis.Redis, db, clock: Clock
) -> None:  # type: ignore[no-untyped-def]
    await prime(redis, clock.now)
    await redis.delete(keys.stance(PAIR))
    decision = await delivery.check(PAIR)
    assert not decision.fired
    assert decision.reason == "naehe: haltung fehlt"
    assert (await _log(db))[-1]["grund"] == "naehe: haltung fehlt"
    await redis.hset(
        keys.stance(PAIR), mapping={"naehe": 0.5, "initiative": 1, "zeit": clock.now - 90_000}
    )
    assert (await delivery.check(PAIR)).reason.startswith("naehe: haltung alt")


async def test_negative_mood_still_lets_a_follow_up_through_but_not_research(
    delivery: ImpulseDelivery, redis: aioredis.Redis, clock: Clock
) -> None:
    await prime(redis, clock.now)
    await entry(redis, clock.now, task="recherche", text="Recherche: etwas Neues.")
    decision = await delivery.check(PAIR)
    assert decision.fired and decision.entry is not None
    assert decision.entry.aufgabe == "nachfragen"


async def test_low_momentum_fires_before_the_silence_ran_out(
    delivery: ImpulseDelivery, redis: aioredis.Redis, clock: Clock
) -> None:
    await prime(redis, clock.now)
    await redis.set(keys.last_activity(PAIR.user_id), clock.now - 5)
    assert not (await delivery.check(PAIR)).fired
    await redis.set(keys.momentum(PAIR), "low")
    assert (await delivery.check(PAIR)).fired


async def test_an_impulse_never_consumes_an_open_agent_question(
    delivery: ImpulseDelivery, redis: aioredis.Redis, clock: Clock
) -> None:
    await prime(redis, clock.now)
    await store_pending(
        redis, "anna", agent_name="notizen", action="agent", target="Liste",
        rueckfrage="Soll ich die Liste anlegen?", parameter={},
    )  # fmt: skip
    for _ in range(3):
        assert not (await delivery.check(PAIR)).fired
    assert await redis.exists(keys.pending_agent("anna")), "the question is still open"
    assert await redis.llen(keys.event_queue(PAIR)) == 0


class Stopped(BaseException):
    """Stands for the process dying: nothing after it runs."""


async def test_a_worker_killed_after_the_push_duplicates_no_impulse(
    delivery: ImpulseDelivery,
    redis: aioredis.Redis,
    clock: Clock,
    workers,
    sockets,
    token,
    scripted,
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    ws = await sockets(anna)
    first = await prime(redis, clock.now)

    async def die() -> None:
        raise Stopped

    delivery.after_push = die
    with pytest.raises(Stopped):
        await delivery.check(PAIR)
    delivery.after_push = None
    assert [e.id for e in await impulse_stack.entries(redis, PAIR)] == [first.id]
    assert await redis.llen(keys.event_queue(PAIR)) == 1
    held = await delivery.check(PAIR)  # the event still waits: nothing more goes out
    assert not held.fired and held.reason.startswith("turn_laeuft")

    script_answer(scripted, "Ich wollte fragen, wie es dir mit dem Streit geht.")
    await workers()
    answer = await ws.wait_typ("character_response")
    assert answer["reiz_herkunft"] == "eigener_impuls"
    assert answer["nachrichten_ids"] == []
    assert answer["turn_id"] == impulse_ids(first)[1]
    await _settle(redis)

    assert (await delivery.check(PAIR)).fired  # the next delivery only clears the entry
    assert await impulse_stack.size(redis, PAIR) == 0
    assert await redis.llen(keys.event_queue(PAIR)) == 0
    await asyncio.sleep(0.3)
    outcomes = [m for m in ws.seen if m.get("typ") in {"character_response", "turn_gescheitert"}]
    assert len(outcomes) == 1, "exactly one outcome for the impulse"


async def test_a_repeated_impulse_event_is_dropped_by_the_event_consumer(
    delivery: ImpulseDelivery,
    redis: aioredis.Redis,
    clock: Clock,
    workers,
    sockets,
    token,
    scripted,
) -> None:  # type: ignore[no-untyped-def]
    """Should a repeat be queued all the same, it has the same event id and is dropped."""
    anna = await token("anna")
    ws = await sockets(anna)
    await prime(redis, clock.now)
    assert (await delivery.check(PAIR)).fired
    again = await redis.lindex(keys.event_queue(PAIR), 0)
    await redis.rpush(keys.event_queue(PAIR), again)
    script_answer(scripted, "Ich wollte fragen, wie es dir geht.")
    await workers()
    await ws.wait_typ("character_response")
    await _settle(redis)
    await asyncio.sleep(0.3)
    outcomes = [m for m in ws.seen if m.get("typ") in {"character_response", "turn_gescheitert"}]
    assert len(outcomes) == 1


async def _settle(redis: aioredis.Redis) -> None:
    for _ in range(500):
        busy = await redis.llen(keys.event_queue(PAIR)) or await redis.exists(
            keys.turn_marker(PAIR)
        )
        if not busy:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the pair never became idle")


async def test_a_worker_killed_while_forming_the_thought_loses_no_entry(
    delivery: ImpulseDelivery, redis: aioredis.Redis, clock: Clock, scripted
) -> None:  # type: ignore[no-untyped-def]
    first = await prime(redis, clock.now)
    scripted.default_latency_ms = 10_000
    running = asyncio.create_task(delivery.check(PAIR))
    for _ in range(300):
        if scripted.calls:
            break
        await asyncio.sleep(0.01)
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
    scripted.default_latency_ms = 0.0
    assert await redis.llen(keys.event_queue(PAIR)) == 0
    assert [e.id for e in await impulse_stack.entries(redis, PAIR)] == [first.id]


async def test_a_user_message_while_the_thought_forms_goes_first(
    delivery: ImpulseDelivery, redis: aioredis.Redis, clock: Clock, scripted
) -> None:  # type: ignore[no-untyped-def]
    first = await prime(redis, clock.now)
    scripted.default_latency_ms = 300
    running = asyncio.create_task(delivery.check(PAIR))
    for _ in range(300):
        if scripted.calls:
            break
        await asyncio.sleep(0.01)
    await redis.set(keys.last_activity(PAIR.user_id), clock.now)  # the user writes
    decision = await running
    scripted.default_latency_ms = 0.0
    assert not decision.fired
    assert decision.reason == "zustellung: nutzer hat geschrieben"
    assert await redis.llen(keys.event_queue(PAIR)) == 0
    assert [e.id for e in await impulse_stack.entries(redis, PAIR)] == [first.id]
