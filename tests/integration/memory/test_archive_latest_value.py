"""A fact that changed: its newer statement outranks the older one, and a time window still
chooses the old one; against the real PostgreSQL and Redis (scripted embedder)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from tests.integration.memory.test_archive_search import (
    NOW,
    PAIR,
    _line,
    chat_file,
    search,
    store_chat,
)

from novaberg.llm.layer import ModelLayer

OLD = "I live in Leeds."
NEW = "We finally moved house, I live in Bristol now."
EVERYDAY = [
    "The weather was grey and rainy.",
    "Work was one long meeting today.",
    "I'm cooking risotto tonight.",
    "We watched an old western.",
    "The bus was late again.",
    "My sister phoned this afternoon.",
]


async def test_the_newer_statement_of_a_changed_fact_ranks_first(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    start = datetime(2025, 9, 1, 18, 0, tzinfo=UTC)
    lines = [_line(f"e{i}", t, start + timedelta(days=9 * i)) for i, t in enumerate(EVERYDAY)]
    lines += [
        _line("old", OLD, start + timedelta(days=3)),
        _line("new", NEW, NOW - timedelta(days=40)),
    ]
    await store_chat(db, model, PAIR, chat_file(lines))
    found = await search(redis, db, model, "Where do I live?")
    texts = [hit.text for hit in found.hits]
    assert texts.index(NEW) < texts.index(OLD), [(h.text[:12], h.signals) for h in found.hits]
    assert "aktuell" in found.hits[0].signals
    dated = await search(redis, db, model, "Where did I live last September?")
    assert [hit.text for hit in dated.hits][:1] == [OLD], "a time window chooses the time itself"
