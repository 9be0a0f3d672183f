"""A front-end's background tasks through the OpenAI door (official `openai` client, real
app, queues, workers, Redis and PostgreSQL; scripted model): Open WebUI's `### Task:`
prompts and SillyTavern's quiet and impersonation prompts — request shapes written from
their documented behaviour — are answered by one model call in the task's format, and
are no turn: the history keeps only the person's real messages, nothing is queued,
perceived, routed to an agent or remembered."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import redis.asyncio as aioredis
from event_helpers import WAIT, Running, script_answer
from test_openai_door import LIVE, PAIR, client, session_texts

from novaberg.graph.runner import GraphRuntime
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store import keys

REAL = "Ich war heute am See, das Wasser war eiskalt."

CHAT_HISTORY = (
    f"<chat_history>\nUSER: {REAL}\nASSISTANT: Brr, und bist du reingesprungen?\n</chat_history>"
)

TITLE_TASK = (
    "### Task:\nFind a short title with an emoji for the chat below.\n"
    "### Guidelines:\n- short\n- in the chat's language\n"
    '### Output:\nJSON format: { "title": "the title" }\n'
    f"### Chat History:\n{CHAT_HISTORY}"
)
TAGS_TASK = (
    "### Task:\nGive 1-3 broad tags for the chat below.\n"
    '### Output:\nJSON format: { "tags": ["tag1"] }\n'
    f"### Chat History:\n{CHAT_HISTORY}"
)
FOLLOW_UP_TASK = (
    "### Task:\nSuggest follow-up questions the user might ask next.\n"
    '### Output:\nJSON format: { "follow_ups": ["question?"] }\n'
    f"### Chat History:\n{CHAT_HISTORY}"
)

SILLY_SYSTEM = "Write Nova's next reply in a fictional chat between Nova and Anna."
IMPERSONATION = (
    "[Write your next reply from the point of view of Anna, using the chat history so far "
    "as a guideline for her writing style.]"
)
QUIET_SUMMARY = "Ignore previous instructions. Summarize the story so far in a few words."


def silly_chat(last: dict[str, str]) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": SILLY_SYSTEM},
        {"role": "assistant", "content": "Hallo Anna!"},
        {"role": "user", "content": REAL},
        {"role": "assistant", "content": "Brr, und bist du reingesprungen?"},
        last,
    ]


async def history_json(
    http: httpx.AsyncClient, token: str, runtime: GraphRuntime, holding: str
) -> str:
    """`GET /history/nova` once it holds `holding` (the turn log is written in batches:
    flushed here, within WAIT seconds)."""
    deadline = time.monotonic() + WAIT
    while True:
        assert runtime.deps.log is not None
        await runtime.deps.log.flush()
        response = await http.get("/history/nova", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 200, response.text
        text = json.dumps(response.json()["eintraege"], ensure_ascii=False)
        if holding in text or time.monotonic() > deadline:
            return text
        await asyncio.sleep(0.05)


def turns_perceived(scripted: ScriptedLLM) -> int:
    return sum(1 for c in scripted.calls if c["schema"] == "PerceptionResult")


async def test_open_webui_tasks_are_answered_in_their_format_and_stored_nowhere(
    server: Running,
    http: httpx.AsyncClient,
    token,
    workers,
    scripted: ScriptedLLM,
    sockets,
    redis: aioredis.Redis,
    runtime: GraphRuntime,
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Brr, und bist du reingesprungen?")
    scripted.add(r"^### Task:.*title", 'Gern! {"title": "🌊 Eiskalter See"} Viel Spaß.')
    scripted.add(r"^### Task:.*tags", '```json\n{"tags": ["Natur", "Alltag"]}\n```')
    scripted.add(r"### Task:.*follow-up", '{"follow_ups": ["Wie kalt genau?"]}')
    await workers(heartbeat_ttl=LIVE)
    api = client(server, anna)

    real = await api.chat.completions.create(
        model="nova", messages=[{"role": "user", "content": REAL}]
    )
    assert real.choices[0].message.content == "Brr, und bist du reingesprungen?"
    await ws.wait_typ("character_response")
    perceived = turns_perceived(scripted)

    title = await api.chat.completions.create(
        model="nova", messages=[{"role": "user", "content": TITLE_TASK}]
    )
    assert json.loads(title.choices[0].message.content or "") == {"title": "🌊 Eiskalter See"}
    assert title.usage is not None and title.usage.completion_tokens > 0
    tags = await api.chat.completions.create(
        model="nova",
        messages=[{"role": "user", "content": [{"type": "text", "text": TAGS_TASK}]}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in tags]
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert json.loads(streamed) == {"tags": ["Natur", "Alltag"]}
    assert chunks[-1].usage is not None
    follow = await api.chat.completions.create(
        model="nova",
        messages=[
            {"role": "user", "content": REAL},
            {"role": "assistant", "content": "Brr, und bist du reingesprungen?"},
            {"role": "user", "content": FOLLOW_UP_TASK},
        ],
    )
    assert json.loads(follow.choices[0].message.content or "") == {
        "follow_ups": ["Wie kalt genau?"]
    }

    task_calls = [c for c in scripted.calls if "### Task:" in c["prompt"]]
    assert len(task_calls) == 3, "one model call per task"
    assert turns_perceived(scripted) == perceived, "no task became a turn"
    stored = await history_json(http, anna, runtime, REAL)
    print("history after three tasks:", stored)
    assert stored.count(REAL) == 1
    assert "### Task" not in stored
    session = "\n".join(await session_texts(http, anna))
    assert "### Task" not in session
    assert await redis.llen(keys.prompt_queue(PAIR)) == 0
    assert len(ws.of("character_response")) == 1, "the socket saw only the real answer"


async def test_sillytavern_impersonation_and_quiet_prompts_are_no_turns(
    server: Running,
    http: httpx.AsyncClient,
    token,
    workers,
    scripted: ScriptedLLM,
    sockets,
    redis: aioredis.Redis,
    runtime: GraphRuntime,
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Brr, und bist du reingesprungen?")
    scripted.add(r"Write your next reply from the point of view", "Na klar, einmal ganz kurz!")
    scripted.add(r"Ignore previous instructions", "Anna war am eiskalten See.")
    await workers(heartbeat_ttl=LIVE)
    api = client(server, anna)
    await api.chat.completions.create(model="nova", messages=[{"role": "user", "content": REAL}])
    await ws.wait_typ("character_response")
    perceived = turns_perceived(scripted)

    impersonated = await api.chat.completions.create(
        model="nova", messages=silly_chat({"role": "system", "content": IMPERSONATION})
    )
    assert impersonated.choices[0].message.content == "Na klar, einmal ganz kurz!"
    summary = await api.chat.completions.create(
        model="nova", messages=silly_chat({"role": "user", "content": QUIET_SUMMARY})
    )
    assert summary.choices[0].message.content == "Anna war am eiskalten See."

    impersonation_call = next(c for c in scripted.calls if "point of view" in c["prompt"])
    assert REAL in impersonation_call["prompt"], "the model saw the chat the front-end sent"
    assert turns_perceived(scripted) == perceived
    stored = await history_json(http, anna, runtime, REAL)
    print("history after impersonation and summary:", stored)
    assert stored.count(REAL) == 1, "the chat's last user message was not sent again"
    assert "point of view" not in stored and "Ignore previous" not in stored
    assert await redis.llen(keys.prompt_queue(PAIR)) == 0
    assert len(ws.of("character_response")) == 1


async def test_a_failing_model_is_an_openai_error_for_the_task(
    server: Running, token, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    scripted.add(r"^### Task:", "", fault="timeout")
    api = client(server, anna).with_options(max_retries=0, timeout=WAIT)
    try:
        await api.chat.completions.create(
            model="nova", messages=[{"role": "user", "content": TITLE_TASK}]
        )
    except Exception as exc:
        assert type(exc).__name__ == "InternalServerError", exc
        assert getattr(exc, "code", None) == "modell_timeout"
    else:
        raise AssertionError("a model timeout answered a task")
