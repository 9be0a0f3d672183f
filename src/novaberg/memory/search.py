"""Ranked search over a pair's whole memory (short- and long-term) for people and tools.

Used by `novaberg memory search`. Both stores are searched with the same query vector and
merged by cosine; short-term hits also carry their similarity (1 + cos)/2. This is a
look-up, not a retrieval for a turn: nothing is reinforced or marked as used
(docs/behaviour/memory.md#memory-search).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.base import LLM
from novaberg.memory.context import SOURCE_LONG_TERM, SOURCE_SHORT_TERM
from novaberg.store import lzg
from novaberg.store.keys import Pair
from novaberg.store.kzg import KzgStore


@dataclass(frozen=True, slots=True)
class SearchHit:
    source: str  # "kzg" | "lzg"
    ref: str  # short-term key or long-term node id
    cosine: float
    text: str
    detail: dict[str, Any]


async def search_memory(
    redis: aioredis.Redis,
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    query: str,
    *,
    k: int = 10,
    include_inactive: bool = False,
) -> list[SearchHit]:
    """The k best hits of both memories, highest cosine first."""
    vector = (await model.embed([query]))[0]
    hits = [
        SearchHit(
            SOURCE_SHORT_TERM,
            hit.key,
            hit.cosine,
            hit.fields.get("inhalt", ""),
            {
                "similarity": hit.similarity,
                "salienz": hit.fields.get("salienz"),
                "beobachter": hit.fields.get("beobachter"),
            },
        )
        for hit in await KzgStore(redis, cache_vectors=False).nearest(pair, vector, k)
    ]
    async with pool.connection() as conn:
        rows = await lzg.nearest(conn, pair, vector, k, active_only=not include_inactive)
    hits += [
        SearchHit(
            SOURCE_LONG_TERM,
            str(row["id"]),
            float(row["cosine"]),
            row["inhalt"],
            {
                "gewicht_decay": row["gewicht_decay"],
                "aktiv": row["aktiv"],
                "beobachter": row["beobachter"],
            },
        )
        for row in rows
    ]
    hits.sort(key=lambda h: -h.cosine)
    return hits[:k]
