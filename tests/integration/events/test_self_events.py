"""Self-events through the real queues and WebSocket (docs/behaviour/events.md#self-events):
after a heavy message Nova writes a second message of her own (seed 000 §6.6), a promise in
her answer is kept by a continue run whose router hands it to the research or delegation
agent (§6.4), the person writing first supersedes the second message, a plain "Hallo" gets
one answer, and the loop guard ends a chain of promises at 3. The scripted model plays a
perfect decision: perception, salience and the answers are scripted."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from event_helpers import RESPONDER, Socket, post, script_approval

from novaberg.agents.registry import discover_agents
from novaberg.config import Settings
from novaberg.events.model import build_event
from novaberg.events.queues import push_event
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys

PAIR = Pair("anna", "nova")

HEAVY = "Ich hab heute den Job verloren"
EMPATHY = "Oh nein, das tut mir so leid. Das ist ein harter Schlag."
FOLLOW_UP = "Willst du darüber reden?"

CALM_PERCEPTION = {
    "rational": {"intent": "smalltalk", "tone": "direkt", "thema": "Begrüßung"},
    "emotional": {"emotion": "freude", "arousal": 0.3},
}
HEAVY_PERCEPTION = {
    "rational": {"intent": "personal", "tone": "empathisch", "thema": "Jobverlust"},
    "emotional": {"emotion": "verzweiflung", "arousal": 0.8},
}


@pytest.fixture
async def runtime(
    settings: Settings, redis: aioredis.Redis, db: Any, model: ModelLayer
) -> AsyncIterator[GraphRuntime]:
    """The real graphs and task agents, with Nova's second messages switched on (the
    suite's settings switch them off: hash-derived perceptions would plan them at random)."""
    deps = GraphDeps(
        settings=settings.model_copy(update={"follow_ups": True}),
        redis=redis,
        pool=db,
        model=model,
    )
    yield GraphRuntime(deps, registry=discover_agents())
    assert deps.log is not None
    await deps.log.close()


def perceive(scripted: ScriptedLLM, text: str, output: dict[str, Any]) -> None:
    """What the person's `text` is perceived as (only the perception of exactly that text:
    the person's under `[AKTUELLER PROMPT]` at the end of the turn head, an answer under
    `[TEXT]`, which may close the prompt)."""
    own = rf"\[AKTUELLER PROMPT\]\n{re.escape(text)}\n\n.*Analysiere die Äußerung"
    scripted.add(
        rf"(?s)\[TEXT\]\n{re.escape(text)}(?:\n|$)|{own}", output, schema="PerceptionResult"
    )
    scripted.add(
        rf"(?s)\[TEXT\]\n{re.escape(text)}(?:\n|$)",
        {"salienz": 0.5, "intentionen": ["smalltalk"]},
        schema="SalienceScore",
    )


def answer(scripted: ScriptedLLM, stimulus_pattern: str, text: str, **kwargs: Any) -> None:
    """The responder answers `text` when its prompt matches `stimulus_pattern`."""
    scripted.add(rf"(?s)^(?=.*{RESPONDER})(?=.*{stimulus_pattern})", text, **kwargs)


def responses(ws: Socket) -> list[dict[str, Any]]:
    return ws.of("character_response")


async def next_response(ws: Socket) -> None:
    """Wait (bounded) for one more `character_response` than the socket holds now."""
    count = len(responses(ws))
    await ws.wait_for(lambda _message: len(responses(ws)) > count)


def transcript(ws: Socket) -> list[str]:
    """The answers and supersedes as the client saw them, in order (printed for the report)."""
    lines = []
    for m in ws.seen:
        if m.get("typ") == "character_response":
            lines.append(
                f"character_response turn={m['turn_id'][:8]} ids={m['nachrichten_ids']} "
                f"reiz_herkunft={m['reiz_herkunft']} "
                f"ausloeser={str(m.get('ausloeser_turn_id'))[:8]} | {m['nachricht']}"
            )
        elif m.get("typ") == "character_stage" and m.get("node") == "superseded":
            lines.append(f"character_stage superseded turn={m['turn_id'][:8]}")
    return lines


async def idle(redis: aioredis.Redis) -> None:
    """Wait (bounded) until the pair has no queued utterance, event or running turn."""
    for _ in range(1000):
        busy = (
            await redis.llen(keys.prompt_queue(PAIR))
            or await redis.llen(keys.event_queue(PAIR))
            or await redis.exists(keys.turn_marker(PAIR))
        )
        if not busy:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the pair never became idle")


async def accepted(http: httpx.AsyncClient, token: str, text: str) -> str:
    response = await post(http, token, text)
    assert response.status_code == 202, response.text
    return str(response.json()["nachrichten_id"])


