"""A question is searched by what it asks about, in the forms a statement uses: against the
real PostgreSQL and Redis (scripted embedder: only identical words connect)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from tests.integration.memory.test_archive_search import PAIR, _line, chat_file, search, store_chat

from novaberg.llm.layer import ModelLayer

START = datetime(2026, 1, 5, 18, 0, tzinfo=UTC)


async def _chat(db: AsyncConnectionPool, model: ModelLayer, texts: list[str]) -> None:
    lines = [_line(f"t{i}", text, START + timedelta(days=i)) for i, text in enumerate(texts)]
    await store_chat(db, model, PAIR, chat_file(lines))


async def test_an_irregular_past_is_found_by_the_questions_present(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    evidence = "In Rome we ate the best pizza of our lives, near the station."
    await _chat(db, model, ["We were in Rome in May.", evidence, "Rome was hot."])
    words = frozenset({"lexikalisch"})  # the vectors of the hashed test embedder tie here
    found = await search(redis, db, model, "What did we eat in Rome?", methods=words)
    assert found.hits[0].text == evidence, [(h.text, h.signals) for h in found.hits]


async def test_a_german_participle_finds_the_present(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    evidence = "Morgen kaufe ich endlich das rote Lastenrad vom Händler am Markt."
    await _chat(db, model, ["Das Lastenrad hat einen Platten.", evidence, "Lastenrad ist toll."])
    found = await search(redis, db, model, "Wann habe ich das Lastenrad gekauft?")
    assert found.hits[0].text == evidence, [(h.text, h.signals) for h in found.hits]


async def test_question_scaffolding_does_not_select_turns(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    evidence = "The allotment needs a new shed before winter, the old one is rotten."
    said = [
        "Tom says the film was boring.",
        "I say no to the second job.",
        evidence,
        "She says it will rain.",
    ]
    await _chat(db, model, said)
    found = await search(
        redis, db, model, "What did I say about the allotment?", methods=frozenset({"lexikalisch"})
    )
    assert [hit.text for hit in found.hits] == [evidence], "'say' selects nothing"
