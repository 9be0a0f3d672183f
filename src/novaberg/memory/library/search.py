"""Searching one person's library: words and vector, fused by rank like the other memory
layers (docs/behaviour/library.md#search). Each hit names its file, its page or heading
path and its line range, so an answer can say where it read something."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Final

import numpy as np
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.base import LLM
from novaberg.llm.errors import ModelError
from novaberg.memory.fusion import reciprocal_rank_fusion
from novaberg.memory.search.lists import VECTOR_MIN_COSINE
from novaberg.memory.search.results import METHOD_LEXICAL, METHOD_VECTOR
from novaberg.store import library
from novaberg.store.library import StoredChunk

log = logging.getLogger(__name__)

LAYER_LIBRARY: Final = "library"
"""`layer` of a library hit and of its source (a wire value: `--json`, the search API)."""

CANDIDATES: Final = 3
"""Each list ranks this many times the hits asked for before they are fused."""


@dataclass(frozen=True, slots=True)
class LibrarySource:
    """Where a passage stands: the file (absolute), its page (None: no pages), heading path
    and the lines it spans."""

    id: int
    file: str
    page: int | None
    heading: str
    line_from: int
    line_to: int

    @classmethod
    def of(cls, stored: StoredChunk) -> LibrarySource:
        file = str(PurePosixPath(stored.root_path) / stored.file_path)
        return cls(stored.id, file, stored.page, stored.heading, stored.line_from, stored.line_to)

    def label(self) -> str:
        """ "Mietvertrag.pdf, S. 2, Z. 1–4" in the shape a person cites it."""
        parts = [PurePosixPath(self.file).name]
        if self.page is not None:
            parts.append(f"S. {self.page}")
        if self.heading:
            parts.append(self.heading)
        parts.append(f"Z. {self.line_from}–{self.line_to}")
        return ", ".join(parts)

    def as_json(self) -> dict[str, Any]:
        return {
            "layer": LAYER_LIBRARY,
            "id": str(self.id),
            "file": self.file,
            "page": self.page,
            "heading": self.heading,
            "lines": [self.line_from, self.line_to],
        }


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
    pool: AsyncConnectionPool, model: LLM, user_id: str, query: str, limit: int = 10
) -> list[LibraryHit]:
    """The `limit` passages of `user_id`'s library that fit `query` best, best first."""
    vector = await _query_vector(model, query)
    k = limit * CANDIDATES
    async with pool.connection() as conn:
        words = await library.search_words(conn, user_id, query, k)
        nearest = (
            await library.search_vector(conn, user_id, vector, k) if vector is not None else []
        )
        # below the memory search's floor a vector list's order is noise (lists.py)
        nearest = [(key, cosine) for key, cosine in nearest if cosine > VECTOR_MIN_COSINE]
        fused = reciprocal_rank_fusion({METHOD_LEXICAL: words, METHOD_VECTOR: nearest})[:limit]
        stored = await library.chunks_by_id(conn, [item.key for item in fused])
    return [
        LibraryHit(
            item.key,
            item.score,
            stored[item.key].text,
            LibrarySource.of(stored[item.key]),
            item.signals,
        )
        for item in fused
        if item.key in stored
    ]
