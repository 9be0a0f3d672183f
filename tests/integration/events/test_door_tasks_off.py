"""With NOVABERG_DOOR_TASK_RECOGNITION off, a front-end's task prompt is what it was
before: the person's message, a turn like any other."""

from __future__ import annotations

import httpx
import pytest
from event_helpers import Running, script_answer
from test_door_tasks import TITLE_TASK, history_json
from test_openai_door import LIVE, client

from novaberg.config import Settings
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.scripted import ScriptedLLM


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"door_task_recognition": False})


async def test_without_recognition_a_task_prompt_is_a_turn(
    server: Running,
    http: httpx.AsyncClient,
    token,
    workers,
    scripted: ScriptedLLM,
    runtime: GraphRuntime,
) -> None:
    anna = await token("anna")
    script_answer(scripted, "Ein Titel? Wofür denn?")
    await workers(heartbeat_ttl=LIVE)
    answer = await client(server, anna).chat.completions.create(
        model="nova", messages=[{"role": "user", "content": TITLE_TASK}]
    )
    assert answer.choices[0].message.content == "Ein Titel? Wofür denn?"
    assert "### Task" in await history_json(http, anna, runtime, "### Task")
