"""Which earlier turn gave rise to an impulse, when its event cannot say
(docs/behaviour/nodes.md#situation).

An impulse names its triggering turn (`ausloeser_turn_id`) when it knows it, but the id may be
missing (a thought without a recorded origin) or its situation entry expired (a research
result that arrives after the 4 h the per-turn record lives). Then the turn is looked for by
meaning: the impulse's text is searched by vector in the pair's conversation archive, and
the person's utterance that resembles it best is taken — if it resembles it enough. The
caller marks the result as found by similarity, never as the named trigger.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final
from zoneinfo import ZoneInfo

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.base import LLM
from novaberg.memory.search.hybrid import search_memory
from novaberg.memory.search.results import (
    LAYER_ARCHIVE,
    METHOD_CONTEXT,
    METHOD_VECTOR,
    SearchOptions,
)
from novaberg.pair import Pair
from novaberg.store.archive import SPEAKER_USER

MIN_COSINE: Final = 0.3
"""Below this the best archived utterance is not taken for the trigger: a bridge to an
unrelated turn would put the impulse in a wrong context, which is worse than none."""

CANDIDATES: Final = 5
"""Archive hits looked at (the best one spoken by the person wins)."""

TRIGGER_SEARCH: Final = SearchOptions(
    limit=CANDIDATES,
    layers=frozenset({LAYER_ARCHIVE}),
    methods=frozenset({METHOD_VECTOR, METHOD_CONTEXT}),
    narrow_by_time=False,
)
"""Vectors only: a thought is a paraphrase of what caused it, rarely the same words."""


@dataclass(frozen=True, slots=True)
class SimilarTurn:
    """The archived utterance taken for the trigger, and how close it was."""

    turn_id: str
    text: str
    time: datetime | None
    cosine: float


async def similar_trigger_turn(
    redis: aioredis.Redis,
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    thought: str,
    *,
    now: datetime,
    tz: ZoneInfo,
    exclude_turn: str | None = None,
) -> SimilarTurn | None:
    """The person's archived utterance closest to `thought` (cosine ≥ `MIN_COSINE`), or
    None. `exclude_turn`: the impulse's own turn, which may already be archived."""
    if not thought.strip():
        return None
    options = replace(TRIGGER_SEARCH, exclude_turn=exclude_turn)
    result = await search_memory(redis, pool, model, pair, thought, now=now, tz=tz, options=options)
    for hit in result.hits:
        cosine = hit.best_cosine()
        source = next((s for s in hit.sources if s.turn_id), None)
        if cosine is None or cosine < MIN_COSINE or source is None:
            continue
        if hit.speaker != SPEAKER_USER:
            continue
        return SimilarTurn(str(source.turn_id), hit.text, hit.time, float(cosine))
    return None
