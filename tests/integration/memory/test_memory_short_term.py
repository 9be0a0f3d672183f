"""Short-term memory (KZG) against the real Redis: creation, refusal, reinforcement,
promotion queue and retrieval threshold (spec pipeline §3, acceptance behaviours 2-5)."""

from __future__ import annotations

import json
import logging
from typing import Any

import numpy as np
import pytest
import redis.asyncio as aioredis

from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.memory import curve
from novaberg.memory.short_term import ShortTermMemory, embed_text
from novaberg.store import keys
from novaberg.store.keys import Pair

PAIR = Pair("meister", "nova")
OTHER = Pair("anna", "nova")


class Clock:
    def __init__(self, now: float = 1_790_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        self.now += 0.001
        return self.now


def daten(segment: str, salienz: Any, themen: list[str], **extra: Any) -> dict[str, Any]:
    obj = {
        "themen": themen,
        "salienz": salienz,
        "gedaechtnistyp": "lang",
        "dimension": "interessen",
        "intentionen": ["information_teilen"],
        "emotion": "freude",
        "modus": "alltag",
        **extra,
    }
    return {"salienz_obj": obj, "segment": segment, "segment_index": 0, "segment_gesamt": 1}


@pytest.fixture
def memory(redis: aioredis.Redis, model: ModelLayer) -> ShortTermMemory:
    return ShortTermMemory(redis, model, clock=Clock())


async def test_unreadable_salience_writes_nothing_and_is_logged(
    memory: ShortTermMemory,
    redis: aioredis.Redis,
    scripted: ScriptedLLM,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="novaberg.memory.short_term"):
        for unreadable in (None, "hoch", True, float("nan")):
            result = await memory.store_salience_write(
                PAIR, daten("Ich war in Rom.", unreadable, ["rom"]), "user", "t1"
            )
            assert result is None
    assert await redis.keys("kzg:*") == []
    assert scripted.calls == []  # no condensing call for a refused write
    assert sum("salienz_unlesbar" in r.getMessage() for r in caplog.records) == 4


async def test_below_gate_is_refused(memory: ShortTermMemory, redis: aioredis.Redis) -> None:
    assert await memory.store_salience_write(PAIR, daten("Hallo.", 0.29, ["gruss"]), "user") is None
    assert await redis.keys("kzg:*") == []


async def test_entry_is_stored_with_tier_fields_and_index(
    memory: ShortTermMemory, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    scripted.add("letzte Woche mit Anna", "Der Nutzer war letzte Woche mit Anna in Rom.")
    stored = await memory.store_salience_write(
        PAIR,
        daten("Ich war letzte Woche mit Anna in Rom.", 0.5, ["Rom", "Reise"]),
        "assistant",
        "turn-1",
        {"emotion": "begeisterung", "arousal": 0.7, "emotions_vektor": "aufbluehen"},
    )
    assert stored is not None
    assert stored.key.startswith("kzg:meister:nova:")
    assert stored.kern == "Der Nutzer war letzte Woche mit Anna in Rom."
    entry = await memory.store.get(stored.key)
    assert entry is not None and entry.vector is not None
    fields = entry.fields
    assert fields["beobachter"] == "assistant"
    assert fields["themen"] == "Rom, Reise"
    assert fields["inhalt"] == stored.kern
    assert float(fields["salienz"]) == pytest.approx(curve.salience(0.5))
    assert float(fields["salienz_eingang"]) == 0.5
    assert fields["salienz_eingang_herkunft"] == "gemessen"
    assert fields["haeufigkeit"] == "1"
    assert fields["emotion"] == "begeisterung"  # perception wins over the salience object
    assert fields["modus"] == "alltag"
    assert json.loads(fields["intentionen"]) == ["information_teilen"]
    expected = await memory.model.embed([embed_text(["Rom", "Reise"], stored.kern)])
    assert np.allclose(entry.vector, np.asarray(expected[0], dtype=np.float32))
    ttl = await redis.ttl(stored.key)
    assert 13 * 86_400 < ttl <= 14 * 86_400
    assert await redis.smembers(keys.kzg_index(PAIR)) == {stored.key}
    assert await redis.get(keys.profile_dirty(PAIR)) == "1"
    assert await redis.llen(keys.promotion_queue("meister")) == 0  # below the gate
    call = scripted.calls[-1]
    assert call["role"] == "analysis" and "Nova" in call["prompt"]


async def test_empty_kern_or_failed_condense_writes_nothing(
    memory: ShortTermMemory, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    scripted.add("Belangloses", "   ")
    scripted.add("Kaputt", fault="error")
    assert (
        await memory.store_salience_write(PAIR, daten("Belangloses.", 0.6, ["x"]), "user") is None
    )
    assert await memory.store_salience_write(PAIR, daten("Kaputt.", 0.6, ["x"]), "user") is None
    assert await redis.keys("kzg:*") == []


async def test_shared_theme_reinforces_only_same_pair_neighbours(
    memory: ShortTermMemory, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    scripted.add("Pizza", "Der Nutzer liebt Pizza.")
    scripted.add("Pasta", "Der Nutzer kocht gern Pasta.")
    scripted.add("Fussball", "Der Nutzer spielt Fussball.")
    first = await memory.store_salience_write(PAIR, daten("Pizza!", 0.5, ["Essen"]), "user")
    unrelated = await memory.store_salience_write(PAIR, daten("Fussball!", 0.5, ["Sport"]), "user")
    foreign = await memory.store_salience_write(OTHER, daten("Pizza!", 0.5, ["essen"]), "user")
    assert first and unrelated and foreign
    await redis.expire(first.key, 3 * 86_400)  # shorter than its tier: reinforcement raises it
    before = await memory.store.get(first.key)
    second = await memory.store_salience_write(PAIR, daten("Pasta!", 0.4, [" essen "]), "user")
    assert second is not None and second.reinforced == (first.key,)
    after = await memory.store.get(first.key)
    assert after is not None and before is not None
    assert after.fields["haeufigkeit"] == "2"
    assert float(after.fields["salienz"]) == pytest.approx(curve.salience(0.5, 2))
    assert after.fields["inhalt"] == before.fields["inhalt"]
    assert np.array_equal(after.vector, before.vector)
    assert 13 * 86_400 < await redis.ttl(first.key) <= 14 * 86_400
    for untouched in (unrelated.key, foreign.key):
        entry = await memory.store.get(untouched)
        assert entry is not None and entry.fields["haeufigkeit"] == "1"
    assert (await memory.store.get(second.key)).fields["haeufigkeit"] == "1"  # type: ignore[union-attr]


async def test_reinforcement_never_shortens_ttl_and_skips_unmeasured(
    memory: ShortTermMemory, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    scripted.add("Berg", "Der Nutzer wandert.")
    high = await memory.store_salience_write(PAIR, daten("Berg hoch.", 0.69, ["wandern"]), "user")
    assert high is not None
    await redis.expire(high.key, 40 * 86_400)
    legacy = keys.kzg_entry(PAIR, 1)
    await redis.hset(legacy, mapping={"user_id": "meister", "themen": "wandern", "haeufigkeit": 1})
    await redis.sadd(keys.kzg_index(PAIR), legacy)
    await memory.store_salience_write(PAIR, daten("Berg runter.", 0.4, ["Wandern"]), "user")
    assert await redis.ttl(high.key) > 39 * 86_400
    assert await redis.hget(legacy, "haeufigkeit") == "1"


async def test_gate_crossing_queues_exactly_one_promotion(
    memory: ShortTermMemory, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    scripted.add("Hochzeit", "Der Nutzer heiratet im Mai.")
    scripted.add("Ring", "Der Nutzer hat einen Ring gekauft.")
    strong = await memory.store_salience_write(PAIR, daten("Hochzeit!", 0.8, ["hochzeit"]), "user")
    assert strong is not None and strong.promotion_queued
    near = await memory.store_salience_write(PAIR, daten("Ring.", 0.65, ["Hochzeit"]), "user")
    assert near is not None and not near.promotion_queued
    # the neighbour reaches the gate when reinforced twice: 0.65 + 2 × 0.03 ≥ 0.7
    await memory.store_salience_write(PAIR, daten("Ring!", 0.31, ["hochzeit"]), "user")
    assert await redis.llen(keys.promotion_queue("meister")) == 1
    await memory.store_salience_write(PAIR, daten("Ring!", 0.31, ["hochzeit"]), "user")
    queue = [json.loads(j) for j in await redis.lrange(keys.promotion_queue("meister"), 0, -1)]
    assert [j["key"] for j in queue] == [strong.key, near.key]
    assert queue[0]["aufgabe"] == "lzg_promotion" and queue[0]["character_id"] == "nova"
    await memory.store_salience_write(PAIR, daten("Ring!!", 0.31, ["hochzeit"]), "user")
    assert await redis.llen(keys.promotion_queue("meister")) == 2  # pushed once each
    assert await redis.smembers(keys.promotion_users()) == {"meister"}


async def test_promotions_off_queues_nothing(
    redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    memory = ShortTermMemory(redis, model, clock=Clock(), promotions=False)
    scripted.add("Hochzeit", "Der Nutzer heiratet im Mai.")
    stored = await memory.store_salience_write(PAIR, daten("Hochzeit!", 0.9, ["x"]), "user")
    assert stored is not None and not stored.promotion_queued
    assert await redis.llen(keys.promotion_queue("meister")) == 0


async def test_retrieval_keeps_only_similarity_at_or_above_threshold(
    memory: ShortTermMemory, redis: aioredis.Redis, scripted: ScriptedLLM, model: ModelLayer
) -> None:
    texts = {
        "Rom": ("Der Nutzer war mit Anna in Rom im Urlaub.", "user"),
        "Katze": ("Die Katze des Nutzers heisst Mimi.", "assistant"),
        "Auto": ("Das Auto des Nutzers ist rot und alt.", "user"),
    }
    for word, (kern, _) in texts.items():
        scripted.add(word, kern)
    stored = {}
    for word, (_, observer) in texts.items():
        entry = await memory.store_salience_write(PAIR, daten(f"{word}.", 0.6, []), observer)
        assert entry is not None
        stored[entry.key] = entry
    query = (await model.embed(["Anna und der Nutzer im Urlaub in Rom"]))[0]
    hits = await memory.nearest(PAIR, query)
    assert len(hits) == 3
    expected = {h.key for h in hits if (1 + h.cosine) / 2 >= 0.72}
    assert expected and expected != {h.key for h in hits}  # the test data straddles 0.72
    result = await memory.retrieve(PAIR, query)
    assert {e.meta["key"] for e in result} == expected
    assert all(
        e.quelle == "kzg" and e.subtyp == "interessen" and e.meta["similarity"] >= 0.72
        for e in result
    )
    unrelated = (await model.embed(["Quantenphysik Vorlesung morgen"]))[0]
    assert await memory.retrieve(PAIR, unrelated) == []
    assert await memory.retrieve(OTHER, query) == []


async def test_retrieval_sees_both_perspectives_and_prunes_expired(
    memory: ShortTermMemory, redis: aioredis.Redis, scripted: ScriptedLLM, model: ModelLayer
) -> None:
    scripted.add("Garten", "Im Garten des Nutzers bluehen Rosen.")
    a = await memory.store_salience_write(PAIR, daten("Garten.", 0.6, ["garten"]), "user")
    b = await memory.store_salience_write(PAIR, daten("Garten!", 0.6, ["garten"]), "assistant")
    assert a and b
    query = (await model.embed([embed_text(["garten"], a.kern)]))[0]
    result = await memory.retrieve(PAIR, query)
    assert {e.meta["beobachter"] for e in result} == {"user", "assistant"}
    await redis.delete(a.key)  # expired
    result = await memory.retrieve(PAIR, query)
    assert [e.meta["key"] for e in result] == [b.key]
    assert await redis.smembers(keys.kzg_index(PAIR)) == {b.key}


async def test_search_cache_sees_new_entries_of_other_writers(
    redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    reader = ShortTermMemory(redis, model, clock=Clock())
    writer = ShortTermMemory(redis, model, clock=Clock(1_800_000_000.0))  # another process
    scripted.add("Oper", "Der Nutzer geht gern in die Oper.")
    first = await writer.store_salience_write(PAIR, daten("Oper.", 0.6, ["kultur"]), "user")
    assert first is not None
    query = (await model.embed([embed_text(["kultur"], first.kern)]))[0]
    assert [e.meta["key"] for e in await reader.retrieve(PAIR, query)] == [first.key]
    second = await writer.store_salience_write(PAIR, daten("Oper!", 0.6, ["kultur"]), "assistant")
    assert second is not None
    found = {e.meta["key"] for e in await reader.retrieve(PAIR, query)}
    assert found == {first.key, second.key}


async def test_own_writes_update_the_search_cache_without_a_refetch(
    redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    memory = ShortTermMemory(redis, model, clock=Clock())
    scripted.add("Oper", "Der Nutzer geht gern in die Oper.")
    first = await memory.store_salience_write(PAIR, daten("Oper.", 0.6, ["kultur"]), "user")
    assert first is not None
    query = (await model.embed([embed_text(["kultur"], first.kern)]))[0]
    assert [e.meta["key"] for e in await memory.retrieve(PAIR, query)] == [first.key]
    second = await memory.store_salience_write(PAIR, daten("Oper!", 0.6, ["kultur"]), "user")
    assert second is not None
    cached = memory.store._pairs[PAIR]
    # the cache already holds the new entry at the version Redis has now
    assert cached.version == await redis.get(keys.kzg_index_version(PAIR))
    assert second.key in cached.keys and len(cached.keys) == cached.matrix.shape[0] == 2
    found = {e.meta["key"] for e in await memory.retrieve(PAIR, query)}
    assert found == {first.key, second.key}
