"""A stored knowledge gap through the real app, queues, consumers, graphs and WebSocket
(scripted model only): the composer is offered the open question as `[OFFENE-FRAGEN]`, the
answer that takes it up is delivered, the uptake row names the question and the gap is
closed; the conversation vector's stored trace counts it as a knowledge gap."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import httpx
import redis.asyncio as aioredis
from event_helpers import post, script_answer
from psycopg_pool import AsyncConnectionPool

from novaberg.impulses import shadow_queue
from novaberg.impulses.shadow_queue import ShadowTask
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys

PAIR = Pair("anna", "nova")
QUESTION = "Everest: Wie hoch ist der Mount Everest?"


async def test_an_open_question_is_offered_taken_up_and_closed(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
) -> None:
    gap_id, _ = await shadow_queue.push(
        db,
        ShadowTask("anna", "nova", "wissensluecken", "Everest", "Wie hoch ist der Mount Everest?"),
        datetime.now(UTC),
    )
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, QUESTION)  # the answer says exactly the open question's text
    # a reading without open points of its own: the open question is the turn's only gap
    scripted.add(
        ".*", {"gegenstand": "Berge", "offen": [], "objekte": []}, schema="SituationReading"
    )
    response = await post(http, anna, "Weißt du eigentlich inzwischen mehr über Berge?")
    assert response.status_code == 202, response.text
    await workers()
    answer = await ws.wait_typ("character_response")
    await ws.wait_for(lambda m: m.get("node") == "dispatcher" and m.get("graph") == "character")
    print("websocket:", [(m["typ"], m.get("graph"), m.get("node")) for m in ws.seen])
    assert answer["nachricht"] == QUESTION and not ws.of("turn_gescheitert")

    [prompt] = [c["prompt"] for c in scripted.calls if "Du bereitest den Inhalt" in c["prompt"]]
    offered = prompt.split("[OFFENE-FRAGEN]", 1)[1].split("\n\n", 1)[0]
    print("offered:", offered)
    assert f"- {QUESTION}" in offered.splitlines()

    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT turn_id, angeboten, aufgegriffen, frage_id FROM offene_fragen_aufgriff"
        )
        [row] = await cur.fetchall()
    print("uptake row:", dict(row))
    assert row["turn_id"] == answer["turn_id"] and row["angeboten"] == 1
    assert row["aufgegriffen"] is True and row["frage_id"] == f"auftrag-{gap_id}"
    left = await shadow_queue.for_pair(db, "anna", "nova")
    assert [r for r in left if r["aufgabe"] == "wissensluecken"] == [], "closed: taken up"

    stored = json.loads(await redis.get(keys.hypothesis_detail(PAIR)))
    print("gv:detail:", {k: stored[k] for k in ("neugier", "neugier_anteile", "farbton")})
    assert [g["id"] for g in stored["wissensluecken"]] == [f"auftrag-{gap_id}"]
    assert stored["neugier_anteile"]["luecken"] == 0.1