async def test_a_heavy_message_gets_a_second_message_of_her_own(
    http, token, sockets, workers, scripted: ScriptedLLM, redis: aioredis.Redis
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_approval(scripted)
    perceive(scripted, HEAVY, HEAVY_PERCEPTION)
    answer(scripted, "", EMPATHY)
    answer(scripted, r"\[EIGENER GEDANKE\].*noch einmal nachfragen", FOLLOW_UP)
    await workers()
    asked = await accepted(http, anna, HEAVY)
    first = await ws.wait_typ("character_response")
    second = await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and m["seq"] != first["seq"]
    )
    await idle(redis)
    print("\n".join(transcript(ws)))
    assert (first["nachricht"], first["nachrichten_ids"]) == (EMPATHY, [asked])
    assert second["nachricht"] == FOLLOW_UP
    assert second["nachrichten_ids"] == [], "the second message answers no utterance"
    assert second["turn_id"] != first["turn_id"], "a turn of its own"
    assert second["reiz_herkunft"] == "eigener_impuls"
    assert second["ausloeser_turn_id"] == first["turn_id"]
    assert len(responses(ws)) == 2, "the follow-up run plans no third message"


async def test_a_plain_hallo_gets_one_answer(
    http, token, sockets, workers, scripted: ScriptedLLM, redis: aioredis.Redis, caplog
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_approval(scripted)
    perceive(scripted, "Hallo", CALM_PERCEPTION)
    answer(scripted, "", "Hallo! Schön, dass du da bist.")
    caplog.set_level(logging.INFO, logger="novaberg.events")
    await workers()
    await accepted(http, anna, "Hallo")
    await ws.wait_typ("character_response")
    await idle(redis)
    assert len(responses(ws)) == 1
    arrivals = [
        r.getMessage() for r in caplog.records if "self-trigger in result" in r.getMessage()
    ]
    assert len(arrivals) == 1 and "value=False" in arrivals[0], arrivals


async def test_the_person_writing_first_supersedes_the_second_message(
    http, token, sockets, workers, scripted: ScriptedLLM, redis: aioredis.Redis
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_approval(scripted)
    perceive(scripted, HEAVY, HEAVY_PERCEPTION)
    perceive(scripted, "Danke, geht schon", CALM_PERCEPTION)
    answer(scripted, "", EMPATHY)
    answer(scripted, r"\[AKTUELLER PROMPT\]\nDanke, geht schon$", "Gut. Ich bin da.")
    # the second message takes a while, so the person writes before it leaves
    answer(scripted, r"\[EIGENER GEDANKE\].*noch einmal nachfragen", FOLLOW_UP, latency_ms=1500)
    await workers()
    await accepted(http, anna, HEAVY)
    first = await ws.wait_typ("character_response")
    later = await accepted(http, anna, "Danke, geht schon")
    reply = await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and m["nachrichten_ids"] == [later]
    )
    await idle(redis)
    print("\n".join(transcript(ws)))
    superseded = [m for m in ws.of("character_stage") if m.get("node") == "superseded"]
    assert len(superseded) == 1 and superseded[0]["turn_id"] != first["turn_id"]
    assert [m["nachricht"] for m in responses(ws)] == [EMPATHY, reply["nachricht"]]
    assert FOLLOW_UP not in [m["nachricht"] for m in responses(ws)]


async def test_a_promise_starts_the_research_in_the_continue_run(
    http,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    db: Any,
    runtime: GraphRuntime,
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    question = "Wann hat der Wertstoffhof am Samstag offen?"
    script_approval(scripted)
    perceive(scripted, question, CALM_PERCEPTION)
    answer(scripted, "", "Gute Frage! Ich werde das für dich recherchieren.")
    answer(
        scripted,
        r"\[AUFGABE\].*Recherche zu",
        "Ich hab kurz nachgesehen, auf die Schnelle aber nichts Sicheres gefunden. Ich bleibe dran.",
    )
    await workers()
    await accepted(http, anna, question)
    first = await ws.wait_typ("character_response")
    second = await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and m["seq"] != first["seq"]
    )
    await idle(redis)
    print("\n".join(transcript(ws)))
    assert second["ausloeser_turn_id"] == first["turn_id"] and second["nachrichten_ids"] == []
    assert "nichts Sicheres" in second["nachricht"]
    assert runtime.deps.log is not None
    await runtime.deps.log.flush()
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT art, anlass, anliegen, status, bezug_turn_id, shadow_auftrag_id"
            " FROM delegation WHERE user_id = 'anna'"
        )
        cases = await cur.fetchall()
        cur = await conn.execute(
            "SELECT aufgabe, bezug_id, kontext FROM shadow_auftrag WHERE user_id = 'anna'"
        )
        tasks = await cur.fetchall()
        cur = await conn.execute(
            "SELECT inhalt FROM pipeline_log WHERE turn_id = %s AND node = 'router'",
            (second["turn_id"],),
        )
        routed = [row["inhalt"] for row in await cur.fetchall()]
    print("delegation:", cases, "\nshadow_auftrag:", tasks, "\nrouter:", routed)
    [case] = cases
    assert (case["art"], case["anlass"], case["status"]) == ("recherche", "zusage", "an_pixie")
    assert case["anliegen"] == question and case["bezug_turn_id"] == first["turn_id"]
    assert tasks == [{"aufgabe": "recherche", "bezug_id": first["turn_id"], "kontext": question}], (
        "no web provider: the slow part goes to the Pixie research job, once"
    )
    assert case["shadow_auftrag_id"] is not None
    assert routed and routed[0]["weg"] == "zusage", "the router recognised the commitment"


