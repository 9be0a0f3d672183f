"""Several tasks in one message, end to end (docs/behaviour/agents.md#several-tasks-in-one-message):
through the intake, the queues, the workers and the WebSocket, with the scripted model
playing a perfect decision — the router names every task, each classifier its own part.
Both stored, both confirmed; a question from one agent and the other's result in the same
answer, and the question answered in the next turn."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from event_helpers import Socket, post, script_approval
from psycopg_pool import AsyncConnectionPool

from novaberg.agents.pending import pending_question
from novaberg.agents.registry import discover_agents
from novaberg.config import Settings
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM

BREAD = "Schreib Brot auf die Einkaufsliste"
MEETING = "erinnere mich übermorgen an das Meeting"

RESPONDER = r"Antworte kurz und natürlich"
"""Matches only the responder's prompt (prompts/responder.txt [REGELN])."""

UNCONFIRMED = "Okay."
"""The responder's answer when its prompt does not carry the outcomes a test expects."""


@pytest.fixture
async def runtime(
    settings: Settings, redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> AsyncIterator[GraphRuntime]:
    """The workers' runtime with the real task agents (the shared fixture has none)."""
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model)
    yield GraphRuntime(deps, registry=discover_agents())
    assert deps.log is not None
    await deps.log.close()


def route(scripted: ScriptedLLM, utterance: str, *tasks: tuple[str, str]) -> None:
    """The router names every task of `utterance`, in the order it says them."""
    scripted.add(
        rf"\[AKTUELLER PROMPT\]\n{utterance}",
        {
            "needs_memory": False,
            "needs_timeline": True,
            "momentum": "mid",
            "management_action": "agent",
            "management_target": tasks[0][0],
            "management_tasks": [{"target": t, "text": text} for t, text in tasks],
        },
        schema="RouterDecision",
    )


def classify(scripted: ScriptedLLM, schema: str, part: str, **output: Any) -> None:
    """The agent's classifier, for exactly its own part of the utterance."""
    scripted.add(rf"Äußerung des Nutzers: {part}\n", output, schema=schema)


def answer_when(scripted: ScriptedLLM, must_read: list[str], text: str) -> None:
    """The responder says `text` only if its prompt carries every line of `must_read`."""
    scripted.add("".join(f"(?=.*{line})" for line in must_read) + ".*" + RESPONDER, text)


def script_meeting(scripted: ScriptedLLM) -> None:
    classify(
        scripted,
        "TimelineClassification",
        MEETING,
        action="create",
        target="Meeting",
        zeitausdruck="übermorgen",
    )


async def turn(
    http: httpx.AsyncClient, ws: Socket, token: str, text: str, seen: int = 0
) -> dict[str, Any]:
    """Send `text`; the next character_response after the `seen` earlier ones."""
    response = await post(http, token, text)
    assert response.status_code == 202, response.text
    message_id = response.json()["nachrichten_id"]
    return await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and message_id in m["nachrichten_ids"]
    )


async def stored(http: httpx.AsyncClient, token: str) -> tuple[list[Any], list[Any]]:
    """What the person sees in the tasks panel: active notes and timeline entries."""
    headers = {"Authorization": f"Bearer {token}"}
    notes = (await http.get("/agents/notes", headers=headers)).json()
    entries = (await http.get("/agents/timeline", headers=headers)).json()
    return notes, entries


def overmorrow(settings: Settings) -> str:
    return (datetime.now(settings.tz) + timedelta(days=2)).strftime("%d.%m.%Y")


def printed(ws: Socket) -> None:
    """The scenario's observable outcome, in the order the socket received it."""
    for message in ws.seen:
        if message.get("typ") == "character_stage":
            print("stage", message.get("graph"), message.get("node"))
        elif message.get("typ") == "character_response":
            print("character_response", json.dumps(message["nachricht"], ensure_ascii=False))
        else:
            print(message.get("typ"))


async def test_a_list_item_and_an_appointment_both_stored_and_confirmed(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM, settings: Settings
) -> None:
    """Seed §6.3: notes agent → back to the planner → timeline agent → back → the answer
    confirms both."""
    said = f"{BREAD} und {MEETING}"
    script_approval(scripted)
    scripted.add(RESPONDER, UNCONFIRMED)
    route(scripted, said, ("notizen", BREAD), ("timeline", MEETING))
    classify(
        scripted,
        "NotesClassification",
        BREAD,
        action="create",
        target="Einkaufsliste",
        elemente=["Brot"],
    )
    script_meeting(scripted)
    confirmed = "Brot steht auf deiner Einkaufsliste, und das Meeting übermorgen ist eingetragen."
    answer_when(
        scripted,
        [
            r"1\. notizen — erledigt: Notiz 'Einkaufsliste' angelegt: Brot\.",
            r"2\. timeline — erledigt: 'Meeting' eingetragen",
        ],
        confirmed,
    )
    anna = await token("anna")
    ws = await sockets(anna)
    await workers()
    answer = await turn(http, ws, anna, said)
    printed(ws)
    assert answer["nachricht"] == confirmed
    notes, entries = await stored(http, anna)
    assert [(n["name"], n["text"]) for n in notes] == [("Einkaufsliste", "Brot")]
    assert [(e["title"], e["datum_lokal"]) for e in entries] == [("Meeting", overmorrow(settings))]
    agents_ran = [
        m["node"]
        for m in ws.seen
        if m.get("typ") == "character_stage" and m.get("node") in ("planner", "agent_dispatch")
    ]
    assert agents_ran == ["planner", "agent_dispatch", "planner", "agent_dispatch", "planner"]


