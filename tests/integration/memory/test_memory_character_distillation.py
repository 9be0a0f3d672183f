"""The charakter job's user weight (median of three wheel ratings) and long-term goals,
against the real PostgreSQL and Redis with the scripted model (spec pipeline §9, §4)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.config import Settings
from novaberg.graph.contract import GraphDeps
from novaberg.graph.nodes.db_access import db_access
from novaberg.graph.nodes.salience import character_salience
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.memory.jobs.character import run_distillation
from novaberg.memory.wheel import SPOKES
from novaberg.pair import Pair
from novaberg.store import character_profiles, goals, keys

PAIR = Pair("meister", "nova")
NOW = datetime(2026, 8, 1, 12, tzinfo=UTC)
NEUTRAL = dict.fromkeys(SPOKES, 0)
WHEEL = "Zuwendungsrad"
"""Matches only the wheel prompt (the profile and goal prompts do not say it)."""


def _script_wheels(scripted: ScriptedLLM, *wheels: dict[str, float]) -> None:
    """One scripted answer per wheel rating, each used once, in the given order."""
    for wheel in reversed(wheels):  # add() puts a rule in front
        scripted.add(WHEEL, wheel, schema="SpokeRatings", times=1)


async def _row(db: AsyncConnectionPool) -> dict[str, Any] | None:
    async with db.connection() as conn:
        return await character_profiles.read_profile(conn, "nova", "meister")


async def test_median_of_three_ratings_is_stored_and_read_by_salience(
    db: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: ModelLayer,
    scripted: ScriptedLLM,
    settings: Settings,
) -> None:
    high = {**NEUTRAL, "treue": 1, "dienst": 1}  # 0.9 + 2 = 2.9 → 1.5
    low = {**NEUTRAL, "distanz": 1}  # 0.9 − 1 = −0.1 → 0.5
    middle = {**NEUTRAL, "wissbegier": 0.5}  # 1.4
    _script_wheels(scripted, high, low, middle)
    await redis.set(keys.profile_dirty(PAIR), "1")

    result = await run_distillation(redis, db, model, now=NOW.timestamp())

    assert result["destilliert"]["meister:nova"]["nutzer_gewichtung"] == pytest.approx(1.4)
    assert sum(1 for c in scripted.calls if c["schema"] == "SpokeRatings") == 3
    row = await _row(db)
    assert row is not None
    assert row["nutzer_gewichtung"] == pytest.approx(1.4)
    assert row["nutzer_gewichtung_rad"] == {k: float(v) for k, v in middle.items()}
    assert row["nutzer_gewichtung_am"] == NOW
    assert "1.50, 0.50, 1.40" in row["nutzer_gewichtung_quelle"]
    # db_access reads the stored weight from row (nova, meister); salience's pflicht uses it
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model)
    state = {"user_id": "meister", "character_id": "nova", "event_source": "user"}
    weight = (await db_access(state, deps))["user_weight"]  # type: ignore[arg-type]
    assert weight == pytest.approx(1.4)
    _, _, pflicht = character_salience(0.1, 0.0, 0.0, 0.5, weight)
    assert pflicht == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("rated", "stored"),
    [({s: 1 for s in SPOKES[:6]}, 1.5), ({s: 1 for s in SPOKES[6:]}, 0.5)],
)
async def test_weight_is_clamped(
    db: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: ModelLayer,
    scripted: ScriptedLLM,
    rated: dict[str, float],
    stored: float,
) -> None:
    scripted.add(WHEEL, {**NEUTRAL, **rated}, schema="SpokeRatings")
    await redis.set(keys.profile_dirty(PAIR), "1")
    await run_distillation(redis, db, model, now=NOW.timestamp())
    row = await _row(db)
    assert row is not None and row["nutzer_gewichtung"] == pytest.approx(stored)


async def test_unreadable_rating_keeps_the_previous_weight_and_is_reported(
    db: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: ModelLayer,
    scripted: ScriptedLLM,
    caplog: pytest.LogCaptureFixture,
) -> None:
    before = NOW - timedelta(days=3)
    old_wheel = {**dict.fromkeys(SPOKES, 0.0), "treue": 0.5}
    async with db.connection() as conn:
        await character_profiles.set_user_weight(
            conn, PAIR, weight=1.2, wheel=old_wheel, source="vorher", now=before
        )
    scripted.add(WHEEL, fault="malformed", schema="SpokeRatings")  # also fails the retry
    _script_wheels(scripted, {**NEUTRAL, "treue": 1})  # the first rating is fine
    await redis.set(keys.profile_dirty(PAIR), "1")

    with caplog.at_level(logging.ERROR), pytest.raises(RuntimeError, match="nutzer_gewichtung"):
        await run_distillation(redis, db, model, now=NOW.timestamp())

    assert "wheel unreadable" in caplog.text
    row = await _row(db)
    assert row is not None
    assert row["nutzer_gewichtung"] == pytest.approx(1.2)
    assert row["nutzer_gewichtung_rad"] == old_wheel
    assert (row["nutzer_gewichtung_quelle"], row["nutzer_gewichtung_am"]) == ("vorher", before)
    assert row["updated"]["core"] == NOW  # the profiles of this run stay written
    assert await redis.get(keys.profile_dirty(PAIR)) == "1"  # retried on the next run
    assert scripted.calls[-1]["schema"] == "LastingGoals"  # the goals step still ran


async def test_long_term_goals_are_refreshed_from_the_profiles(
    db: AsyncConnectionPool, redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    async with db.connection() as conn:
        music = await goals.insert_goal(
            conn,
            PAIR,
            statement="Mehr Musik hoeren",
            topic="musik",
            embedding=None,
            kind=goals.LASTING_TYPE,
            motivation=0.3,
            now=NOW - timedelta(days=40),
        )
        travel = await goals.insert_goal(
            conn,
            PAIR,
            statement="Reisen planen",
            topic="Reisen",
            embedding=None,
            kind=goals.LASTING_TYPE,
            motivation=0.5,
            now=NOW - timedelta(days=40),
        )
        medium = await goals.insert_goal(
            conn, PAIR, statement="Heute nachfragen", embedding=None, now=NOW
        )
    scripted.add(
        "Profil von meister",
        {
            "kern": "Lernt Spanisch.",
            "adaptiv": "",
            "beziehung": "",
            "intentionen": "",
            "emotionen": "",
        },
        schema="ProfileLayers",
    )
    scripted.add(
        "langfristige Ziele",
        {
            "ziele": [
                {
                    "zielsatz": "Ich begleite meister beim Spanischlernen.",
                    "thema": "Spanisch",
                    "motivation": 0.8,
                },
                {
                    "zielsatz": "Ich will wissen, welche Musik meister liebt.",
                    "thema": " Musik ",
                    "motivation": 0.6,
                },
            ]
        },
        schema="LastingGoals",
    )
    await redis.set(keys.profile_dirty(PAIR), "1")

    result = await run_distillation(redis, db, model, now=NOW.timestamp())

    assert result["destilliert"]["meister:nova"]["ziele"] == {
        "neu": 1,
        "aktualisiert": 1,
        "deaktiviert": 1,
    }
    prompt = next(c["prompt"] for c in scripted.calls if c["schema"] == "LastingGoals")
    assert "Lernt Spanisch." in prompt  # derived from the fresh profile
    assert "musik: Mehr Musik hoeren" in prompt and "Heute nachfragen" not in prompt
    async with db.connection() as conn:
        rows = {r["id"]: r for r in await goals.all_goals(conn, PAIR)}
        live = await goals.active_goals(conn, PAIR, NOW)
    assert rows[music]["aktiv"] and rows[music]["zielsatz"].startswith("Ich will wissen")
    assert rows[music]["motivation"] == pytest.approx(0.6)
    assert rows[music]["motivation_basis_am"] == NOW
    assert not rows[travel]["aktiv"]  # not proposed again
    assert rows[medium]["aktiv"] and rows[medium]["ziel_typ"] == "mittelfristig"
    new = [r for r in rows.values() if r["thema"] == "Spanisch"]
    assert len(new) == 1 and new[0]["ziel_typ"] == "langfristig" and new[0]["aktiv"]
    embedded = {g["id"]: g["embedding"] for g in live}
    assert len(embedded[music]) == 384 and len(embedded[new[0]["id"]]) == 384


async def test_no_goal_evidence_keeps_the_goals(
    db: AsyncConnectionPool, redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    async with db.connection() as conn:
        kept = await goals.insert_goal(
            conn,
            PAIR,
            statement="Reisen planen",
            topic="reisen",
            embedding=None,
            kind=goals.LASTING_TYPE,
            now=NOW,
        )
    scripted.add("langfristige Ziele", {"ziele": []}, schema="LastingGoals")
    await redis.set(keys.profile_dirty(PAIR), "1")
    result = await run_distillation(redis, db, model, now=NOW.timestamp())
    assert result["destilliert"]["meister:nova"]["ziele"] == {
        "neu": 0,
        "aktualisiert": 0,
        "deaktiviert": 0,
    }
    async with db.connection() as conn:
        assert [g["id"] for g in await goals.active_goals(conn, PAIR, NOW)] == [kept]
