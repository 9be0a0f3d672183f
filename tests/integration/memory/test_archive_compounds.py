"""German compounds: a noun of the question finds the pair's compounds it is the head of,
and a compound of the question finds its head — against the real PostgreSQL (the `german`
configuration keeps a compound one lexeme) and Redis; words only (the hashed test embedder
connects only identical words)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from tests.integration.memory.test_archive_search import PAIR, _line, chat_file, search, store_chat

from novaberg.llm.layer import ModelLayer
from novaberg.store import text_search

START = datetime(2026, 1, 5, 18, 0, tzinfo=UTC)
WORDS = frozenset({"lexikalisch"})


async def _chat(db: AsyncConnectionPool, model: ModelLayer, texts: list[str]) -> None:
    lines = [_line(f"t{i}", text, START + timedelta(days=i)) for i, text in enumerate(texts)]
    await store_chat(db, model, PAIR, chat_file(lines))


async def test_a_noun_finds_the_compound_it_is_the_head_of(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    evidence = "Auf dem Balkon blühen rote Geranien, meine Lieblingsblumen."
    await _chat(db, model, ["Heute war es windig am Balkon.", evidence, "Der Kaffee war kalt."])
    found = await search(redis, db, model, "Welche Blume habe ich?", methods=WORDS)
    assert [hit.text for hit in found.hits][:1] == [evidence], [
        (h.text, h.signals) for h in found.hits
    ]


async def test_a_compound_of_the_question_finds_its_head(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    evidence = "Unsere Mannschaft hat am Samstag drei zu eins gewonnen."
    await _chat(db, model, ["Samstag war ich müde.", evidence, "Das Spiel im Fernsehen lief."])
    found = await search(redis, db, model, "Wie war es mit der Fußballmannschaft?", methods=WORDS)
    assert [hit.text for hit in found.hits][:1] == [evidence], [
        (h.text, h.signals) for h in found.hits
    ]


@pytest.mark.parametrize(
    ("question", "absent"),
    [
        ("Wo lebt meine Schwester?", "west"),  # no compound: "Sch" is no word
        ("Wo hat er sich eingelebt?", "lebt"),  # not a noun: verbs take prefixes
        ("wie heißt die blume?", "lieblingsblum"),  # lowercase: not known for a noun
    ],
)
async def test_what_is_no_compound_is_not_split(
    db: AsyncConnectionPool, model: ModelLayer, question: str, absent: str
) -> None:
    await _chat(
        db,
        model,
        [
            "Der Wind kommt aus dem Westen, von West.",
            "Ich lebe gern hier, er lebt dort.",
            "Meine Lieblingsblumen blühen.",
        ],
    )
    async with db.connection() as conn:
        terms = await text_search.query_terms(conn, PAIR, question)
    assert absent not in terms.lexemes, terms.lexemes
