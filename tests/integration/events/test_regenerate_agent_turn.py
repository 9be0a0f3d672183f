"""A new answer is refused for a turn in which a task agent acted: the run again would
repeat the agent's action (events/turn_controls.py). Real intake, queues, workers, graphs
and agents; scripted model only."""

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

TASK = "Setz Brot auf die Einkaufsliste"
ASKED = "Eine Einkaufsliste gibt es noch nicht. Soll ich sie anlegen?"


@pytest.fixture
async def runtime(
    settings: Settings, redis: aioredis.Redis, db: Any, model: ModelLayer
) -> AsyncIterator[GraphRuntime]:
    """The real graphs with the real task agents."""
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model)
    yield GraphRuntime(deps, registry=discover_agents())
    assert deps.log is not None
    await deps.log.close()


async def test_no_new_answer_after_an_agent_acted(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Gern.")
    scripted.add(
        re.escape(TASK),
        {"management_action": "agent", "management_target": "notizen"},
        schema="RouterDecision",
    )
    scripted.add(
        "Äußerung des Nutzers: Setz Brot",
        {"action": "add_content", "target": "Einkaufsliste", "elemente": ["Brot"]},
        schema="NotesClassification",
    )
    scripted.add(rf"{RESPONDER}.*\[AKTUELLER PROMPT\]\n{re.escape(TASK)}$", ASKED)
    await workers()
    sent = await post(http, anna, TASK)
    message_id = sent.json()["nachrichten_id"]
    answer = await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and m["nachrichten_ids"] == [message_id]
    )
    assert answer["nachricht"] == ASKED
    refused = await http.post(
        "/turns/nova/regenerate",
        json={"turn_id": answer["turn_id"]},
        headers={"Authorization": f"Bearer {anna}"},
    )
    assert refused.status_code == 409, refused.text
    assert refused.json()["detail"]["fehler"] == "agent_handelte"
    assert refused.json()["detail"]["meldung"].endswith(".")
