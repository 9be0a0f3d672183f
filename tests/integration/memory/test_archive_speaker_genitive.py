"""A speaker asked about in the German genitive ("Lenas Meinung") is the speaker "Lena":
against the real PostgreSQL and Redis (scripted embedder: only words connect)."""

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
from novaberg.store import text_search

PAIR = Pair("sam", "nova")
TZ = ZoneInfo("Europe/Berlin")
START = datetime(2026, 2, 1, 18, 0, tzinfo=UTC)
LENA_ON_THE_GARDEN = "Die Parzelle ist mein Lieblingsort, im Garten würde ich nur Kürbisse ziehen."
GROUP_CHAT = [
    ("Sam", "Gibt es was Neues vom Garten?"),
    ("Tom", "Der Garten macht viel zu viel Arbeit, das Unkraut gewinnt jeden Sommer."),
    ("Lena", LENA_ON_THE_GARDEN),
    ("Priya", "Der Vorstand vom Garten will schon wieder die Pacht erhöhen."),
    ("Nova", "Erinnere mich, am Wochenende nach dem Garten zu fragen."),
    ("Lena", "Ich habe heute Morgen Brot gebacken."),
    ("Tom", "Das Spiel gestern Abend war furchtbar."),
    ("Sam", "Hat jemand den Plan für den Garten aufgeschrieben?"),
    ("Lena", "Der Bus war heute wieder zu spät."),
    ("Lena", "Meine Schwester hat heute Nachmittag angerufen."),
]


def group_chat() -> bytes:
    lines: list[dict[str, Any]] = [
        {"user_name": "Sam", "character_name": "Nova", "create_date": START.isoformat()}
    ]
    for minute, (name, text) in enumerate(GROUP_CHAT):
        lines.append(
            {
                "name": name,
                "is_user": name == "Sam",
                "is_system": False,
                "send_date": (START + timedelta(minutes=minute)).isoformat(),
                "mes": text,
            }
        )
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode()


async def test_a_speakers_genitive_selects_her_turns(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> None:
    await import_chat(db, model, PAIR, parse_chat(group_chat(), tz=TZ, name="group.jsonl"))
    async with db.connection() as conn:
        terms = await text_search.query_terms(conn, PAIR, "Was ist Lenas Meinung zum Garten?")
    assert terms.speakers == ("lena",)
    found = await search_memory(
        redis, db, model, PAIR, "Was ist Lenas Meinung zum Garten?", now=START, tz=TZ
    )
    top = found.hits[0]
    assert top.text == LENA_ON_THE_GARDEN, [(h.text[:20], h.signals) for h in found.hits]
    assert "sprecher" in top.signals, "her turns are a list of their own"
