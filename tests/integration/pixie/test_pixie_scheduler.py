"""Pixie scheduler: priority, ageing, one winner per cycle, retries with a failed list,
pause switch, lane lock, model gate at background priority (spec pipeline §9)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.gate import ModelGate
from novaberg.llm.layer import ModelLayer
from novaberg.pixie.scheduler import (
    LANE_CPU,
    LANE_LLM,
    Job,
    JobContext,
    Scheduler,
    effective_priority,
    pause,
    resume,
)
from novaberg.store import keys

T0 = 1_790_000_000.0
HOUR = 3600.0


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> float:
        return self.now


class Recorder:
    def __init__(self) -> None:
        self.runs: list[str] = []

    def job(
        self,
        name: str,
        priority: float,
        interval: float = HOUR,
        *,
        lane: str = LANE_CPU,
        fail: bool = False,
    ) -> Job:
        async def run(ctx: JobContext) -> Mapping[str, Any]:
            self.runs.append(name)
            if fail:
                raise RuntimeError(f"{name} kaputt")
            return {"lauf": len(self.runs)}

        return Job(name, priority, interval, run, lane)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def context(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer, clock: Clock
) -> JobContext:
    return JobContext(redis, db, model, clock=clock)


async def log_rows(db: AsyncConnectionPool) -> list[dict[str, Any]]:
    async with db.connection() as conn:
        cur = await conn.execute("SELECT job, ergebnis, detail FROM hintergrund_log ORDER BY id")
        return list(await cur.fetchall())


def test_ageing_adds_half_a_point_per_hour_capped_at_two() -> None:
    assert effective_priority(0.2, 0) == 0.2
    assert effective_priority(0.2, 2 * HOUR) == pytest.approx(1.2)
    assert effective_priority(0.2, 10 * HOUR) == pytest.approx(2.2)
    assert effective_priority(0.2, -HOUR) == 0.2


async def test_one_winner_per_cycle_by_priority(
    context: JobContext, clock: Clock, db: AsyncConnectionPool
) -> None:
    rec = Recorder()
    scheduler = Scheduler(
        context, [rec.job("niedrig", 0.2), rec.job("hoch", 0.9), rec.job("mittel", 0.3)]
    )
    await scheduler.register()
    results = [await scheduler.tick() for _ in range(4)]
    assert rec.runs == ["hoch", "mittel", "niedrig"]
    assert [r.status for r in results] == ["ran", "ran", "ran", "idle"]
    clock.now += HOUR  # all due again, none overdue
    assert (await scheduler.tick()).job == "hoch"
    rows = await log_rows(db)
    assert [r["job"] for r in rows] == ["hoch", "mittel", "niedrig", "hoch"]
    assert all(r["ergebnis"] == "ok" for r in rows) and rows[0]["detail"] == {"lauf": 1}


async def test_overdue_job_ages_past_a_higher_base_priority(
    context: JobContext, clock: Clock, redis: aioredis.Redis
) -> None:
    rec = Recorder()
    scheduler = Scheduler(context, [rec.job("decay", 0.2), rec.job("promotion", 0.9)])
    await scheduler.register()
    await redis.hset(keys.pixie_schedule("decay"), "next_run", repr(T0 - 2 * HOUR))  # 0.2 + 1.0
    assert (await scheduler.tick()).job == "decay"
    await redis.hset(keys.pixie_schedule("decay"), "next_run", repr(T0 - HOUR))  # 0.2 + 0.5
    assert (await scheduler.tick()).job == "promotion"


async def test_failures_retry_then_land_in_the_failed_list(
    context: JobContext, clock: Clock, redis: aioredis.Redis, db: AsyncConnectionPool
) -> None:
    rec = Recorder()
    scheduler = Scheduler(
        context, [rec.job("wackel", 0.5, interval=600, fail=True)], retry_delay=60
    )
    await scheduler.register()
    first = await scheduler.tick()
    assert first.status == "failed" and first.attempts == 1 and "kaputt" in (first.error or "")
    assert (await scheduler.tick()).status == "idle"  # waits for the retry delay
    clock.now += 60
    assert (await scheduler.tick()).attempts == 2
    assert await redis.llen(keys.pixie_failed()) == 0
    clock.now += 60
    third = await scheduler.tick()
    assert third.attempts == 3
    failed = [json.loads(x) for x in await redis.lrange(keys.pixie_failed(), 0, -1)]
    assert [(f["job"], f["versuche"]) for f in failed] == [("wackel", 3)]
    schedule = await redis.hgetall(keys.pixie_schedule("wackel"))
    assert schedule["versuche"] == "0" and float(schedule["next_run"]) == pytest.approx(
        clock.now + 600
    )
    assert [r["ergebnis"] for r in await log_rows(db)] == ["fehler", "fehler", "gescheitert"]


async def test_success_resets_the_attempt_count(
    context: JobContext, clock: Clock, redis: aioredis.Redis
) -> None:
    outcomes = iter([RuntimeError("einmal"), None])

    async def flaky(ctx: JobContext) -> None:
        error = next(outcomes)
        if error:
            raise error

    scheduler = Scheduler(context, [Job("flaky", 0.5, 600, flaky)], retry_delay=10)
    await scheduler.register()
    assert (await scheduler.tick()).status == "failed"
    clock.now += 10
    assert (await scheduler.tick()).status == "ran"
    assert await redis.hget(keys.pixie_schedule("flaky"), "versuche") == "0"


async def test_pause_switch_and_lane_lock(context: JobContext, redis: aioredis.Redis) -> None:
    rec = Recorder()
    scheduler = Scheduler(context, [rec.job("a", 0.5), rec.job("b", 0.5, lane=LANE_LLM)])
    await scheduler.register()
    await pause(redis)
    assert (await scheduler.tick()).status == "paused"
    assert rec.runs == []
    await resume(redis)
    await redis.set(keys.pixie_running(LANE_CPU), "anderer-worker")
    assert (await scheduler.tick(LANE_CPU)).status == "busy"
    assert (await scheduler.tick(LANE_LLM)).job == "b"  # lanes are independent
    await redis.delete(keys.pixie_running(LANE_CPU))
    assert (await scheduler.tick(LANE_CPU)).job == "a"
    assert rec.runs == ["b", "a"]
    assert await redis.exists(keys.pixie_running(LANE_CPU)) == 0  # released after the run


async def test_model_jobs_yield_the_gate_to_a_waiting_user_turn(
    context: JobContext, redis: aioredis.Redis
) -> None:
    gate = ModelGate(redis, "scripted-test", 1)
    context.gate, context.gate_wait = gate, 0.2
    entered: list[str] = []

    async def uses_model(ctx: JobContext) -> None:
        async with ctx.model_slot() as token:
            entered.append(token)

    scheduler = Scheduler(context, [Job("modell", 0.5, 600, uses_model)])
    await scheduler.register()
    await redis.set(gate.waiting_key, "1", px=5000)  # a user turn is waiting for the gate
    result = await scheduler.tick()
    assert result.status == "failed" and "GateTimeout" in (result.error or "")
    assert entered == []
    await redis.delete(gate.waiting_key)
    await redis.hset(keys.pixie_schedule("modell"), "next_run", "0")
    assert (await scheduler.tick()).status == "ran" and len(entered) == 1
    assert await gate.held() == 0


async def test_default_jobs_promote_decay_and_distil(
    context: JobContext, redis: aioredis.Redis, db: AsyncConnectionPool, scripted: Any
) -> None:
    from novaberg.memory.short_term.creation import ShortTermWriter
    from novaberg.pair import Pair
    from novaberg.pixie.jobs import default_jobs

    pair = Pair("meister", "nova")
    scripted.add("Hochzeit", "Der Nutzer heiratet im Mai.")
    short_term = ShortTermWriter(redis, context.model, pool=db, clock=context.clock)
    stored = await short_term.store_salience_write(
        pair,
        {"salienz_obj": {"salienz": 0.9, "themen": ["hochzeit"]}, "segment": "Hochzeit im Mai!"},
        "user",
        "turn-1",
    )
    assert stored is not None and stored.promotion_queued
    scheduler = Scheduler(context, default_jobs())
    await scheduler.register()
    ran = [(await scheduler.tick(LANE_CPU)).job for _ in range(5)]
    # nachfragen has no shadow task, so it does not compete
    assert ran == [
        "synapsen_promotion",
        "wiedervorlage",
        "schatten_decay",
        "synapsen_decay",
        "ziel_decay",
    ]
    assert (await scheduler.tick(LANE_LLM)).job == "charakter"
    async with db.connection() as conn:
        node = await (await conn.execute("SELECT inhalt FROM lzg_knoten")).fetchone()
        link = await (await conn.execute("SELECT turn_id, lzg_id FROM verbindung")).fetchone()
        profile = await (await conn.execute("SELECT count(*) AS n FROM charakter_hash")).fetchone()
    assert node == {"inhalt": "Der Nutzer heiratet im Mai."}
    assert link is not None and link["turn_id"] == "turn-1" and link["lzg_id"] is not None
    assert profile["n"] == 2
    assert await redis.exists(keys.profile_dirty(pair)) == 0
    assert [r["ergebnis"] for r in await log_rows(db)] == ["ok"] * 6
