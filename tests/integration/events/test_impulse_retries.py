"""A thought formed again stores its memory once; an entry whose delivery keeps failing
backs off and is parked after three attempts, with its reason visible to the person (GET
/impulses) and the operator (`novaberg pixie status`)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from impulse_helpers import PAIR, Clock, at, prime

from novaberg.cli.pixie import status_report
from novaberg.graph.agent_graph import build_agent_graph
from novaberg.graph.contract import GraphDeps
from novaberg.impulses import stack as impulse_stack
from novaberg.impulses.delivery import DELIVERY_ERROR, ImpulseDelivery, impulse_ids
from novaberg.store import keys
from novaberg.store.short_term import ShortTermStore

SCORE: dict[str, Any] = {
    "themen": ["streit"],
    "emotionen": {"explizit": ["sorge"], "implizit": [], "valenz": "negativ"},
    "salienz": 0.8,
    "gedaechtnistyp": "kurz",
    "dimension": "kontext",
    "begruendung": "Nova denkt an den Streit.",
    "intentionen": [],
    "entitaeten_roh": [],
    "zeitausdruck_roh": "",
}


class Stopped(BaseException):
    """Stands for the process dying: nothing after it runs."""


@pytest.fixture
def clock() -> Clock:
    return Clock(at("2026-12-03 15:00"))


@pytest.fixture
async def delivery(settings, redis, db, model, clock) -> AsyncIterator[ImpulseDelivery]:  # type: ignore[no-untyped-def]
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model, clock=clock)
    yield ImpulseDelivery(deps, build_agent_graph(deps), clock=clock)
    assert deps.log is not None
    await deps.log.close()


async def _memories(redis: aioredis.Redis, turn_id: str) -> list[str]:
    return await ShortTermStore(redis).keys_of_turn(PAIR, turn_id, "assistant")


async def test_a_thought_formed_again_after_a_crash_stores_one_memory(
    delivery: ImpulseDelivery, redis: aioredis.Redis, clock: Clock, scripted
) -> None:  # type: ignore[no-untyped-def]
    first = await prime(redis, clock.now)
    scripted.add(".*", SCORE, schema="SalienceScore")
    turn_id = impulse_ids(first)[1]

    async def die() -> None:
        raise Stopped

    delivery.after_thought = die  # the worker dies after the memory write, before the push
    with pytest.raises(Stopped):
        await delivery.check(PAIR)
    delivery.after_thought = None
    assert len(await _memories(redis, turn_id)) == 1, "the AgentGraph stored the thought"
    assert await redis.llen(keys.event_queue(PAIR)) == 0
    assert [e.id for e in await impulse_stack.entries(redis, PAIR)] == [first.id]

    assert (await delivery.check(PAIR)).fired  # formed again, queued this time
    assert len(await _memories(redis, turn_id)) == 1, "exactly one memory of the thought"
    assert await redis.llen(keys.event_queue(PAIR)) == 1


async def test_a_thought_formed_again_after_the_user_wrote_stores_one_memory(
    delivery: ImpulseDelivery, redis: aioredis.Redis, clock: Clock, scripted
) -> None:  # type: ignore[no-untyped-def]
    first = await prime(redis, clock.now)
    scripted.add(".*", SCORE, schema="SalienceScore")

    async def user_writes() -> None:
        await redis.set(keys.last_activity(PAIR.user_id), clock.now)

    delivery.after_thought = user_writes
    held = await delivery.check(PAIR)
    delivery.after_thought = None
    assert held.reason == "zustellung: nutzer hat geschrieben"
    clock.advance(3600)
    assert (await delivery.check(PAIR)).fired
    assert len(await _memories(redis, impulse_ids(first)[1])) == 1


@contextlib.asynccontextmanager
async def broken_write_log(db) -> AsyncIterator[None]:  # type: ignore[no-untyped-def]
    """The AgentGraph's dispatcher cannot record its writes: a real failure of the real
    PostgreSQL (the table is away while the block runs)."""
    async with db.connection() as conn:
        await conn.execute("ALTER TABLE pending_writes_log RENAME TO pending_writes_log_weg")
    try:
        yield
    finally:
        async with db.connection() as conn:
            await conn.execute("ALTER TABLE pending_writes_log_weg RENAME TO pending_writes_log")


async def _log(db) -> list[dict[str, Any]]:  # type: ignore[no-untyped-def]
    async with db.connection() as conn:
        cur = await conn.execute("SELECT ergebnis, grund FROM impuls_protokoll ORDER BY id")
        return [dict(r) for r in await cur.fetchall()]


async def test_a_failing_entry_backs_off_and_is_parked_after_three_attempts(
    delivery: ImpulseDelivery,
    redis: aioredis.Redis,
    db,
    clock: Clock,
    scripted,
    http: httpx.AsyncClient,
    token,
) -> None:  # type: ignore[no-untyped-def]
    first = await prime(redis, clock.now)
    scripted.add(".*", SCORE, schema="SalienceScore")

    tries: list[str] = []
    async with broken_write_log(db):  # the AgentGraph keeps failing
        for step, wait in enumerate((0, 5, 26, 60, 61)):
            clock.advance(wait)
            decision = await delivery.check(PAIR)
            assert not decision.fired
            tries.append(decision.reason)
            if step == 1:
                assert decision.reason.startswith("stapel"), "backing off: not tried every 5 s"
            if step == 3:
                assert decision.reason.startswith("stapel"), "the second failure waits 120 s"
    results = [r["ergebnis"] for r in await _log(db)]
    assert results.count(DELIVERY_ERROR) == 3, (results, tries)
    assert "versuch 3" in tries[-1]
    assert await impulse_stack.size(redis, PAIR) == 0, "parked: off the stack"
    [parked] = await impulse_stack.parked(redis, PAIR)
    assert parked["id"] == first.id and parked["versuche"] == 3
    assert "pending_writes_log" in parked["grund_geparkt"]
    assert len(await _memories(redis, impulse_ids(first)[1])) == 1, "one memory, three tries"

    clock.advance(3600)
    assert await delivery.reachable_pairs() == [], "delivery no longer looks at it"

    anna = await token("anna")
    listed = (await http.get("/impulses", headers={"Authorization": f"Bearer {anna}"})).json()
    assert [p["id"] for p in listed["geparkt"]] == [first.id]
    assert "pending_writes_log" in listed["geparkt"][0]["grund_geparkt"]
    report = await status_report(redis, db)
    [item] = report["paare"][str(PAIR)]["geparkt"]
    assert item["versuche"] == 3 and "pending_writes_log" in item["grund"]
    assert json.dumps(report, default=str)

    gone = await http.delete(f"/impulses/{first.id}", headers={"Authorization": f"Bearer {anna}"})
    assert gone.status_code == 204
    assert await impulse_stack.parked(redis, PAIR) == []


async def test_a_delivery_that_succeeds_after_a_failure_clears_the_count(
    delivery: ImpulseDelivery, redis: aioredis.Redis, db, clock: Clock, scripted
) -> None:  # type: ignore[no-untyped-def]
    await prime(redis, clock.now)
    scripted.add(".*", SCORE, schema="SalienceScore")
    async with broken_write_log(db):
        assert not (await delivery.check(PAIR)).fired
    assert len(await impulse_stack.failures(redis, PAIR)) == 1
    clock.advance(31)
    assert (await delivery.check(PAIR)).fired
    assert await impulse_stack.failures(redis, PAIR) == {}
