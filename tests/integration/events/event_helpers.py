"""Helpers for the event-model tests (imported by conftest and the tests)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import redis.asyncio as aioredis
from websockets.asyncio.client import ClientConnection

from novaberg.events.intake import pair_from_member
from novaberg.store import keys

WAIT = 20.0
"""Upper bound for anything a test waits for (a bound, not a timing assertion)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Running:
    url: str
    app: Any

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://") + "/ws"


async def processing_entries(redis: aioredis.Redis, worker_id: str) -> list[str]:
    """Every entry in a worker's processing lists (one per pair, named by its index)."""
    found: list[str] = []
    for member in await redis.smembers(keys.processing_index(worker_id)):
        pair = pair_from_member(str(member))
        found += await redis.lrange(keys.processing_list(pair, worker_id), 0, -1)
    return found


async def post(
    http: httpx.AsyncClient, token: str, text: str, character: str = "nova", **extra: Any
) -> httpx.Response:
    return await http.post(
        "/chat",
        json={"character_id": character, "text": text, **extra},
        headers={"Authorization": f"Bearer {token}"},
    )


class Socket:
    """A WebSocket client that keeps every message it received."""

    def __init__(self, conn: ClientConnection) -> None:
        self.conn = conn
        self.seen: list[dict[str, Any]] = []
        self._reader = asyncio.create_task(self._read())
        self._arrived = asyncio.Event()

    async def _read(self) -> None:
        try:
            async for raw in self.conn:
                self.seen.append(json.loads(raw))
                self._arrived.set()
        except Exception:
            return

    def of(self, typ: str) -> list[dict[str, Any]]:
        return [m for m in self.seen if m.get("typ") == typ]

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = WAIT
    ) -> dict[str, Any]:
        async def scan() -> dict[str, Any]:
            index = 0
            while True:
                while index < len(self.seen):
                    if predicate(self.seen[index]):
                        return self.seen[index]
                    index += 1
                self._arrived.clear()
                if self._reader.done():
                    raise AssertionError(f"socket closed; saw {self.seen}")
                await self._arrived.wait()

        return await asyncio.wait_for(scan(), timeout)

    async def wait_typ(self, typ: str, timeout: float = WAIT) -> dict[str, Any]:
        return await self.wait_for(lambda m: m.get("typ") == typ, timeout)

    async def close(self) -> None:
        await self.conn.close()
        self._reader.cancel()


RESPONDER = r"Antworte kurz und natürlich"
"""Matches only the responder's prompt (prompts/responder.txt [REGELN])."""


APPROVE = {"score": 0.05, "direktiven_score": 0.05, "begruendung": ""}

CONVERSATION = {"needs_memory": True, "momentum": "mid", "management_action": ""}
"""The router's plain answer: talk, no task agent. Without it the scripted model derives
the decision from a hash of the prompt (which holds the date), and a turn in which an agent
happened to act is never superseded."""


def script_approval(scripted: Any) -> None:
    """The router routes to conversation; tribunal and thinker let every answer pass
    unchanged (no hash-dependent agents or corrections)."""
    scripted.add(".*", CONVERSATION, schema="RouterDecision")
    for schema in ("JuristVerdict", "PsychologistVerdict", "EthicistVerdict"):
        scripted.add(".*", APPROVE, schema=schema)
    scripted.add(
        ".*", {"ergebnis": "OK", "probleme": "", "korrigierte_antwort": ""}, schema="ThinkerCheck"
    )


def script_answer(scripted: Any, text: str, **kwargs: Any) -> None:
    """The responder answers `text` (kwargs: latency_ms, fault, times); the tribunal and the
    thinker approve. Later calls add rules in front of earlier ones."""
    if not any(r.schema == "JuristVerdict" for r in scripted.rules):
        script_approval(scripted)
    scripted.add(RESPONDER, text, **kwargs)
