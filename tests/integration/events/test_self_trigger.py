"""Self-triggers (seed 000 §3.3, §7.1): every arrival is logged, a `continue` event with
trigger_count + 1 inherits the turn_id, and the cap at 3 drops the next one loudly."""

from __future__ import annotations

import asyncio
import logging

import redis.asyncio as aioredis
from event_helpers import RESPONDER, script_approval

from novaberg.events.model import build_event
from novaberg.events.queues import push_event
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys

PAIR = Pair("anna", "nova")
FACTUAL = "Wir sehen uns am Montag um 14:30 Uhr."
"""An answer with fact indicators, so the thinker checks it."""


def script_thinker_failure(scripted: ScriptedLLM) -> None:
    """The thinker's check is unreadable on every attempt: a double failure."""
    script_approval(scripted)
    scripted.add(".*", fault="malformed", schema="ThinkerCheck")
    scripted.add(RESPONDER, FACTUAL)


async def _settle(redis: aioredis.Redis) -> None:
    for _ in range(500):
        busy = await redis.llen(keys.event_queue(PAIR)) or await redis.exists(
            keys.turn_marker(PAIR)
        )
        if not busy:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the pair never became idle")


async def test_thinker_double_failure_triggers_one_continue_with_the_same_turn(
    workers, sockets, token, redis: aioredis.Redis, scripted: ScriptedLLM, caplog
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_thinker_failure(scripted)
    caplog.set_level(logging.INFO, logger="novaberg.events")
    event = build_event(
        user_id="anna",
        character_id="nova",
        source="user",
        typ="message",
        payload={"turn_id": "t-1", "nachrichten_ids": ["m-1"], "user_prompt": "Wann?"},
    )
    await push_event(redis, event)
    await workers()
    first = await ws.wait_typ("character_response")
    second = await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and m["seq"] != first["seq"]
    )
    await _settle(redis)
    assert first["nachrichten_ids"] == ["m-1"]
    assert second["turn_id"] == first["turn_id"] == "t-1", "the retry inherits the turn"
    assert second["nachrichten_ids"] == [], "the ids already had their outcome"
    arrivals = [
        r.getMessage() for r in caplog.records if "self-trigger in result" in r.getMessage()
    ]
    assert len(arrivals) == 2, arrivals  # logged on every arrival, also when absent/false
    assert "value=True" in arrivals[0] and "value=False" in arrivals[1]
    assert any("trigger_count 1" in r.getMessage() for r in caplog.records)


async def test_chain_stops_at_three_with_a_warning_naming_the_pair(
    workers, sockets, token, redis: aioredis.Redis, scripted: ScriptedLLM, caplog
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_thinker_failure(scripted)
    caplog.set_level(logging.INFO, logger="novaberg.events")
    payload = {"turn_id": "t-3", "user_prompt": "Wann genau?", "reiz_herkunft": "nutzer_turn"}
    for count in (2, 3):  # runs that are not themselves thinker retries, as a chain would be
        await push_event(
            redis,
            build_event(
                user_id="anna",
                character_id="nova",
                source="character",
                typ="continue",
                payload={**payload, "turn_id": f"t-{count}"},
                trigger_count=count,
            ),
        )
    await workers()
    await ws.wait_for(lambda m: m.get("typ") == "character_response" and m["turn_id"] == "t-3")
    await ws.wait_for(lambda m: m.get("typ") == "character_response" and m["turn_id"] == "t-2")
    await _settle(redis)
    warnings = [
        r
        for r in caplog.records
        if r.levelno == logging.WARNING and "self-trigger dropped at the limit" in r.getMessage()
    ]
    assert len(warnings) == 1
    text = warnings[0].getMessage()
    assert "pair=anna:nova" in text and "trigger_count=3" in text and "limit=3" in text
    queued = [r.getMessage() for r in caplog.records if "queued as" in r.getMessage()]
    assert len(queued) == 1 and "trigger_count 3" in queued[0], "2 -> 3 allowed, 3 -> 4 not"
