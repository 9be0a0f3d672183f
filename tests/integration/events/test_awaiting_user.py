"""`awaiting_user` and receipts through the real intake, queues, workers, graphs and agents
and the WebSocket (scripted model only): an agent's yes/no question arrives marked as one
(`erwartet_antwort`), the person's "Ja" goes in as an ordinary message, and the answer to it
carries the receipt of the stored change (`aenderungen`)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from event_helpers import RESPONDER, post, script_answer

from novaberg.agents.registry import discover_agents
from novaberg.config import Settings
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store import keys
from novaberg.wire import FIELD_AWAITING, FIELD_CHANGES, MSG_RESPONSE

TASK = "Setz Milch auf die Einkaufsliste"
QUESTION = "Eine Einkaufsliste gibt es noch nicht. Soll ich sie anlegen?"
DONE = "Erledigt, Milch steht auf der neuen Einkaufsliste."


@pytest.fixture
async def runtime(
    settings: Settings, redis: aioredis.Redis, db: Any, model: ModelLayer
) -> AsyncIterator[GraphRuntime]:
    """The real graphs with the real task agents."""
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model)
    yield GraphRuntime(deps, registry=discover_agents())
    assert deps.log is not None
    await deps.log.close()


def responder_for(stimulus: str) -> str:
    return rf"{RESPONDER}.*\[AKTUELLER PROMPT\]\n{re.escape(stimulus)}$"


def script_shopping_list(scripted: ScriptedLLM) -> None:
    """The router sends the task to the notes agent, which finds no list and asks whether
    to create it; Nova asks that; the "Ja" resumes the agent without a router call."""
    script_answer(scripted, "Gern.")
    scripted.add(
        re.escape(TASK),
        {"management_action": "agent", "management_target": "notizen"},
        schema="RouterDecision",
    )
    scripted.add(
        "Äußerung des Nutzers: Setz Milch",
        {"action": "add_content", "target": "Einkaufsliste", "elemente": ["Milch"]},
        schema="NotesClassification",
    )
    scripted.add(responder_for(TASK), QUESTION)
    scripted.add(responder_for("Ja"), DONE)


async def accepted(http: httpx.AsyncClient, token: str, text: str) -> str:
    response = await post(http, token, text)
    assert response.status_code == 202, response.text
    return str(response.json()["nachrichten_id"])


async def test_a_yes_no_question_is_marked_and_the_answer_to_ja_carries_the_receipt(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    db: Any,
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_shopping_list(scripted)
    await workers()

    asked_id = await accepted(http, anna, TASK)
    asked = await ws.wait_for(
        lambda m: m.get("typ") == MSG_RESPONSE and m["nachrichten_ids"] == [asked_id]
    )
    assert asked["nachricht"] == QUESTION
    assert asked[FIELD_AWAITING] == {"typ": "awaiting_user", "agent": "notizen", "art": "ja_nein"}
    assert asked[FIELD_CHANGES] == []
    assert await redis.exists(keys.pending_agent("anna")), "the question waits for the answer"

    yes_id = await accepted(http, anna, "Ja")  # what the page's "Ja" button sends
    done = await ws.wait_for(
        lambda m: m.get("typ") == MSG_RESPONSE and m["nachrichten_ids"] == [yes_id]
    )
    assert done["nachricht"] == DONE
    assert done[FIELD_AWAITING] is None
    assert done[FIELD_CHANGES] == [
        {"agent": "notizen", "aktion": "create", "text": "Einkaufsliste: + Milch"}
    ]
    async with db.connection() as conn:
        row = await (await conn.execute("SELECT name, text FROM notizen WHERE aktiv")).fetchone()
    assert (row["name"], row["text"]) == ("Einkaufsliste", "Milch")
    print(
        "\nWebSocket, in order:",
        *[
            f"  {m['typ']}: {m.get('nachricht')!r} ids={m['nachrichten_ids']} "
            f"erwartet_antwort={m.get(FIELD_AWAITING)} aenderungen={m.get(FIELD_CHANGES)}"
            for m in ws.of(MSG_RESPONSE)
        ],
        sep="\n",
    )


async def test_a_plain_answer_awaits_nothing_and_stored_nothing(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Mir geht es gut.")
    scripted.add(".*", {"management_action": "", "management_target": ""}, schema="RouterDecision")
    await workers()
    message_id = await accepted(http, anna, "Wie geht es dir?")
    answer = await ws.wait_typ(MSG_RESPONSE)
    assert answer["nachrichten_ids"] == [message_id]
    assert answer[FIELD_AWAITING] is None
    assert answer[FIELD_CHANGES] == []
