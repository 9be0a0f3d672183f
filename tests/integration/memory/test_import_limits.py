"""Bounded work per import over HTTP: each limit is a setting and a refusal in words (413
`zu_gross`, 409 `archiv_voll`) before anything is stored; one import per person at a time
(429 `import_laeuft`); the skipped-line report is capped."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from typer.testing import CliRunner, Result

from novaberg.api.app import create_app
from novaberg.api.context import AppContext
from novaberg.cli import app
from novaberg.config import Settings
from novaberg.llm.gate import ModelGate
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedEmbedder
from novaberg.runtime.services import Endpoints
from novaberg.store.users import issue_token

LIMITED: dict[str, int] = {
    "max_card_bytes": 64 * 1024,
    "max_card_field_chars": 1000,
    "max_lore_entries": 10,
    "max_import_bytes": 64 * 1024,
    "max_import_lines": 100,
    "max_archive_turns": 100,
}

Clients = Callable[..., AbstractAsyncContextManager[dict[str, httpx.AsyncClient]]]


@pytest.fixture
def clients(
    settings: Settings,
    endpoints: Endpoints,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
) -> Clients:
    """`clients(*users, limits=..., embedder=...)`: one app, one client per user."""

    @asynccontextmanager
    async def open_clients(
        *users: str, limits: dict[str, int] | None = None, embedder: Any = None
    ) -> AsyncIterator[dict[str, httpx.AsyncClient]]:
        layer = ModelLayer(model.text, embedder) if embedder is not None else model
        ctx = AppContext(
            settings.model_copy(update=limits or {}),
            endpoints,
            redis,
            db,
            layer,
            ModelGate(redis, "scripted-limits", 1),
        )
        application = create_app(context=ctx)
        opened: dict[str, httpx.AsyncClient] = {}
        async with application.router.lifespan_context(application):
            for user in users:
                token = (await issue_token(db, user, "test")).token
                opened[user] = httpx.AsyncClient(
                    transport=httpx.ASGITransport(app=application),
                    base_url="http://novaberg",
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=60,
                )
            try:
                yield opened
            finally:
                for client in opened.values():
                    await client.aclose()

    return open_clients


async def count(db: AsyncConnectionPool, sql: str) -> int:
    async with db.connection() as conn:
        row = await (await conn.execute(sql)).fetchone()
        return int(next(iter(row.values())))


def card(entries: int = 2, **data: Any) -> bytes:
    lore = [{"keys": [f"k{i}"], "content": f"Eintrag {i}."} for i in range(entries)]
    fields = {"name": "Käthe", "description": "Moin.", "character_book": {"entries": lore}}
    return json.dumps({"spec": "chara_card_v2", "data": {**fields, **data}}).encode()


def chat(count: int, prefix: str = "t") -> bytes:
    lines = [
        json.dumps({"id": f"{prefix}{i}", "speaker": "user", "text": f"Satz {i}", "time": i + 1})
        for i in range(count)
    ]
    return "\n".join(lines).encode()


async def nothing_stored(db: AsyncConnectionPool) -> None:
    assert await count(db, "SELECT count(*) FROM characters") == 1, "only the built-in nova"
    assert await count(db, "SELECT count(*) FROM lzg_knoten") == 0
    assert await count(db, "SELECT count(*) FROM gespraechsarchiv") == 0


def refusal(answer: httpx.Response, status: int, code: str) -> str:
    assert answer.status_code == status, answer.text[:300]
    assert answer.json()["detail"]["fehler"] == code, answer.text[:300]
    return str(answer.json()["detail"]["detail"])


async def test_a_card_over_a_limit_is_a_413_in_words_and_stores_nothing(
    clients: Clients, db: AsyncConnectionPool
) -> None:
    async with clients("anna", limits=LIMITED) as by:
        anna = by["anna"]
        lore = refusal(await anna.post("/characters", content=card(11)), 413, "zu_gross")
        assert lore == (
            "the card's lorebook has 11 entries, over the limit of 10 entries "
            "(NOVABERG_MAX_LORE_ENTRIES); nothing was stored"
        )
        field = refusal(
            await anna.post("/characters", content=card(scenario="x" * 1001)), 413, "zu_gross"
        )
        assert field.startswith("the card's field 'scenario' has 1,001 characters, over the")
        assert "(NOVABERG_MAX_CARD_FIELD_CHARS)" in field
        big = card(description="x" * 900, mes_example="y" * 70_000)
        size = refusal(await anna.post("/characters", content=big), 413, "zu_gross")
        assert size == (
            f"the body has {len(big):,} bytes, over the limit of 65,536 bytes "
            "(NOVABERG_MAX_CARD_BYTES)"
        )
        await nothing_stored(db)
        assert (await anna.post("/characters", content=card(10))).status_code == 201


async def test_a_chat_export_over_a_limit_is_a_413_before_it_is_parsed(
    clients: Clients, db: AsyncConnectionPool
) -> None:
    async with clients("anna", limits=LIMITED) as by:
        anna = by["anna"]
        junk = "\n".join(["{junk"] * 101).encode()  # parsed, it would be a 422 kein_chat
        lines = refusal(
            await anna.post("/import/chat", params={"character": "nova"}, content=junk),
            413,
            "zu_gross",
        )
        assert lines == (
            "the chat export has 101 lines, over the limit of 100 lines "
            "(NOVABERG_MAX_IMPORT_LINES); nothing was stored"
        )
        big = chat(90, prefix="x" * 800)
        size = refusal(
            await anna.post("/import/chat", params={"character": "nova"}, content=big),
            413,
            "zu_gross",
        )
        assert "over the limit of 65,536 bytes (NOVABERG_MAX_IMPORT_BYTES)" in size
        await nothing_stored(db)


async def test_a_junk_export_reports_the_first_100_problems_and_their_count(
    clients: Clients,
) -> None:
    body = chat(1) + b"\n" + b"\n".join([b"{junk"] * 30_000)  # 180 KB: checked in a thread
    async with clients("anna") as by:
        answer = await by["anna"].post("/import/chat", params={"character": "nova"}, content=body)
    assert answer.status_code == 200, answer.text[:300]
    report = answer.json()
    assert (report["neu"], report["uebersprungen_gesamt"]) == (1, 30_000)
    assert [p["stelle"] for p in report["uebersprungen"]] == [f"line {n}" for n in range(2, 102)]
    assert len(answer.content) < 20_000


async def test_an_import_past_the_archive_quota_is_a_409_and_stores_nothing(
    clients: Clients, db: AsyncConnectionPool
) -> None:
    async with clients("anna", "bob", limits=LIMITED) as by:
        anna = by["anna"]
        first = await anna.post("/import/chat", params={"character": "nova"}, content=chat(60))
        assert first.status_code == 200, first.text[:300]
        more = chat(41, prefix="u")
        full = refusal(
            await anna.post("/import/chat", params={"character": "nova"}, content=more),
            409,
            "archiv_voll",
        )
        assert full == (
            "your archive holds 60 turns; these 41 new ones would pass the limit of 100 turns "
            "per person (NOVABERG_MAX_ARCHIVE_TURNS); nothing was stored"
        )
        assert await count(db, "SELECT count(*) FROM gespraechsarchiv") == 60
        again = await anna.post("/import/chat", params={"character": "nova"}, content=chat(60))
        assert again.json()["vorhanden"] == 60, "what is stored already adds nothing"
        fits = await anna.post("/import/chat", params={"character": "nova"}, content=chat(40, "v"))
        assert fits.json()["neu"] == 40
        other = await by["bob"].post("/import/chat", params={"character": "nova"}, content=more)
        assert other.json()["neu"] == 41, "the quota is per person"


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


async def test_one_import_per_person_and_two_per_process_the_next_is_a_429(
    clients: Clients, db: AsyncConnectionPool
) -> None:
    held = HeldEmbedder()
    async with clients("anna", "bob", "carl", embedder=held) as by:
        params = {"character": "nova"}
        running = asyncio.create_task(
            by["anna"].post("/import/chat", params=params, content=chat(5))
        )
        await asyncio.wait_for(held.reached.wait(), 30)  # a guard against a hang, not a timing
        second = await by["anna"].post("/characters", content=card())
        assert "still running" in refusal(second, 429, "import_laeuft")
        assert second.headers["retry-after"] == "10"
        held.reached.clear()
        bobs = asyncio.create_task(by["bob"].post("/import/chat", params=params, content=chat(3)))
        await asyncio.wait_for(held.reached.wait(), 30)
        third = await by["carl"].post("/import/chat", params=params, content=chat(2))
        assert "2 imports are running" in refusal(third, 429, "import_laeuft")
        assert (await by["carl"].get("/characters")).status_code == 200, "only imports wait"
        held.released.set()
        assert (await running).json()["neu"] == 5
        assert (await bobs).json()["neu"] == 3
        after = await by["anna"].post("/characters", content=card())
        assert after.status_code == 201, "the slot is free again"
    assert await count(db, "SELECT count(*) FROM gespraechsarchiv") == 8


async def test_the_cli_refuses_an_import_past_the_archive_quota_in_one_line(
    endpoints: Endpoints, db: AsyncConnectionPool, tmp_path: Path
) -> None:
    env = {
        "NOVABERG_HOME": str(tmp_path / "home"),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_DATABASE_URL": endpoints.database_url,
        "NOVABERG_LLM": "scripted",
        "NOVABERG_MAX_ARCHIVE_TURNS": "100",
    }
    first, more = tmp_path / "erst.jsonl", tmp_path / "mehr.jsonl"
    first.write_bytes(chat(60))
    more.write_bytes(chat(41, prefix="u"))

    def run(path: Path) -> Result:
        return CliRunner().invoke(app, ["import", "chat", str(path)], env=env)

    assert (await asyncio.to_thread(run, first)).exit_code == 0
    refused = await asyncio.to_thread(run, more)
    assert refused.exit_code == 2, refused.output
    assert refused.stderr.strip() == (
        "your archive holds 60 turns; these 41 new ones would pass the limit of 100 turns "
        "per person (NOVABERG_MAX_ARCHIVE_TURNS); nothing was stored"
    )
    assert await count(db, "SELECT count(*) FROM gespraechsarchiv") == 60
