"""Payload rules at the boundary (seed 000 §3.1.1): impulses carry their own thought and
never a user_prompt; `gedanke_arousal` is a number in [0,1] or null — rejected and logged
otherwise, never clamped; a rejected event never runs."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
import redis.asyncio as aioredis

from novaberg.events.model import EventRejected, build_event, impulse_event, parse_event
from novaberg.events.queues import push_event
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys


def impulse_payload(**changes: Any) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "turn_id": "t-imp",
        "eigener_gedanke": "Ob Anna ihre Prüfung bestanden hat?",
        "reiz_herkunft": "eigener_impuls",
        "gedanke_arousal": 0.3,
        "ausloeser_turn_id": None,
    }
    payload.update(changes)
    return {k: v for k, v in payload.items() if v is not ...}


def impulse(**changes: Any):
    return build_event(
        user_id="anna",
        character_id="nova",
        source="character",
        typ="message",
        payload=impulse_payload(**changes),
    )


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (True, False),
        (False, False),
        (1.2, False),
        (-0.1, False),
        ("0.5", False),
        (None, True),
        (0.3, True),
        (0, True),
        (1, True),
    ],
)
def test_gedanke_arousal_is_validated_never_clamped(value: Any, ok: bool) -> None:
    if ok:
        event = impulse(gedanke_arousal=value)
        assert event.payload["gedanke_arousal"] == value
        assert "gedanke_arousal" in parse_event(event.wire()).payload
    else:
        with pytest.raises(EventRejected, match="gedanke_arousal"):
            impulse(gedanke_arousal=value)


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"gedanke_arousal": ...}, "gedanke_arousal"),
        ({"ausloeser_turn_id": ...}, "ausloeser_turn_id"),
        ({"user_prompt": "Hallo"}, "user_prompt"),
        ({"user_prompt": ""}, "user_prompt"),
        ({"eigener_gedanke": ""}, "eigener_gedanke"),
        ({"turn_id": ...}, "turn_id"),
    ],
    ids=[
        "no arousal",
        "no trigger turn",
        "user_prompt",
        "empty user_prompt",
        "no thought",
        "no turn_id",
    ],
)
def test_impulse_shape(changes: dict[str, Any], problem: str) -> None:
    with pytest.raises(EventRejected, match=problem):
        impulse(**changes)


def test_impulse_builder_creates_a_new_turn_and_keeps_null_fields() -> None:
    first = impulse_event("anna", "nova", "Gedanke", thought_arousal=None, trigger_turn_id=None)
    second = impulse_event("anna", "nova", "Gedanke", thought_arousal=0.4, trigger_turn_id="t0")
    assert first.turn_id != second.turn_id
    assert first.payload["gedanke_arousal"] is None and "ausloeser_turn_id" in first.payload
    assert "user_prompt" not in first.payload
    assert first.source == "character" and first.kind == "message" and first.is_impulse


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"source": "user", "typ": "message", "payload": {"turn_id": "t"}}, "nachrichten_ids"),
        ({"source": "user", "typ": "continue", "payload": {}}, "typ=message"),
        ({"source": "robot", "typ": "message", "payload": {}}, "source"),
        ({"source": "character", "typ": "continue", "payload": {}}, "turn_id"),
        (
            {
                "source": "character",
                "typ": "continue",
                "trigger_count": True,
                "payload": {"turn_id": "t"},
            },
            "trigger_count",
        ),
        (
            {
                "source": "character",
                "typ": "continue",
                "payload": {
                    "turn_id": "t",
                    "reiz_herkunft": "eigener_impuls",
                    "eigener_gedanke": "x",
                },
            },
            "gedanke_arousal",
        ),
    ],
    ids=[
        "user without ids",
        "user continue",
        "bad source",
        "continue without turn",
        "bool trigger_count",
        "retried impulse without arousal",
    ],
)
def test_event_rules(fields: dict[str, Any], problem: str) -> None:
    with pytest.raises(EventRejected, match=problem):
        build_event(user_id="anna", character_id="nova", **fields)


def test_wire_names_round_trip() -> None:
    event = impulse()
    wire = event.model_dump(by_alias=True)
    assert set(wire) == {
        "event_id",
        "user_id",
        "character_id",
        "source",
        "typ",
        "payload",
        "trigger_count",
        "erstellt_am",
    }
    assert parse_event(event.wire()) == event


async def test_a_rejected_impulse_is_logged_and_never_runs(
    workers, sockets, token, redis: aioredis.Redis, scripted: ScriptedLLM, caplog
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    raw = impulse().model_dump(by_alias=True)
    raw["payload"]["gedanke_arousal"] = 1.2  # a producer that skipped the model
    await redis.rpush(keys.event_queue(Pair("anna", "nova")), json.dumps(raw))
    await redis.sadd(keys.active_pairs(), "anna:nova")
    caplog.set_level(logging.ERROR, logger="novaberg.events")
    await workers()
    for _ in range(200):
        if not await redis.llen(keys.event_queue(Pair("anna", "nova"))):
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.3)
    assert scripted.calls == [], "the graph never ran"
    assert [m["typ"] for m in ws.seen] == ["verbindung"]
    assert any(
        "rejected" in r.getMessage() and "gedanke_arousal" in r.getMessage() for r in caplog.records
    )
    assert not await redis.exists(keys.turn_marker(Pair("anna", "nova")))


async def test_a_valid_impulse_is_answered_and_marked(
    workers, sockets, token, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    from event_helpers import script_answer

    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Sag mal, wie lief die Prüfung?")
    await push_event(redis, impulse(ausloeser_turn_id="t-before"))
    await workers()
    answer = await ws.wait_typ("character_response")
    assert answer["reiz_herkunft"] == "eigener_impuls"
    assert answer["nachrichten_ids"] == []
    assert answer["turn_id"] == "t-imp"
    assert answer["ausloeser_turn_id"] == "t-before"
    responder = [c["prompt"] for c in scripted.calls if "Antworte kurz" in c["prompt"]]
    assert any("Ob Anna ihre Prüfung bestanden hat?" in p for p in responder)
