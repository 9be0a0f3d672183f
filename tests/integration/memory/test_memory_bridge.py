"""The node-facing bridge: the dispatcher's kzg hand-over and the enricher's resonance."""

from __future__ import annotations

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.memory.bridge import (
    observer_for,
    resonance,
    short_term_store_for,
    store_short_term_writes,
)
from novaberg.memory.long_term.promotion import Promotion
from novaberg.pair import Pair
from novaberg.store import keys

PAIR = Pair("meister", "nova")


def write(segment: str, salienz: object, ziel: str = "kzg") -> dict[str, object]:
    return {
        "target": ziel,
        "action": "create",
        "data": {"salienz_obj": {"salienz": salienz, "themen": ["reise"]}, "segment": segment},
        "description": "",
    }


async def test_kzg_writes_give_the_top_salience_kern(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    scripted.add("Lissabon", "Der Nutzer fliegt nach Lissabon.")
    scripted.add("Koffer", "Der Nutzer packt den Koffer.")
    outcome = await store_short_term_writes(
        redis,
        db,
        model,
        PAIR,
        [
            write("Koffer.", 0.5),
            write("Lissabon!", 0.8),
            write("x", None),
            write("y", 0.9, "timeline"),
        ],
        observer=observer_for("user"),
        turn_id="t-1",
        perception={"emotion": "freude", "arousal": 0.6},
        promotions=False,
    )
    assert outcome.session_turn_kern == "Der Nutzer fliegt nach Lissabon."
    assert outcome.results[2:] == ["abgelehnt", "nicht_kzg"]
    assert [s.key for s in outcome.stored] == outcome.results[:2]
    assert outcome.summary()["kzg_abgelehnt"] == 1
    assert observer_for("character") == "assistant"
    async with db.connection() as conn:
        cur = await conn.execute("SELECT turn_id, kzg_id FROM verbindung ORDER BY id")
        assert [(r["turn_id"], r["kzg_id"]) for r in await cur.fetchall()] == [
            ("t-1", key) for key in outcome.results[:2]
        ]
    assert short_term_store_for(redis) is short_term_store_for(redis)  # one vector cache per client


async def test_resonance_brings_both_memories(
    redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    scripted.add("Lissabon", "Der Nutzer fliegt nach Lissabon.")
    outcome = await store_short_term_writes(
        redis,
        db,
        model,
        PAIR,
        [write("Lissabon!", 0.9)],
        observer="user",
        turn_id="t",
        perception={},
    )
    (stored,) = outcome.stored
    await Promotion(db, redis, model).promote(
        {"key": stored.key, "user_id": "meister", "character_id": "nova"}
    )
    assert await redis.llen(keys.promotion_queue("meister")) == 1
    query = (await model.embed(["Der Nutzer fliegt nach Lissabon"]))[0]
    found = await resonance(redis, db, model, PAIR, query, cluster=None, nova_emotion="freude")
    assert [e["quelle"] for e in found.entries()] == ["kzg", "lzg"]
    assert found.long_term.as_state()["anker_anzahl"] == 1
