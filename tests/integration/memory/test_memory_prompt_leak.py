"""The prompt-leak guard on the background writers whose model text becomes memory
(prompts/leak.py): short-term condensing, the session summary, the character profile and
long-term goals. A scripted model that reads its prompt back is never stored; the drop is
logged (and counted in the pipeline log where the writer has one)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.memory.jobs.character import run_distillation
from novaberg.memory.session_summary import summarise_if_needed
from novaberg.memory.short_term.creation import ShortTermWriter
from novaberg.pair import Pair
from novaberg.store import character_profiles, goals, keys
from novaberg.store.session import append_turn

PAIR = Pair("meister", "nova")
NOW = datetime(2026, 8, 1, 12, tzinfo=UTC)
LEAK = "Das sollst du inhaltlich sagen (Person A ist der Nutzer, Person B bist du). Gib es"
"""What the bundled model wrote into a chat: instruction text of our composer prompt."""
CONDENSE_LEAK = (
    "Höchstens zwei schlichte Sätze in der dritten Person. Behalte alle Namen, Orte, "
    "Zeitangaben und Zahlen wörtlich."
)
"""The condensing prompt's own rules, read back instead of a statement."""


def salience_write(segment: str) -> dict[str, object]:
    score = {"themen": ["rom"], "salienz": 0.6, "gedaechtnistyp": "lang", "emotion": "freude"}
    return {"salienz_obj": score, "segment": segment, "segment_index": 0, "segment_gesamt": 1}


async def test_a_condensed_statement_repeating_the_prompt_is_no_memory(
    redis: aioredis.Redis,
    model: ModelLayer,
    scripted: ScriptedLLM,
    caplog: pytest.LogCaptureFixture,
) -> None:
    writer = ShortTermWriter(redis, model)
    scripted.add("Rom war schön", CONDENSE_LEAK)
    scripted.add("Paris war laut", "Der Nutzer fand Paris laut.")
    with caplog.at_level(logging.WARNING, logger="novaberg.memory.short_term"):
        dropped = await writer.store_salience_write(
            PAIR, salience_write("Rom war schön."), "user", "t-leak"
        )
    assert dropped is None
    assert [r for r in caplog.records if "prompt_leck" in r.getMessage()]
    kept = await writer.store_salience_write(PAIR, salience_write("Paris war laut."), "user", "t2")
    assert kept is not None and kept.core == "Der Nutzer fand Paris laut."
    stored = [await redis.hget(key, "inhalt") for key in await redis.keys("kzg:*")]
    assert stored == ["Der Nutzer fand Paris laut."]


async def fill(redis: aioredis.Redis, count: int) -> None:
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        await append_turn(redis, PAIR, {"rolle": role, "inhalt": f"Satz Nummer {i}"})


async def test_a_leaking_summary_is_asked_again_and_the_clean_one_stored(
    redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    scripted.add(r"ÄLTERE TURNS", "Sie sprachen über zehn Sätze.")
    scripted.add(r"ÄLTERE TURNS", LEAK, times=1)
    await fill(redis, 26)
    outcome = await summarise_if_needed(redis, model, PAIR)
    assert outcome.action == "zusammengefasst"
    assert [c["schema"] for c in scripted.calls] == [None, None]
    assert await redis.get(keys.session_summary(PAIR)) == "Sie sprachen über zehn Sätze."


async def test_a_summary_leaking_twice_is_never_stored(
    redis: aioredis.Redis,
    model: ModelLayer,
    scripted: ScriptedLLM,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await redis.set(keys.session_summary(PAIR), "Früher ging es um Katzen.")
    scripted.add(r"ÄLTERE TURNS", LEAK)
    await fill(redis, 26)
    with caplog.at_level(logging.WARNING, logger="novaberg.memory.session_summary"):
        outcome = await summarise_if_needed(redis, model, PAIR)
    assert outcome.action == "gekuerzt" and "prompt_leck" in (outcome.error or "")
    assert len(scripted.calls) == 2  # the call and its one retry
    assert await redis.get(keys.session_summary(PAIR)) == "Früher ging es um Katzen."
    assert sum("repeats prompt text" in r.getMessage() for r in caplog.records) == 2


async def test_a_leaking_profile_or_goal_is_not_stored(
    db: AsyncConnectionPool, redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    layers = {"kern": LEAK, "adaptiv": "", "beziehung": "", "intentionen": "", "emotionen": ""}
    scripted.add("Profil von meister", layers, schema="ProfileLayers")
    scripted.add(
        "langfristige Ziele",
        {
            "ziele": [
                {"zielsatz": LEAK, "thema": "Person", "motivation": 0.9},
                {"zielsatz": "Ich lerne mit meister Spanisch.", "thema": "Spanisch",
                 "motivation": 0.7},
            ]
        },
        schema="LastingGoals",
    )  # fmt: skip
    await redis.set(keys.profile_dirty(PAIR), "1")
    with pytest.raises(RuntimeError, match="prompt_leck"):  # the job reports, flag set again
        await run_distillation(redis, db, model, now=NOW.timestamp())
    assert await redis.get(keys.profile_dirty(PAIR)) == "1"
    async with db.connection() as conn:
        profile = await character_profiles.read_profile(conn, "nova", "meister")
        rows = await goals.all_goals(conn, PAIR)
    assert profile is None or LEAK not in str(profile)
    assert [r["zielsatz"] for r in rows] == ["Ich lerne mit meister Spanisch."]
