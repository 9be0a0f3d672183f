"""A turn too short to tell its language is indexed in its conversation's (an import: the
whole conversation's; a live turn: the turns before it), against the real PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from tests.integration.memory.test_archive_search import PAIR, _line, chat_file, search, store_chat

from novaberg.llm.layer import ModelLayer
from novaberg.memory.archive import archive_live_turn

CHAT = [
    ("character", "Wie viele Haustiere habt ihr eigentlich?"),
    ("user", "Zwei Katzen."),
    ("character", "Und wie heißen die beiden?"),
    ("user", "Das verrate ich dir später, wir sind gerade unterwegs."),
]


async def test_a_short_answer_is_found_by_another_form_of_its_word(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    start = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)
    lines = [
        _line(f"t{i}", text, start + timedelta(minutes=i), speaker)
        for i, (speaker, text) in enumerate(CHAT)
    ]
    await store_chat(db, model, PAIR, chat_file(lines))
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT sprache::text AS config FROM gespraechsarchiv WHERE quell_id = 't1'"
        )
        row = await cur.fetchone()
    assert row is not None and row["config"] == "german", "the conversation's language"
    found = await search(
        redis, db, model, "Welche Katze habe ich?", methods=frozenset({"lexikalisch"})
    )
    assert "Zwei Katzen." in [hit.text for hit in found.hits]


async def test_a_short_live_turn_takes_the_language_of_the_turns_before_it(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    start = datetime(2026, 3, 2, 18, 0, tzinfo=UTC)
    for i, (speaker, text) in enumerate(CHAT[:2]):
        await archive_live_turn(
            db,
            model,
            PAIR,
            speaker=speaker,
            text=text,
            time=start + timedelta(minutes=i),
            turn_id=f"turn-{i}",
            message_ids=[f"m{i}"],
            origin="nutzer_turn",
        )
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT inhalt, sprache::text AS config FROM gespraechsarchiv ORDER BY zeit"
        )
        rows = [(r["inhalt"], r["config"]) for r in await cur.fetchall()]
    assert rows == [(CHAT[0][1], "german"), ("Zwei Katzen.", "german")]
    found = await search(
        redis, db, model, "Welche Katze habe ich?", methods=frozenset({"lexikalisch"})
    )
    assert "Zwei Katzen." in [hit.text for hit in found.hits]


async def test_a_short_live_turn_with_nothing_before_it_stays_simple(
    db: AsyncConnectionPool, model: ModelLayer
) -> None:
    await archive_live_turn(
        db,
        model,
        PAIR,
        speaker="user",
        text="Zwei Katzen.",
        time=datetime(2026, 3, 2, 18, 0, tzinfo=UTC),
        turn_id="turn-0",
        message_ids=["m0"],
        origin="nutzer_turn",
    )
    async with db.connection() as conn:
        cur = await conn.execute("SELECT sprache::text AS config FROM gespraechsarchiv")
        assert [r["config"] for r in await cur.fetchall()] == ["simple"]