async def test_three_requests_to_two_agents(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM, settings: Settings
) -> None:
    """Two items for one list are one task (one notes run); a second list is a task of its
    own (a second notes run); the appointment is the third."""
    shopping = "Schreib Brot und Milch auf die Einkaufsliste"
    todo = "setz Reifen wechseln auf die To-do-Liste"
    said = f"{shopping}, {todo} und {MEETING}"
    script_approval(scripted)
    scripted.add(RESPONDER, UNCONFIRMED)
    route(scripted, said, ("notizen", shopping), ("notizen", todo), ("timeline", MEETING))
    classify(
        scripted,
        "NotesClassification",
        shopping,
        action="create",
        target="Einkaufsliste",
        elemente=["Brot", "Milch"],
    )
    classify(
        scripted,
        "NotesClassification",
        todo,
        action="create",
        target="To-do-Liste",
        elemente=["Reifen wechseln"],
    )
    script_meeting(scripted)
    confirmed = "Brot und Milch stehen auf der Einkaufsliste, Reifen wechseln auf der To-do-Liste, und das Meeting ist eingetragen."
    answer_when(
        scripted,
        [
            r"1\. notizen — erledigt: Notiz 'Einkaufsliste' angelegt: Brot, Milch\.",
            r"2\. notizen — erledigt: Notiz 'To-do-Liste' angelegt: Reifen wechseln\.",
            r"3\. timeline — erledigt: 'Meeting' eingetragen",
        ],
        confirmed,
    )
    anna = await token("anna")
    ws = await sockets(anna)
    await workers()
    answer = await turn(http, ws, anna, said)
    printed(ws)
    assert answer["nachricht"] == confirmed
    notes, entries = await stored(http, anna)
    assert sorted((n["name"], n["text"]) for n in notes) == [
        ("Einkaufsliste", "Brot, Milch"),
        ("To-do-Liste", "Reifen wechseln"),
    ]
    assert [(e["title"], e["datum_lokal"]) for e in entries] == [("Meeting", overmorrow(settings))]


async def test_one_agent_asks_back_while_the_other_completes(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    settings: Settings,
    redis: aioredis.Redis,
) -> None:
    """The list does not exist yet: the notes agent asks whether to create it, the timeline
    agent stores the meeting; the answer says both. The notes agent waits for the answer
    (the open question); the next "ja" creates the list, and only the notes agent runs."""
    said = f"Setz Brot auf die Einkaufsliste und {MEETING}"
    script_approval(scripted)
    scripted.add(RESPONDER, UNCONFIRMED)
    route(scripted, said, ("notizen", "Setz Brot auf die Einkaufsliste"), ("timeline", MEETING))
    classify(
        scripted,
        "NotesClassification",
        "Setz Brot auf die Einkaufsliste",
        action="add_content",
        target="Einkaufsliste",
        elemente=["Brot"],
    )
    script_meeting(scripted)
    both = (
        "Das Meeting ist eingetragen. Eine Einkaufsliste gibt es noch nicht – soll ich sie anlegen?"
    )
    answer_when(
        scripted,
        [
            r"1\. notizen — Rückfrage: Es gibt noch keine Notiz 'Einkaufsliste'\. Soll ich sie anlegen\?",
            r"2\. timeline — erledigt: 'Meeting' eingetragen",
            r"Stelle am Ende genau diese Rückfrage",
        ],
        both,
    )
    created = "Erledigt, Brot steht auf der neuen Einkaufsliste."
    answer_when(scripted, [r"notizen: Notiz 'Einkaufsliste' angelegt: Brot\."], created)
    anna = await token("anna")
    ws = await sockets(anna)
    await workers()
    first = await turn(http, ws, anna, said)
    assert first["nachricht"] == both
    notes, entries = await stored(http, anna)
    assert notes == []
    assert [(e["title"], e["datum_lokal"]) for e in entries] == [("Meeting", overmorrow(settings))]
    pending = await pending_question(redis, "anna")
    assert pending is not None and pending["agent_name"] == "notizen"

    timeline_calls = sum(1 for c in scripted.calls if c["schema"] == "TimelineClassification")
    second = await turn(http, ws, anna, "ja")
    printed(ws)
    assert second["nachricht"] == created
    notes, entries = await stored(http, anna)
    assert [(n["name"], n["text"]) for n in notes] == [("Einkaufsliste", "Brot")]
    assert len(entries) == 1
    assert sum(1 for c in scripted.calls if c["schema"] == "TimelineClassification") == (
        timeline_calls
    )
    assert await pending_question(redis, "anna") is None
