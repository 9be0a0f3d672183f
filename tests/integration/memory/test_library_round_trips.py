"""What a library costs a search in round trips to PostgreSQL (the real one): the library's
own search (the enricher's `library_notes`, `novaberg library search`) reads both lists in
one round trip and the found passages in a second, small or large library alike; in the one
memory search a person's library adds no round trip to the archive's (its lists and its
hits' details are queued with the other layers')."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.imports.chat_formats import parse_chat
from novaberg.imports.chat_import import import_chat
from novaberg.llm.layer import ModelLayer
from novaberg.memory.library.search import search_library
from novaberg.memory.search.hybrid import search_memory
from novaberg.memory.search.results import SearchOptions
from novaberg.pair import Pair
from novaberg.store import library

PAIR = Pair("meister", "nova")
TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 5, 14, 12, 0, tzinfo=UTC)
FACT = "Die Kuendigungsfrist der Wohnung betraegt sieben Wochen zum Monatsende."
NOTES = [
    "Die Tomaten kommen im Mai ins Beet.",
    "Sechs Aepfel schaelen und eine Stunde backen.",
    FACT,
    "Der Kompost wird einmal im Herbst umgesetzt.",
]


class Trips:
    """Counts what waits for the server's answer: a pipeline's end or a read inside it, or
    a statement outside a pipeline (as tests/integration/memory/test_archive_search.py)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names: list[str] = []
        wait = psycopg.AsyncConnection.wait

        async def waiting(conn: psycopg.AsyncConnection, gen: Any, *a: Any, **k: Any) -> Any:
            name = getattr(gen, "__name__", "")
            if name in ("_exit_gen", "_fetch_gen", "_sync_gen") or (
                name == "_execute_gen" and conn._pipeline is None
            ):
                self.names.append(name)
            return await wait(conn, gen, *a, **k)

        monkeypatch.setattr(psycopg.AsyncConnection, "wait", waiting)

    def take(self) -> int:
        count, self.names = len(self.names), []
        return count


async def _library(db: AsyncConnectionPool, model: ModelLayer, tmp_path: Path) -> None:
    vectors = await model.embed(NOTES)
    async with db.connection() as conn:
        root = await library.approve_root(conn, PAIR.user_id, str(tmp_path))
        await library.save_file(
            conn,
            root,
            library.FileRecord("notizen.md", "h", 0.0, 1, library.FILE_OK),
            [
                library.ChunkRow(text, "Notizen", None, n + 1, n + 1, "german", vector)
                for n, (text, vector) in enumerate(zip(NOTES, vectors, strict=True))
            ],
        )


@pytest.mark.parametrize("large", [False, True], ids=["exact", "through-the-index"])
async def test_the_library_search_takes_two_round_trips(
    db: AsyncConnectionPool,
    model: ModelLayer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    large: bool,
) -> None:
    await _library(db, model, tmp_path)
    if large:
        monkeypatch.setattr(library, "EXACT_LIMIT", 0)  # every library counts as large
    trips = Trips(monkeypatch)
    hits = await search_library(db, model, PAIR.user_id, "Kuendigungsfrist Wohnung")
    assert hits[0].text == FACT
    assert set(hits[0].signals) == {"lexikalisch", "vektor"}
    assert trips.take() == 2, "both lists in one round trip, the passages in a second"
    assert await search_library(db, model, "someone-else", "Kuendigungsfrist") == []
    assert trips.take() == 1, "a person without a library: one round trip, nothing to read"


async def test_a_library_adds_no_round_trip_to_the_one_search(
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chat = b'{"id": "t1", "speaker": "user", "text": "Die Wohnung hat einen Balkon.", "time": "2026-01-05T18:00:00Z"}'
    await import_chat(db, model, PAIR, parse_chat(chat, tz=TZ, name="t.jsonl"))

    async def search() -> list[str]:
        found = await search_memory(
            redis, db, model, PAIR, "Kuendigungsfrist Wohnung", now=NOW, tz=TZ,
            options=SearchOptions(),
        )  # fmt: skip
        return [hit.layer for hit in found.hits]

    await search()  # the long-term pair size is remembered after the first search
    trips = Trips(monkeypatch)
    assert await search() == ["archiv"]
    without = trips.take()
    await _library(db, model, tmp_path)
    trips.take()
    monkeypatch.setattr(library, "EXACT_LIMIT", 0)
    assert sorted(await search()) == ["archiv", "library"]
    assert trips.take() == without, "the library's lists and details go with the archive's"
