"""Searching one person's library: words and vector, fused by rank like the other memory
layers (docs/behaviour/library.md#search). Each hit names its file, its page or heading
path and its line range, so an answer can say where it read something."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Final

import numpy as np
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.base import LLM
from novaberg.llm.errors import ModelError
from novaberg.memory.fusion import reciprocal_rank_fusion
from novaberg.memory.search.lists import VECTOR_MIN_COSINE
from novaberg.memory.search.results import (
    LAYER_LIBRARY,
    METHOD_LEXICAL,
    METHOD_VECTOR,
    LibrarySource,
)
from novaberg.store import library
from novaberg.store.library import StoredChunk
from novaberg.store.pipelined import Reply, pipeline

log = logging.getLogger(__name__)

CANDIDATES: Final = 3
"""Each list ranks this many times the hits asked for before they are fused."""


def source_of(stored: StoredChunk) -> LibrarySource:
    """The source a stored passage names: its file (absolute), page, heading, lines."""
    return LibrarySource(
        LAYER_LIBRARY,
        str(stored.id),
        file=str(PurePosixPath(stored.root_path) / stored.file_path),
        page=stored.page,
        heading=stored.heading,
        line_from=stored.line_from,
        line_to=stored.line_to,
    )


async def ranked_lists(
    conn: AsyncConnection[Any],
    user_id: str,
    query: str,
    vector: np.ndarray | None,
    k: int,
    *,
    words: bool = True,
) -> dict[str, list[tuple[int, float]]]:
    """The library's ranked lists for `query` by method (`lexikalisch`, `vektor`), both
    queued in one pipeline: one round trip, with or without a library. (The one memory
    search queues the same statements in its own: memory/search/lists.py.)"""
    replies: dict[str, Reply[list[tuple[int, float]]]] = {}
    async with pipeline(conn):
        if words and query.strip():
            replies[METHOD_LEXICAL] = await library.queue_search_words(conn, user_id, query, k)
        if vector is not None:
            replies[METHOD_VECTOR] = await library.queue_search_vector(conn, user_id, vector, k)
    found = {method: await reply.read() for method, reply in replies.items()}
    if METHOD_VECTOR in found:  # below the memory search's floor the order is noise (lists.py)
        found[METHOD_VECTOR] = [
            (key, cos) for key, cos in found[METHOD_VECTOR] if cos > VECTOR_MIN_COSINE
        ]
    return {method: ranked for method, ranked in found.items() if ranked}


@dataclass(slots=True)
class LibraryHit:
    """A fused library hit, shaped like the other layers' hits (memory/search/results.py)."""

    id: int
    score: float
    text: str
    source: LibrarySource
    signals: dict[str, tuple[int, float]] = field(default_factory=dict)

    def as_json(self, rank: int) -> dict[str, Any]:
        return {
            "rank": rank,
            "layer": LAYER_LIBRARY,
            "id": str(self.id),
            "score": round(self.score, 6),
            "text": self.text,
            "time": None,
            "speaker": None,
            "sources": [self.source.as_json()],
            "signals": {
                name: {"rank": r, "score": round(s, 6)} for name, (r, s) in self.signals.items()
            },
        }


async def _query_vector(model: LLM, query: str) -> np.ndarray | None:
    try:
        return np.asarray((await model.embed([query]))[0], dtype=np.float32)
    except (ModelError, OSError, RuntimeError) as exc:
        log.warning("library search: the query could not be embedded (%s); words only", exc)
        return None


async def search_library(
    pool: AsyncConnectionPool,
    model: LLM,
    user_id: str,
    query: str,
    limit: int = 10,
    *,
    vector: np.ndarray | None = None,
    embed: bool = True,
) -> list[LibraryHit]:
    """The `limit` passages of `user_id`'s library that fit `query` best, best first.
    `vector`: the query's embedding if the caller has it already (the enricher; with
    `embed` False and no vector, words only)."""
    if vector is None and embed:
        vector = await _query_vector(model, query)
    async with pool.connection() as conn:
        lists = await ranked_lists(conn, user_id, query, vector, limit * CANDIDATES)
        fused = reciprocal_rank_fusion(lists)[:limit]
        stored = await library.chunks_by_id(conn, [item.key for item in fused]) if fused else {}
    return [
        LibraryHit(
            item.key, item.score, stored[item.key].text, source_of(stored[item.key]), item.signals
        )
        for item in fused
        if item.key in stored
    ]
