"""A refused upload is answered, not reset: the client of a large import refused with 429
(another import of the person's still runs, or the write bucket is empty) reads the 429 and
its `Retry-After`, over a real socket — an HTTP client sends the whole body before it reads,
so closing the connection under a body still arriving would reset it unread."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import httpx
import pytest
from event_helpers import WAIT, Running

from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedEmbedder, ScriptedLLM

LARGE = 12 * 1024 * 1024
"""Far more than the sockets' buffers hold: the client is still sending when refused."""


class HeldEmbedder(ScriptedEmbedder):
    """Embeds only once released; says when the first import reached it."""

    def __init__(self) -> None:
        super().__init__(384)
        self.reached = asyncio.Event()
        self.released = asyncio.Event()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.reached.set()
        await self.released.wait()
        return await super().embed(texts)


@pytest.fixture
def held() -> HeldEmbedder:
    return HeldEmbedder()


@pytest.fixture
def model(scripted: ScriptedLLM, held: HeldEmbedder) -> ModelLayer:
    return ModelLayer(scripted, held)


def chat_lines(count: int, pad: int = 0) -> bytes:
    lines = [
        json.dumps({"id": f"t{i}", "speaker": "user", "text": f"Satz {i}", "time": i + 1})
        for i in range(count)
    ]
    return ("\n".join(lines) + "\n" + " " * pad).encode()


async def test_a_large_import_refused_while_another_runs_reads_its_429(
    server: Running, http: httpx.AsyncClient, token, held: HeldEmbedder
) -> None:
    anna = {"Authorization": f"Bearer {await token('anna')}"}
    params = {"character": "nova"}
    running = asyncio.create_task(
        http.post("/import/chat", params=params, content=chat_lines(3), headers=anna)
    )
    await asyncio.wait_for(held.reached.wait(), WAIT)  # a guard against a hang, not a timing
    big = chat_lines(2, pad=LARGE)
    second = await http.post("/import/chat", params=params, content=big, headers=anna)
    assert second.status_code == 429, "read as an answer, not a reset connection"
    assert second.json()["detail"]["fehler"] == "import_laeuft"
    assert second.headers["retry-after"] == "10"
    held.released.set()
    assert (await running).json()["neu"] == 3


async def test_a_large_write_past_the_rate_reads_its_429(
    server: Running, http: httpx.AsyncClient, token
) -> None:
    ctx = server.app.state.context
    ctx.settings = ctx.settings.model_copy(update={"write_rate": 0.01, "write_burst": 1})
    server.app.state.settings = ctx.settings
    server.app.state.write_limiter = None
    anna = {"Authorization": f"Bearer {await token('anna')}"}
    first = await http.post("/agents/notes", json={"titel": "eins", "inhalt": "x"}, headers=anna)
    assert first.status_code != 429, "the burst of one"
    big = chat_lines(2, pad=LARGE)
    second = await http.post(
        "/import/chat", params={"character": "nova"}, content=big, headers=anna
    )
    assert second.status_code == 429, "read as an answer, not a reset connection"
    assert second.json()["detail"]["fehler"] == "zu_viele_anfragen"
    assert int(second.headers["retry-after"]) >= 1
