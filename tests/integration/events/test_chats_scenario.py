"""Two chats with Nova through the whole turn machinery (POST /chat → worker → WebSocket):
each chat's history holds only the turns asked in it, a turn in chat B never shows in
chat A, and her running conversation (the session the prompts read) is the open chat's."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import redis.asyncio as aioredis
from event_helpers import Socket, post, script_answer

from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import session


async def _history(http: httpx.AsyncClient, auth: dict[str, str], chat: str) -> list[str]:
    page = await http.get(f"/chats/{chat}/history", headers=auth)
    assert page.status_code == 200, page.text
    return [entry["eingabe"] for entry in page.json()["eintraege"]]


async def _written(http: httpx.AsyncClient, auth: dict[str, str], chat: str, count: int) -> None:
    """Guard: the chat's answered turns have reached the history (written a moment after
    the answer went out)."""
    deadline = time.monotonic() + 30
    while len(await _history(http, auth, chat)) < count:
        assert time.monotonic() < deadline, "the turn never reached the history"
        await asyncio.sleep(0.1)


async def _talk(http: httpx.AsyncClient, token: str, ws: Socket, text: str) -> None:
    accepted = await post(http, token, text)
    assert accepted.status_code == 202, accepted.text
    message = accepted.json()["nachrichten_id"]
    await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and message in m.get("nachrichten_ids", [])
    )


async def test_two_chats_keep_their_turns_apart(
    http: httpx.AsyncClient,
    token: Callable[[str], Awaitable[str]],
    sockets: Callable[..., Awaitable[Socket]],
    workers: Callable[..., Awaitable[Any]],
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
) -> None:
    anna = await token("anna")
    auth = {"Authorization": f"Bearer {anna}"}
    pair = Pair("anna", "nova")
    ws = await sockets(anna)
    script_answer(scripted, "Erzähl mehr!")
    await workers()

    first = (await http.get("/chats", params={"character_id": "nova"}, headers=auth)).json()
    chat_a = first["aktuell"]
    await _talk(http, anna, ws, "Ich male gern Aquarelle.")
    await _written(http, auth, chat_a, 1)

    created = await http.post("/chats", json={"character_id": "nova"}, headers=auth)
    chat_b = created.json()["id"]
    assert await session.read_turns(redis, pair) == []  # a new chat: a fresh conversation
    await _talk(http, anna, ws, "Was koche ich heute?")
    await _written(http, auth, chat_b, 1)
    said = [turn["inhalt"] for turn in await session.read_turns(redis, pair)]
    assert "Was koche ich heute?" in said and "Ich male gern Aquarelle." not in said

    assert await _history(http, auth, chat_a) == ["Ich male gern Aquarelle."]
    assert await _history(http, auth, chat_b) == ["Was koche ich heute?"]

    opened = await http.post(f"/chats/{chat_a}/open", headers=auth)
    assert opened.status_code == 200
    await _talk(http, anna, ws, "Heute ein Seestück.")
    await _written(http, auth, chat_a, 2)
    assert await _history(http, auth, chat_a) == ["Ich male gern Aquarelle.", "Heute ein Seestück."]
    assert await _history(http, auth, chat_b) == ["Was koche ich heute?"]
    said = [turn["inhalt"] for turn in await session.read_turns(redis, pair)]
    assert "Heute ein Seestück." in said and "Was koche ich heute?" not in said
    shown = (await http.get("/history/nova", headers=auth)).json()["eintraege"]
    assert [entry["eingabe"] for entry in shown] == [
        "Ich male gern Aquarelle.",
        "Heute ein Seestück.",
    ]
