"""The OpenAI door: an identical resend of the last user message (Open WebUI's "Try
Again", SillyTavern's regenerate/swipe) is a regenerate of that turn — a new answer, the
message stored once — while the same words written again after Nova's answer are a new
message (api/door_resend.py). Real app, queues, workers, graphs; scripted model only."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from event_helpers import WAIT, Running, Socket, script_answer
from openai import AsyncOpenAI

from novaberg.llm.scripted import ScriptedLLM

LIVE = 30.0
"""Heartbeat TTL of the workers (the door answers 503 when no worker beats)."""

QUESTION = "Erzähl mir von deinem Tag."
FIRST = "Mein Tag war ruhig, ich habe gelesen."
SECOND = "Heute war viel los, ich war draußen am See."


def client(server: Running, token: str) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=f"{server.url}/v1", api_key=token, timeout=WAIT)


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def session(http: httpx.AsyncClient, token: str, turns: int = 2) -> list[tuple[str, str]]:
    """The session once the last run has stored its answer (the post-run follows the
    release; waited for up to WAIT as a guard), or as it is then."""
    deadline = asyncio.get_running_loop().time() + WAIT
    while True:
        response = await http.get("/memory/nova/session", headers=auth(token))
        assert response.status_code == 200, response.text
        found = [(str(t.get("rolle")), str(t.get("inhalt", ""))) for t in response.json()["turns"]]
        if len(found) >= turns or asyncio.get_running_loop().time() > deadline:
            return found
        await asyncio.sleep(0.05)


def human_runs(ws: Socket) -> int:
    """How many HumanGraph runs (Path 1: the person's words perceived and stored) the
    socket saw."""
    return len({m["turn_id"] for m in ws.of("character_stage") if m.get("graph") == "human"})


async def history(http: httpx.AsyncClient, token: str) -> list[tuple[str, str]]:
    """The history once the newest row is written (rows are flushed every second; waited
    for up to WAIT as a guard)."""
    deadline = asyncio.get_running_loop().time() + WAIT
    while True:
        response = await http.get("/history/nova", headers=auth(token))
        found = [(e["eingabe"], e["nachricht"]) for e in response.json()["eintraege"]]
        if (found and found[-1][1] == SECOND) or asyncio.get_running_loop().time() > deadline:
            return found
        await asyncio.sleep(0.1)


def script_two(scripted: ScriptedLLM) -> None:
    script_answer(scripted, SECOND)
    script_answer(scripted, FIRST, times=1)


async def test_official_client_resend_is_a_regenerate(
    server: Running, http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, sockets
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_two(scripted)
    await workers(heartbeat_ttl=LIVE)
    nova = client(server, anna)
    conversation: list[Any] = [{"role": "user", "content": QUESTION}]
    first = await nova.chat.completions.create(model="nova", messages=conversation)
    assert first.choices[0].message.content == FIRST
    # "Try Again": the same messages again, the answer it replaces cut off
    again = await nova.chat.completions.create(model="nova", messages=conversation)
    assert again.choices[0].message.content == SECOND
    assert again.id == first.id, "the same message answered again"
    assert await session(http, anna) == [("user", QUESTION), ("assistant", SECOND)]
    assert human_runs(ws) == 1, "the message was not stored or perceived again"
    variants = await ws.wait_typ("antwort_varianten")
    assert variants["texte"] == [FIRST] and variants["gewaehlt"] is None
    kept = await http.get("/turns/nova/variants", headers=auth(anna))
    assert kept.json()["texte"] == [FIRST, SECOND] and kept.json()["gewaehlt"] == 1


async def test_same_words_after_the_answer_are_a_new_message(
    server: Running, http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    script_two(scripted)
    await workers(heartbeat_ttl=LIVE)
    nova = client(server, anna)
    first = await nova.chat.completions.create(
        model="nova", messages=[{"role": "user", "content": QUESTION}]
    )
    await nova.chat.completions.create(
        model="nova",
        messages=[
            {"role": "user", "content": QUESTION},
            {"role": "assistant", "content": first.choices[0].message.content},
            {"role": "user", "content": QUESTION},
        ],
    )
    assert await session(http, anna, 4) == [
        ("user", QUESTION),
        ("assistant", FIRST),
        ("user", QUESTION),
        ("assistant", SECOND),
    ]


async def test_sillytavern_swipe_shape_streamed(
    server: Running, http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM
) -> None:
    """SillyTavern's swipe: system prompt, the earlier exchange, the last user message again
    (the swiped answer cut off), streamed, with its sampler fields."""
    anna = await token("anna")
    script_two(scripted)
    await workers(heartbeat_ttl=LIVE)
    body: dict[str, Any] = {
        "model": "nova",
        "messages": [
            {"role": "system", "content": "Write Nova's next reply in a fictional chat."},
            {"role": "user", "content": QUESTION},
        ],
        "stream": False,
        "temperature": 1,
        "max_tokens": 300,
    }
    first = await http.post("/v1/chat/completions", json=body, headers=auth(anna), timeout=WAIT)
    assert first.status_code == 200, first.text
    body["stream"] = True
    async with http.stream(
        "POST", "/v1/chat/completions", json=body, headers=auth(anna), timeout=WAIT
    ) as streamed:
        assert streamed.status_code == 200
        chunks = [
            json.loads(line[6:])
            async for line in streamed.aiter_lines()
            if line.startswith("data: {")
        ]
    text = "".join(
        c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices")
    )
    assert text == SECOND
    assert await session(http, anna) == [("user", QUESTION), ("assistant", SECOND)]
    assert await history(http, anna) == [(QUESTION, SECOND)]