async def test_a_promise_to_take_care_asks_consent_before_a_case_is_opened(
    http, token, sockets, workers, scripted: ScriptedLLM, redis: aioredis.Redis, db: Any
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    matter = "Ich muss bis Freitag die Kündigung abschicken"
    script_approval(scripted)
    perceive(scripted, matter, CALM_PERCEPTION)
    perceive(scripted, "ja", CALM_PERCEPTION)
    answer(scripted, "", "Verstanden, ich kümmere mich darum.")
    answer(
        scripted,
        r"\[AUFGABE\].*Soll ich das für dich im Blick behalten",
        "Soll ich das für dich im Blick behalten?",
    )
    answer(scripted, r"\[AUFGABE\].*Übernommen", "Gut, ich behalte es im Blick.")
    await workers()
    await accepted(http, anna, matter)
    first = await ws.wait_typ("character_response")
    question = await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and m["seq"] != first["seq"]
    )
    await idle(redis)
    async with db.connection() as conn:
        before = await (await conn.execute("SELECT count(*) AS n FROM delegation")).fetchone()
    assert question["nachricht"].startswith("Soll ich") and before["n"] == 0, "asked, not done"
    yes = await accepted(http, anna, "ja")
    done = await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and m["nachrichten_ids"] == [yes]
    )
    await idle(redis)
    print("\n".join(transcript(ws)))
    async with db.connection() as conn:
        cur = await conn.execute("SELECT art, anlass, anliegen, status FROM delegation")
        cases = await cur.fetchall()
        cur = await conn.execute("SELECT aufgabe, bezug_id FROM shadow_auftrag")
        tasks = await cur.fetchall()
    assert done["nachricht"] == "Gut, ich behalte es im Blick."
    assert cases == [
        {"art": "delegation", "anlass": "zusage", "anliegen": matter, "status": "an_pixie"}
    ]
    assert tasks == [{"aufgabe": "delegation", "bezug_id": first["turn_id"]}]
    assert len(responses(ws)) == 3, "her report of the opened case promises nothing new"


async def test_the_loop_guard_stops_self_events_at_three_with_a_warning(
    token, sockets, workers, scripted: ScriptedLLM, redis: aioredis.Redis, caplog
) -> None:
    """Second messages that promise again, at trigger counts 2 and 3: 2 → 3 is queued (and
    that run keeps the promise through its agent), 3 → 4 is dropped loudly."""
    anna = await token("anna")
    ws = await sockets(anna)
    script_approval(scripted)
    answer(scripted, "", "Ich schau mal nach.")  # every answer promises again
    caplog.set_level(logging.INFO, logger="novaberg.events")
    for count in (2, 3):
        await push_event(
            redis,
            build_event(
                user_id="anna",
                character_id="nova",
                source="character",
                typ="continue",
                payload={
                    "turn_id": f"t-{count}",
                    "ausloeser_turn_id": f"t-{count - 1}",
                    "eigener_gedanke": "Ich möchte noch einmal nachfragen, wie es dir geht.",
                    "reiz_herkunft": "eigener_impuls",
                    "gedanke_arousal": 0.5,
                    "absicht": "nachfragen",
                },
                trigger_count=count,
            ),
        )
    await workers()
    for _ in range(3):  # t-2, t-3 and the continue t-2 queued
        await next_response(ws)
    await idle(redis)
    print("\n".join(transcript(ws)))
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "self-trigger dropped at the limit" in r.getMessage()
    ]
    assert len(warnings) == 1 and "pair=anna:nova" in warnings[0]
    assert (
        "trigger_count=3" in warnings[0] and "limit=3" in warnings[0] and "turn=t-3" in warnings[0]
    )
    queued = [r.getMessage() for r in caplog.records if "queued as" in r.getMessage()]
    assert len(queued) == 1 and "of turn t-2" in queued[0] and "trigger_count 3" in queued[0]
    assert "commitment recherche" in queued[0]
    [kept] = [m for m in responses(ws) if m["turn_id"] not in ("t-2", "t-3")]
    assert kept["ausloeser_turn_id"] == "t-2", "a turn of its own, naming the one it follows"
    assert len(responses(ws)) == 3, "the run that kept the promise through its agent stops"
