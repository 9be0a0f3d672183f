"""Session summary: above 25 turns the oldest 10 are summarised and trimmed; a failed
summary keeps the last 20 (spec pipeline §2)."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
import redis.asyncio as aioredis

from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.memory.session_summary import summarise_if_needed
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.session import append_turn, read_turns

PAIR = Pair("meister", "nova")


async def fill(redis: aioredis.Redis, count: int) -> None:
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        await append_turn(
            redis, PAIR, {"rolle": role, "inhalt": f"Satz Nummer {i}", "emotion": "freude"}
        )


async def test_twenty_five_turns_are_left_alone(
    redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    await fill(redis, 25)
    outcome = await summarise_if_needed(redis, model, PAIR)
    assert outcome.action == "nichts"
    assert await redis.llen(keys.session_turns(PAIR)) == 25
    assert scripted.calls == []


async def test_the_length_the_write_returned_decides_without_rereading(
    redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    await fill(redis, 25)
    length = await append_turn(redis, PAIR, {"rolle": "user", "inhalt": "Satz 26"})
    scripted.add(r"ÄLTERE TURNS", "Zusammenfassung.")
    assert (await summarise_if_needed(redis, model, PAIR, length=25)).action == "nichts"
    outcome = await summarise_if_needed(redis, model, PAIR, length=length)
    assert length == 26 and outcome.action == "zusammengefasst"


async def test_oldest_ten_are_summarised_and_trimmed(
    redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    await redis.set(keys.session_summary(PAIR), "Frueher ging es um Katzen.")
    scripted.add(r"ÄLTERE TURNS", "Sie sprachen ueber Katzen und zehn Saetze.")
    await fill(redis, 26)
    outcome = await summarise_if_needed(redis, model, PAIR)
    assert outcome.action == "zusammengefasst" and outcome.dropped == 10
    turns = await read_turns(redis, PAIR)
    assert [t["inhalt"] for t in turns] == [f"Satz Nummer {i}" for i in range(10, 26)]
    assert (
        await redis.get(keys.session_summary(PAIR)) == "Sie sprachen ueber Katzen und zehn Saetze."
    )
    assert 0 < await redis.ttl(keys.session_summary(PAIR)) <= keys.SESSION_TTL
    prompt = scripted.calls[-1]["prompt"]
    assert "Frueher ging es um Katzen." in prompt
    assert "Satz Nummer 9" in prompt and "Satz Nummer 10" not in prompt
    assert scripted.calls[-1]["role"] == "analysis"


async def test_failed_summary_keeps_last_twenty_and_logs(
    redis: aioredis.Redis,
    model: ModelLayer,
    scripted: ScriptedLLM,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await redis.set(keys.session_summary(PAIR), "alt")
    scripted.add(r"ÄLTERE TURNS", fault="timeout")
    await fill(redis, 27)
    with caplog.at_level(logging.WARNING, logger="novaberg.memory.session_summary"):
        outcome = await summarise_if_needed(redis, model, PAIR)
    assert outcome.action == "gekuerzt" and outcome.dropped == 7 and outcome.error
    turns = await read_turns(redis, PAIR)
    assert [t["inhalt"] for t in turns] == [f"Satz Nummer {i}" for i in range(7, 27)]
    assert await redis.get(keys.session_summary(PAIR)) == "alt"
    assert any("summary failed" in r.getMessage() for r in caplog.records)


async def test_empty_summary_counts_as_failure(
    redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    scripted.add(r"ÄLTERE TURNS", "  ")
    await fill(redis, 30)
    outcome = await summarise_if_needed(redis, model, PAIR)
    assert outcome.action == "gekuerzt"
    assert await redis.llen(keys.session_turns(PAIR)) == 20
    assert await redis.get(keys.session_summary(PAIR)) is None


async def test_concurrent_change_of_the_head_trims_nothing(
    redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    scripted.add(r"ÄLTERE TURNS", "Zusammenfassung.", latency_ms=300)
    await fill(redis, 26)

    async def other_summariser() -> None:
        await asyncio.sleep(0.1)
        await redis.lpop(keys.session_turns(PAIR))

    outcome, _ = await asyncio.gather(summarise_if_needed(redis, model, PAIR), other_summariser())
    assert outcome.action == "uebersprungen"
    assert await redis.llen(keys.session_turns(PAIR)) == 25
    assert await redis.get(keys.session_summary(PAIR)) is None
    first = json.loads(await redis.lindex(keys.session_turns(PAIR), 0))
    assert first["inhalt"] == "Satz Nummer 1"
