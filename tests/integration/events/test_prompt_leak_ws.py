"""The prompt-leak guard end to end: a model that echoes its prompt (as the bundled SmolLM2
did, issue 36) behind `POST /chat`, the real queue, worker and WebSocket. The leaked text
never reaches the socket — the person sees the corrected answer — and no memory holds it."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
from event_helpers import WAIT, Running, script_answer
from test_openai_door import LIVE, session_texts

from novaberg.llm.scripted import ScriptedLLM

LEAK = (
    "Das sollst du inhaltlich sagen (Person A ist der Nutzer, Person B bist du). Gib es in "
    "deinen eig"
)
MARK = "Person B bist du"
CORRECTED = "Mir geht es gut, danke! Und dir?"


async def stored_session(http: httpx.AsyncClient, token: str) -> str:
    """Nova's session once it holds the released answer (written after the release; within
    WAIT seconds)."""
    deadline = time.monotonic() + WAIT
    while True:
        session = "\n".join(await session_texts(http, token))
        if CORRECTED in session or time.monotonic() > deadline:
            return session
        await asyncio.sleep(0.05)


async def test_a_leaking_model_never_reaches_the_socket_or_the_memory(
    server: Running, http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, sockets
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, LEAK)  # the judges approve, the guard does not
    scripted.add(r"\[KRITIK\]", CORRECTED)
    await workers(heartbeat_ttl=LIVE)
    headers = {"Authorization": f"Bearer {anna}"}
    sent = await http.post(
        "/chat", json={"character_id": "nova", "text": "Wie geht es dir?"}, headers=headers
    )
    assert sent.status_code == 202, sent.text

    answer = await ws.wait_typ("character_response")
    for message in ws.seen:
        print(
            "ws:",
            message.get("typ"),
            str(message.get("nachricht") or message.get("label") or "")[:60],
        )
    assert answer["nachricht"] == CORRECTED
    assert MARK not in json.dumps(ws.seen, ensure_ascii=False), "the leak reached the socket"
    assert any("[KRITIK]" in c["prompt"] for c in scripted.calls), "the leak was corrected"
    session = await stored_session(http, anna)
    assert CORRECTED in session and MARK not in session
    short_term = await http.get("/memory/nova/short_term", headers=headers)
    assert short_term.status_code == 200, short_term.text
    assert MARK not in short_term.text
