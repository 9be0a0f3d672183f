"""Goals (drive) and character profiles against the real PostgreSQL (spec pipeline §9)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.ei.goals import GOAL_ACTIVATION_THRESHOLD, activate_goals
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.memory.jobs.character import run_distillation
from novaberg.pair import Pair
from novaberg.store import character_profiles, goals, keys
from novaberg.store.short_term import ShortTermStore

PAIR = Pair("meister", "nova")
NOW = datetime(2026, 8, 1, 12, tzinfo=UTC)


async def test_goals_belong_to_the_character_and_carry_live_motivation(
    db: AsyncConnectionPool, model: ModelLayer
) -> None:
    vec = (await model.embed(["Nova will mehr ueber Musik lernen"]))[0]
    async with db.connection() as conn:
        fresh = await goals.insert_goal(
            conn, PAIR, statement="Musik", embedding=vec, motivation=0.8, now=NOW
        )
        await goals.insert_goal(
            conn, PAIR, statement="alt", embedding=vec, motivation=0.8, now=NOW - timedelta(days=60)
        )
        lasting = await goals.insert_goal(
            conn,
            PAIR,
            statement="immer",
            embedding=vec,
            kind="langfristig",
            motivation=0.6,
            now=NOW - timedelta(days=300),
        )
        await goals.insert_goal(
            conn, Pair("anna", "nova"), statement="fremd", embedding=vec, now=NOW
        )
        cur = await conn.execute(
            "SELECT DISTINCT user_id, character_id FROM ziele WHERE character_id = 'meister'"
        )
        assert await cur.fetchall() == [{"user_id": "nova", "character_id": "meister"}]
        week = await goals.active_goals(conn, PAIR, NOW + timedelta(days=14))
    by_id = {g["id"]: g for g in week}
    assert set(by_id) == {fresh, lasting}  # the 60-day-old medium-term goal has faded (< 0.15)
    assert by_id[fresh]["motivation"] == pytest.approx(0.4)  # one half-life
    assert by_id[lasting]["motivation"] == pytest.approx(0.6)  # long-term goals do not decay
    assert len(by_id[fresh]["embedding"]) == 384


async def test_goal_activation_threshold_and_bounded_gravitation(
    db: AsyncConnectionPool, model: ModelLayer
) -> None:
    prompt = (await model.embed(["Ich spiele gern Gitarre und Klavier"]))[0]
    near = (await model.embed(["Ich spiele gern Gitarre und Klavier"]))[0]
    far = (await model.embed(["Steuererklaerung und Finanzamt"]))[0]
    async with db.connection() as conn:
        for i in range(5):
            await goals.insert_goal(
                conn, PAIR, statement=f"Musik {i}", embedding=near, motivation=0.9, now=NOW
            )
        await goals.insert_goal(
            conn, PAIR, statement="schwach", embedding=near, motivation=0.39, now=NOW
        )
        await goals.insert_goal(
            conn, PAIR, statement="fern", embedding=far, motivation=1.0, now=NOW
        )
        loaded = await goals.active_goals(conn, PAIR, NOW)
    activation = activate_goals(prompt, loaded)
    names = {g["zielsatz"] for g in activation.activated}
    assert names == {f"Musik {i}" for i in range(5)}  # 0.39 × 1.0 < 0.40; far goal cos ≈ 0
    assert all(g["aktivierungs_staerke"] >= GOAL_ACTIVATION_THRESHOLD for g in activation.activated)
    assert "embedding" not in activation.activated[0]
    assert activation.gravitation_term == 1.0  # 0.5 × 4.5 clamped to [0, 1]
    assert activation.raw_goal_pull == pytest.approx(0.9)


async def test_goal_decay_job_stores_motivation_and_deactivates(db: AsyncConnectionPool) -> None:
    async with db.connection() as conn:
        week = await goals.insert_goal(
            conn, PAIR, statement="a", embedding=None, motivation=0.8, now=NOW
        )
        month = await goals.insert_goal(
            conn, PAIR, statement="b", embedding=None, motivation=0.8, now=NOW - timedelta(days=30)
        )
        lasting = await goals.insert_goal(
            conn,
            PAIR,
            statement="c",
            embedding=None,
            kind="langfristig",
            motivation=0.8,
            now=NOW - timedelta(days=300),
        )
        updated, deactivated = await goals.decay_all(conn, NOW + timedelta(days=7))
        rows = {r["id"]: r for r in await goals.all_goals(conn, PAIR)}
    assert (updated, deactivated) == (2, 1)
    assert rows[week]["motivation"] == pytest.approx(0.8 * math.exp(-math.log(2) / 14 * 7))
    assert rows[week]["aktiv"] and rows[lasting]["aktiv"] and not rows[month]["aktiv"]
    assert rows[lasting]["motivation"] == pytest.approx(0.8)


LAYERS = {
    "kern": "Neugierig und ruhig.",
    "adaptiv": "Wird offener.",
    "beziehung": "Vertraut Nova.",
    "intentionen": "Will Spanisch lernen.",
    "emotionen": "Freude beim Reisen.",
}


async def test_dirty_flag_runs_distillation_once_for_both_rows(
    db: AsyncConnectionPool, redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    store = ShortTermStore(redis)
    vec = (await model.embed(["x"]))[0]
    fields = {
        "user_id": "meister",
        "character_id": "nova",
        "beobachter": "user",
        "inhalt": "Der Nutzer reist nach Madrid.",
    }
    await store.create(PAIR, fields, vec, ttl_seconds=600, epoch_ms=1)
    scripted.add("Profil von meister", LAYERS, schema="ProfileLayers")
    scripted.add(
        "Profil von Nova", {**LAYERS, "kern": "Warmherzig.", "adaptiv": ""}, schema="ProfileLayers"
    )
    await redis.set(keys.profile_dirty(PAIR), "1")
    now = NOW.timestamp()

    result = await run_distillation(redis, db, model, now=now, short_term=store)
    assert set(result["destilliert"]) == {"meister:nova"}
    schemas = [c["schema"] for c in scripted.calls]
    assert schemas == ["ProfileLayers"] * 2 + ["SpokeRatings"] * 3 + ["LastingGoals"]
    assert {c["role"] for c in scripted.calls} == {"background"}
    assert "Der Nutzer reist nach Madrid." in scripted.calls[0]["prompt"]
    assert await redis.exists(keys.profile_dirty(PAIR)) == 0
    async with db.connection() as conn:
        user_profile, own = await character_profiles.read_pair_profiles(conn, PAIR)
    assert user_profile is not None and own is not None
    assert (
        user_profile["core"] == "Neugierig und ruhig."
        and user_profile["intentions"] == "Will Spanisch lernen."
    )
    assert own["core"] == "Warmherzig." and own["adaptive"] == ""  # empty layer not written
    assert own["updated"]["core"] == NOW and own["updated"]["adaptive"] is None
    assert own["nutzer_gewichtung_am"] == NOW  # the wheel was rated in the same run

    await run_distillation(redis, db, model, now=now, short_term=store)
    assert len(scripted.calls) == 6  # the flag was consumed: no second distillation


async def test_failed_distillation_sets_the_flag_again(
    db: AsyncConnectionPool, redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    scripted.add("Profil", fault="timeout")
    await redis.set(keys.profile_dirty(PAIR), "1")
    with pytest.raises(RuntimeError, match="meister:nova"):
        await run_distillation(redis, db, model, now=NOW.timestamp())
    assert await redis.get(keys.profile_dirty(PAIR)) == "1"
    async with db.connection() as conn:
        assert await character_profiles.read_profile(conn, "meister", "nova") is None
