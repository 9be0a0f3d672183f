"""The shadow queue's push semantics and decay, and the jobs that turn its tasks into
stack entries (nachfragen only under pressure, delegation routing, recherche without a
search provider, wiedervorlage snoozed a week)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from novaberg.impulses import shadow_queue
from novaberg.impulses import stack as impulse_stack
from novaberg.impulses.jobs import NO_PROVIDER_MARK, route
from novaberg.impulses.shadow_queue import ShadowTask
from novaberg.pair import Pair
from novaberg.pixie.jobs import build_scheduler
from novaberg.store import keys
from novaberg.store.session import append_turn

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
PAIR = Pair("anna", "nova")


def task(kind: str = "nachfragen", topic: str = "Vater", **extra: Any) -> ShadowTask:
    return ShadowTask(user_id="anna", character_id="nova", task=kind, topic=topic, **extra)


async def _row(db, row_id: int) -> dict[str, Any] | None:  # type: ignore[no-untyped-def]
    async with db.connection() as conn:
        cur = await conn.execute("SELECT * FROM shadow_auftrag WHERE id = %s", (row_id,))
        return await cur.fetchone()  # type: ignore[no-any-return]


async def test_push_inserts_reinforces_and_half_reactivates(db) -> None:  # type: ignore[no-untyped-def]
    row_id, how = await shadow_queue.push(db, task(salience=0.5), NOW)
    assert how == shadow_queue.PUSH_NEW
    again, how = await shadow_queue.push(db, task(salience=0.5), NOW + timedelta(hours=1))
    assert (again, how) == (row_id, shadow_queue.PUSH_REINFORCED)
    row = await _row(db, row_id)
    assert row is not None
    assert row["salienz_roh"] == pytest.approx(0.53) and row["haeufigkeit"] == 2
    other, how = await shadow_queue.push(db, task(topic="Arbeit"), NOW)
    assert other != row_id and how == shadow_queue.PUSH_NEW

    async with db.connection() as conn:
        await conn.execute("UPDATE shadow_auftrag SET aktiv = FALSE WHERE id = %s", (row_id,))
    _, how = await shadow_queue.push(db, task(), NOW)
    assert how == shadow_queue.PUSH_REACTIVATED
    row = await _row(db, row_id)
    assert row is not None and row["aktiv"]
    assert row["salienz_decay"] == pytest.approx((0.53 + 0.1) / 2)


async def test_daily_decay_deactivates_below_point_three(db) -> None:  # type: ignore[no-untyped-def]
    strong, _ = await shadow_queue.push(db, task(topic="stark", salience=0.9), NOW)
    weak, _ = await shadow_queue.push(db, task(topic="schwach", salience=0.32), NOW)
    updated, deactivated = await shadow_queue.decay_all(db, NOW + timedelta(days=3))
    assert (updated, deactivated) == (2, 1)
    strong_row, weak_row = await _row(db, strong), await _row(db, weak)
    assert strong_row is not None and weak_row is not None
    assert strong_row["salienz_decay"] == pytest.approx(shadow_queue.decayed(0.9, 3), rel=1e-5)
    assert strong_row["aktiv"] and not weak_row["aktiv"]


async def test_a_task_failing_three_times_is_deleted(db) -> None:  # type: ignore[no-untyped-def]
    row_id, _ = await shadow_queue.push(db, task(), NOW)
    assert [await shadow_queue.failed(db, row_id) for _ in range(3)] == [1, 2, 3]
    assert await _row(db, row_id) is None


def test_push_refuses_unknown_tasks_and_bad_arousal() -> None:
    with pytest.raises(ValueError):
        shadow_queue._check(task(kind="traeumen"))
    with pytest.raises(ValueError):
        shadow_queue._check(task(arousal=1.4))


def test_delegation_routes_by_the_users_emotion_vector() -> None:
    assert route("delegation", "absturz") == "nachfragen"
    assert route("delegation", "spirale") == "nachfragen"
    assert route("delegation", "erholung") == "recherche"
    assert route("delegation", None) == "recherche"
    assert route("wiedervorlage", "absturz") == "wiedervorlage"


async def _user(redis, vector: str, emotion: str = "traurigkeit") -> None:  # type: ignore[no-untyped-def]
    await append_turn(
        redis,
        PAIR,
        {"rolle": "user", "inhalt": "…", "emotion": emotion, "emotions_vektor": vector,
         "modus": "emotional"},
    )  # fmt: skip


@pytest.fixture
def scheduler(redis, db, model):  # type: ignore[no-untyped-def]
    return build_scheduler(redis, db, model, clock=lambda: NOW.timestamp())


async def test_follow_up_becomes_a_stack_entry_only_under_pressure(scheduler, redis, db) -> None:  # type: ignore[no-untyped-def]
    await _user(redis, "absturz")
    row_id, _ = await shadow_queue.push(
        db, task(kind="delegation", arousal=0.6, reference_id="t-7"), NOW
    )
    result = await scheduler.run_now("nachfragen")
    assert result.status == "ran", result.error
    [entry] = await impulse_stack.entries(redis, PAIR)
    assert entry.aufgabe == "nachfragen" and "Vater" in entry.inhalt
    assert entry.arousal == 0.6 and entry.ausloeser_turn_id == "t-7"
    assert len(entry.embedding) == 384
    assert await _row(db, row_id) is None, "done: the task leaves the queue"

    await redis.delete(keys.impulse_stack(PAIR), keys.session_turns(PAIR))
    await _user(redis, "erholung", emotion="freude")
    row_id, _ = await shadow_queue.push(db, task(kind="nachfragen", topic="Arbeit"), NOW)
    result = await scheduler.run_now("nachfragen")
    assert result.status == "ran" and result.detail is not None
    assert result.detail["eintrag"] is None
    assert await impulse_stack.size(redis, PAIR) == 0
    assert await _row(db, row_id) is None


async def test_research_without_a_provider_is_marked_as_memory_and_own_knowledge(
    scheduler, redis, db, scripted
) -> None:  # type: ignore[no-untyped-def]
    await _user(redis, "plateau", emotion="neutral")
    scripted.add("Thema: Vater", "Schlaganfälle haben oft gute Reha-Chancen.")
    row_id, _ = await shadow_queue.push(db, task(kind="delegation"), NOW)  # routes to recherche
    result = await scheduler.run_now("recherche")
    assert result.status == "ran", result.error
    [entry] = await impulse_stack.entries(redis, PAIR)
    assert entry.aufgabe == "recherche"
    assert NO_PROVIDER_MARK in entry.inhalt and "Reha" in entry.inhalt
    assert await _row(db, row_id) is None


async def test_failed_research_counts_an_attempt_and_keeps_the_task(
    scheduler, redis, db, scripted
) -> None:  # type: ignore[no-untyped-def]
    await _user(redis, "plateau", emotion="neutral")
    scripted.add("Thema: Vater", fault="error")
    row_id, _ = await shadow_queue.push(db, task(kind="recherche"), NOW)
    result = await scheduler.run_now("recherche")
    assert result.status == "failed"
    row = await _row(db, row_id)
    assert row is not None and row["versuche"] == 1
    assert await impulse_stack.size(redis, PAIR) == 0


async def test_due_resubmissions_reach_the_stack_and_are_snoozed_a_week(
    scheduler, redis, db
) -> None:  # type: ignore[no-untyped-def]
    async with db.connection() as conn:
        cur = await conn.execute(
            "INSERT INTO timeline (user_id, event_time, title, precision, wiedervorlage_am)"
            " VALUES ('anna', %s, 'Vorstellungsgespräch', 'day', %s) RETURNING id",
            (NOW - timedelta(days=8), NOW - timedelta(hours=1)),
        )
        due = (await cur.fetchone())["id"]
        await conn.execute(
            "INSERT INTO timeline (user_id, event_time, title, precision, wiedervorlage_am)"
            " VALUES ('anna', %s, 'Später', 'day', %s)",
            (NOW, NOW + timedelta(days=3)),
        )
    result = await scheduler.run_now("wiedervorlage")
    assert result.status == "ran" and result.detail == {"eintraege": 1}
    [entry] = await impulse_stack.entries(redis, PAIR)
    assert entry.aufgabe == "wiedervorlage" and "Vorstellungsgespräch" in entry.inhalt
    async with db.connection() as conn:
        cur = await conn.execute("SELECT wiedervorlage_am FROM timeline WHERE id = %s", (due,))
        assert (await cur.fetchone())["wiedervorlage_am"] == NOW + timedelta(days=7)
    assert (await scheduler.run_now("wiedervorlage")).detail == {"eintraege": 0}


async def test_queue_fed_jobs_compete_only_while_a_task_waits(scheduler, db) -> None:  # type: ignore[no-untyped-def]
    await scheduler.register()
    names = {c.job.name for c in await scheduler.candidates()}
    assert "nachfragen" not in names and "recherche" not in names
    await shadow_queue.push(db, task(kind="delegation"), NOW)
    names = {c.job.name for c in await scheduler.candidates()}
    assert {"nachfragen", "recherche"} <= names
