"""Hybrid search over a pair's whole memory — archive, short-term and long-term — and the
person's library (the files of her approved folders), with provenance. The one function people (`novaberg memory search`, `GET /memory/{c}/search`),
the enricher and tools call: `search_memory`.

Per layer several ranked lists are made: the vector search (for the archive in two views,
the turn alone and the turn with its predecessor, merged into one list), BM25 over
PostgreSQL full-text search (`lexikalisch`, store/text_search.py; for the archive also by
the words of the turn before) and, for name-like query words the archive never saw, the
lexemes of the pair's vocabulary they resemble by pg_trgm similarity (`trigramm`: a misspelt
name). Reciprocal rank fusion (memory/fusion.py)
merges all lists of all layers into one ranking. A time expression in the query ("letzten
Sommer", "im März") narrows every layer to that window (memory/time_expressions/windows.py;
a short- or long-term memory by the day it is about: its timeline row's, else when said);
if fewer hits than asked remain, the window's newest turns fill up (`zeitraum`). Every hit
names what it rests on (`sources`): archive
rows with their turn id, nachrichten_ids and imported id; a short-term entry and the turn it
was condensed from; a long-term node, the short-term keys it was promoted from and their
turns (or the character card a lore entry came from); a library passage its file, page,
heading path and line range (memory/library/search.py).

No model call except the query's embedding; nothing is reinforced or marked as used (this
is a look-up, not a turn's retrieval): docs/behaviour/memory.md#hybrid-search.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Final
from zoneinfo import ZoneInfo

import numpy as np
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.base import LLM
from novaberg.llm.errors import ModelError
from novaberg.memory.fusion import reciprocal_rank_fusion
from novaberg.memory.search import supersession
from novaberg.memory.search.lists import RankedLists
from novaberg.memory.search.provenance import details
from novaberg.memory.search.results import METHOD_VECTOR, SearchOptions, SearchResult
from novaberg.memory.time_expressions.windows import query_window
from novaberg.pair import Pair
from novaberg.store import archive, text_search

log = logging.getLogger(__name__)

DEFAULT_OPTIONS: Final = SearchOptions()


async def _embed(model: LLM, query: str) -> np.ndarray | None:
    try:
        return np.asarray((await model.embed([query]))[0], dtype=np.float32)
    except (ModelError, OSError, RuntimeError) as exc:
        log.error("memory search: the query could not be embedded (%s); words only", exc)
        return None


async def search_memory(
    redis: aioredis.Redis,
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    query: str,
    *,
    now: datetime,
    tz: ZoneInfo,
    options: SearchOptions = DEFAULT_OPTIONS,
    vector: Sequence[float] | np.ndarray | None = None,
) -> SearchResult:
    """The pair's best `options.limit` memories for `query`, fused over layers and methods,
    each with its sources. `vector`: the query's embedding if the caller has it already."""
    window = query_window(query, now, tz) if options.narrow_by_time else None
    span = (window.start, window.end) if window is not None else None
    wants_vector = METHOD_VECTOR in options.methods
    query_vector: np.ndarray | None = None
    if wants_vector:
        query_vector = (
            np.asarray(vector, dtype=np.float32)
            if vector is not None
            else await _embed(model, query)
        )
    search = RankedLists(redis, pair, options, span, query)
    short_term = asyncio.ensure_future(search.read_short_term())  # Redis, meanwhile
    try:
        async with pool.connection() as conn:  # one connection, its reads pipelined
            terms = await text_search.query_terms(
                conn, pair, query, window=span, count_limit=archive.EXACT_LIMIT
            )
            await short_term
            await search.narrow_to_days(conn)
            lists = await search.lists(conn, query_vector, terms)
            ranked = reciprocal_rank_fusion(lists)
            if span is None and options.latest_first:  # a newer value may come from below
                hits = await details(
                    conn,
                    search,
                    ranked[: options.limit + supersession.LOOKAHEAD],
                    restated=(terms.topic, supersession.RESTATED_COSINE),
                )
                hits = supersession.latest_first(hits, search.restated, options.limit)
            else:  # the question names the time it means
                fused = await search.window_fill(conn, ranked[: options.limit])
                hits = await details(conn, search, fused)
    finally:
        short_term.cancel()  # nothing once done; a failed search leaves no read behind
    return SearchResult(hits, window, query_vector is not None or not wants_vector)
