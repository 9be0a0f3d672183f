"""Speakers' names of imported chats are kept and searchable by words, against the real
PostgreSQL and Redis (scripted embedder: only words connect)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.imports.chat_formats import parse_chat
from novaberg.imports.chat_import import import_chat
from novaberg.llm.layer import ModelLayer
from novaberg.memory.search.hybrid import search_memory
from novaberg.pair import Pair

PAIR = Pair("sam", "nova")
TZ = ZoneInfo("Europe/London")
START = datetime(2026, 2, 1, 18, 0, tzinfo=UTC)
GROUP_CHAT = [
    ("Sam", "Any news about the garden?"),
    ("Tom", "The garden is far too much work, the weeds win every summer."),
    ("Lena", "The garden is my favourite place, I would grow pumpkins all year."),
    ("Priya", "The garden committee wants to raise the fees again."),
    ("Nova", "Remind me to ask about the garden at the weekend."),
    ("Lena", "I baked bread this morning."),
    ("Tom", "The match last night was dreadful."),
    ("Sam", "Did anyone write down the plan for the garden?"),
]
EVERYDAY = [
    "The weather was grey and rainy.",
    "Work was one long meeting today.",
    "I'm cooking risotto tonight.",
    "We watched an old western.",
    "The bus was late again.",
    "My sister phoned this afternoon.",
    "I still have to do the laundry.",
    "The cat slept on the keyboard.",
]
"""Everyday turns without the topic (in a real history the topic's word is rare)."""


def group_chat() -> bytes:
    lines: list[dict[str, Any]] = [
        {"user_name": "Sam", "character_name": "Nova", "create_date": START.isoformat()}
    ]
    talk = GROUP_CHAT + [
        (("Sam", "Tom", "Priya", "Nova")[i % 4], t) for i, t in enumerate(EVERYDAY)
    ]
    for minute, (name, text) in enumerate(talk):
        lines.append(
            {
                "name": name,
                "is_user": name == "Sam",
                "is_system": False,
                "send_date": (START + timedelta(minutes=minute)).isoformat(),
                "mes": text,
            }
        )
    return "\n".join(json.dumps(line) for line in lines).encode()


async def test_what_a_named_speaker_said_is_found_by_their_name(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    await import_chat(db, model, PAIR, parse_chat(group_chat(), tz=TZ, name="group.jsonl"))
    found = await search_memory(
        redis, db, model, PAIR, "What did Lena say about the garden?", now=START, tz=TZ
    )
    assert found.hits[0].text == GROUP_CHAT[2][1], [(h.text[:20], h.signals) for h in found.hits]
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT sprecher_name AS name, count(*) AS n FROM gespraechsarchiv"
            " GROUP BY 1 ORDER BY 1"
        )
        named = {row["name"]: row["n"] for row in await cur.fetchall()}
        stored = await conn.execute("SELECT df FROM archiv_lexeme WHERE lexem = 'lena'")
        lena = await stored.fetchone()
    assert named == {"Lena": 2, "Nova": 3, "Priya": 3, "Sam": 4, "Tom": 4}
    assert lena is not None and lena["df"] == 2, "the statistics count the name's rows"


async def test_a_hit_names_who_said_it(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    await import_chat(db, model, PAIR, parse_chat(group_chat(), tz=TZ, name="group.jsonl"))
    found = await search_memory(redis, db, model, PAIR, "pumpkins", now=START, tz=TZ)
    shown = found.hits[0].as_json(1)
    assert (shown["text"], shown["speaker"]) == (GROUP_CHAT[2][1], "character")
    assert shown["speaker_name"] == "Lena"
    assert shown["sources"][0]["speaker_name"] == "Lena", "its source names her too"
