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
from novaberg.memory.short_term.creation import ShortTermWriter
from novaberg.memory.short_term.entry_text import embed_text
from novaberg.memory.short_term.reinforcement import reinforce_neighbours
from novaberg.memory.short_term.retrieval import RETRIEVAL_TOP_K, retrieve
from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints
from novaberg.store import keys
from novaberg.store.redis_client import create_redis
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_search import PairCache, rank

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
def memory(redis: aioredis.Redis, model: ModelLayer) -> ShortTermWriter:
    return ShortTermWriter(redis, model, clock=Clock())


async def test_unreadable_salience_writes_nothing_and_is_logged(
    memory: ShortTermWriter,
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


async def test_below_gate_is_refused(memory: ShortTermWriter, redis: aioredis.Redis) -> None:
    assert await memory.store_salience_write(PAIR, daten("Hallo.", 0.29, ["gruss"]), "user") is None
    assert await redis.keys("kzg:*") == []


async def test_entry_is_stored_with_tier_fields_and_index(
    memory: ShortTermWriter, redis: aioredis.Redis, scripted: ScriptedLLM
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
    assert stored.key.startswith("kzg:{meister}:nova:")
    assert stored.core == "Der Nutzer war letzte Woche mit Anna in Rom."
    entry = await memory.store.get(stored.key)
    assert entry is not None and entry.vector is not None
    fields = entry.fields
    assert fields["beobachter"] == "assistant"
    assert fields["themen"] == "Rom, Reise"
    assert fields["inhalt"] == stored.core
    assert float(fields["salienz"]) == pytest.approx(curve.salience(0.5))
    assert float(fields["salienz_eingang"]) == 0.5
    assert fields["salienz_eingang_herkunft"] == "gemessen"
    assert fields["haeufigkeit"] == "1"
    assert fields["emotion"] == "begeisterung"  # perception wins over the salience object
    assert fields["modus"] == "alltag"
    assert json.loads(fields["intentionen"]) == ["information_teilen"]
    expected = await memory.model.embed([embed_text(["Rom", "Reise"], stored.core)])
    assert np.allclose(entry.vector, np.asarray(expected[0], dtype=np.float32))
    ttl = await redis.ttl(stored.key)
    assert 13 * 86_400 < ttl <= 14 * 86_400
    assert await redis.smembers(keys.short_term_index(PAIR)) == {stored.key}
    assert await redis.get(keys.profile_dirty(PAIR)) == "1"
    assert await redis.llen(keys.promotion_queue("meister")) == 0  # below the gate
    call = scripted.calls[-1]
    assert call["role"] == "analysis" and "Nova" in call["prompt"]


async def test_empty_kern_or_failed_condense_writes_nothing(
    memory: ShortTermWriter, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    scripted.add("Belangloses", "   ")
    scripted.add("Kaputt", fault="error")
    assert (
        await memory.store_salience_write(PAIR, daten("Belangloses.", 0.6, ["x"]), "user") is None
    )
    assert await memory.store_salience_write(PAIR, daten("Kaputt.", 0.6, ["x"]), "user") is None
    assert await redis.keys("kzg:*") == []


async def test_shared_theme_reinforces_only_same_pair_neighbours(
    memory: ShortTermWriter, redis: aioredis.Redis, scripted: ScriptedLLM
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
    memory: ShortTermWriter, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    scripted.add("Berg", "Der Nutzer wandert.")
    high = await memory.store_salience_write(PAIR, daten("Berg hoch.", 0.69, ["wandern"]), "user")
    assert high is not None
    await redis.expire(high.key, 40 * 86_400)
    legacy = keys.short_term_entry(PAIR, 1)
    await redis.hset(legacy, mapping={"user_id": "meister", "themen": "wandern", "haeufigkeit": 1})
    await redis.sadd(keys.short_term_index(PAIR), legacy)
    await memory.store_salience_write(PAIR, daten("Berg runter.", 0.4, ["Wandern"]), "user")
    assert await redis.ttl(high.key) > 39 * 86_400
    assert await redis.hget(legacy, "haeufigkeit") == "1"


async def test_gate_crossing_queues_exactly_one_promotion(
    memory: ShortTermWriter, redis: aioredis.Redis, scripted: ScriptedLLM
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
    memory = ShortTermWriter(redis, model, clock=Clock(), promotions=False)
    scripted.add("Hochzeit", "Der Nutzer heiratet im Mai.")
    stored = await memory.store_salience_write(PAIR, daten("Hochzeit!", 0.9, ["x"]), "user")
    assert stored is not None and not stored.promotion_queued
    assert await redis.llen(keys.promotion_queue("meister")) == 0


async def test_retrieval_keeps_only_similarity_at_or_above_threshold(
    memory: ShortTermWriter, redis: aioredis.Redis, scripted: ScriptedLLM, model: ModelLayer
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
    hits = await memory.store.nearest(PAIR, query, RETRIEVAL_TOP_K)
    assert len(hits) == 3
    expected = {h.key for h in hits if (1 + h.cosine) / 2 >= 0.72}
    assert expected and expected != {h.key for h in hits}  # the test data straddles 0.72
    result = await retrieve(memory.store, PAIR, query)
    assert {e.meta["key"] for e in result} == expected
    assert all(
        e.source == "kzg" and e.subtype == "interessen" and e.meta["similarity"] >= 0.72
        for e in result
    )
    unrelated = (await model.embed(["Quantenphysik Vorlesung morgen"]))[0]
    assert await retrieve(memory.store, PAIR, unrelated) == []
    assert await retrieve(memory.store, OTHER, query) == []


async def test_retrieval_sees_both_perspectives_and_prunes_expired(
    memory: ShortTermWriter, redis: aioredis.Redis, scripted: ScriptedLLM, model: ModelLayer
) -> None:
    scripted.add("Garten", "Im Garten des Nutzers bluehen Rosen.")
    a = await memory.store_salience_write(PAIR, daten("Garten.", 0.6, ["garten"]), "user")
    b = await memory.store_salience_write(PAIR, daten("Garten!", 0.6, ["garten"]), "assistant")
    assert a and b
    query = (await model.embed([embed_text(["garten"], a.core)]))[0]
    result = await retrieve(memory.store, PAIR, query)
    assert {e.meta["beobachter"] for e in result} == {"user", "assistant"}
    await redis.delete(a.key)  # expired
    result = await retrieve(memory.store, PAIR, query)
    assert [e.meta["key"] for e in result] == [b.key]
    assert await redis.smembers(keys.short_term_index(PAIR)) == {b.key}


async def test_search_cache_sees_new_entries_of_other_writers(
    redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    reader = ShortTermWriter(redis, model, clock=Clock())
    writer = ShortTermWriter(redis, model, clock=Clock(1_800_000_000.0))  # another process
    scripted.add("Oper", "Der Nutzer geht gern in die Oper.")
    first = await writer.store_salience_write(PAIR, daten("Oper.", 0.6, ["kultur"]), "user")
    assert first is not None
    query = (await model.embed([embed_text(["kultur"], first.core)]))[0]
    assert [e.meta["key"] for e in await retrieve(reader.store, PAIR, query)] == [first.key]
    second = await writer.store_salience_write(PAIR, daten("Oper!", 0.6, ["kultur"]), "assistant")
    assert second is not None
    found = {e.meta["key"] for e in await retrieve(reader.store, PAIR, query)}
    assert found == {first.key, second.key}


async def test_own_writes_update_the_search_cache_without_a_refetch(
    redis: aioredis.Redis, model: ModelLayer, scripted: ScriptedLLM
) -> None:
    memory = ShortTermWriter(redis, model, clock=Clock())
    scripted.add("Oper", "Der Nutzer geht gern in die Oper.")
    first = await memory.store_salience_write(PAIR, daten("Oper.", 0.6, ["kultur"]), "user")
    assert first is not None
    query = (await model.embed([embed_text(["kultur"], first.core)]))[0]
    assert [e.meta["key"] for e in await retrieve(memory.store, PAIR, query)] == [first.key]
    second = await memory.store_salience_write(PAIR, daten("Oper!", 0.6, ["kultur"]), "user")
    assert second is not None
    cached = memory.store._pairs[PAIR]
    # the cache already holds the new entry at the version Redis has now
    assert cached.version == await redis.get(keys.short_term_index_version(PAIR))
    assert second.key in cached.keys and len(cached.keys) == cached.matrix.shape[0] == 2
    found = {e.meta["key"] for e in await retrieve(memory.store, PAIR, query)}
    assert found == {first.key, second.key}


async def test_written_through_matrix_grows_in_place_to_the_stacked_rows(
    redis: aioredis.Redis,
) -> None:
    """Many own creates grow the cached matrix in place (past its spare rows, several
    times): it is exactly the matrix of stacking each new normalised row onto the one
    searched first, so searches score alike; and it matches a matrix rebuilt from Redis
    (up to the rounding of normalising one row instead of all)."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((60, 8)).astype(np.float32)
    store = ShortTermStore(redis)
    await store.create(PAIR, {"inhalt": "0"}, vectors[0], ttl_seconds=3600, epoch_ms=1)
    assert len(await store.nearest(PAIR, vectors[0], 3)) == 1  # the cache is built
    expected = store._pairs[PAIR].matrix.copy()
    for i, vector in enumerate(vectors[1:], start=1):
        values = [float(x) for x in vector]
        await store.create(PAIR, {"inhalt": str(i)}, values, ttl_seconds=3600, epoch_ms=1 + i)
        row = np.asarray(values, dtype=np.float32)
        expected = np.vstack([expected, (row / float(np.linalg.norm(row)))[None, :]])
        if i in (5, 30):  # searches between the creates see the grown matrix
            assert len(await store.nearest(PAIR, vector, 3)) == 3
    cached = store._pairs[PAIR]
    assert cached.version == await redis.get(keys.short_term_index_version(PAIR))  # no refetch
    assert len(cached.keys) == 60
    assert cached.matrix.dtype == expected.dtype and cached.matrix.flags.c_contiguous
    assert np.array_equal(cached.matrix, expected)
    stacked = PairCache(cached.version, list(cached.keys), expected)
    for query in vectors[:10]:
        unit = query / np.linalg.norm(query)
        ours, theirs = rank(cached, unit, 10), rank(stacked, unit, 10)
        assert np.array_equal(ours[0], theirs[0]) and ours[2] == theirs[2]
    rebuilt = ShortTermStore(redis)  # another process: its matrix comes from Redis
    assert len(await rebuilt.nearest(PAIR, vectors[0], 3)) == 3
    fresh = rebuilt._pairs[PAIR]
    fresh_rows = dict(zip(fresh.keys, fresh.matrix, strict=True))
    for key, row in zip(cached.keys, cached.matrix, strict=True):
        assert np.allclose(row, fresh_rows[key], rtol=1e-6, atol=1e-7)


async def test_reinforcement_compares_unicode_themes_case_insensitively(
    memory: ShortTermWriter, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    scripted.add("Umzug", "Der Nutzer zieht nach Köln.")
    scripted.add("Dom", "Der Nutzer mag den Kölner Dom.")
    moving = await memory.store_salience_write(PAIR, daten("Umzug.", 0.5, ["Köln"]), "user")
    cathedral = await memory.store_salience_write(PAIR, daten("Dom.", 0.5, ["Kölner Dom"]), "user")
    assert moving and cathedral
    stored = await memory.store_salience_write(PAIR, daten("Umzug!", 0.5, [" KÖLN "]), "user")
    assert stored is not None and stored.reinforced == (moving.key,)  # a whole theme only
    assert await redis.hget(moving.key, "haeufigkeit") == "2"
    assert float(str(await redis.hget(moving.key, "salienz"))) == pytest.approx(
        curve.salience(0.5, 2)
    )
    assert await redis.hget(cathedral.key, "haeufigkeit") == "1"
    assert await redis.hget(moving.key, "themen") == "Köln"  # content stays as written
    # the same rule when called on its own (not from a create)
    again = await reinforce_neighbours(
        memory.store, memory.gate, PAIR, stored.key, ["kölner DOM"], clock=memory.clock
    )
    assert again == [cathedral.key]
    assert await redis.hget(cathedral.key, "haeufigkeit") == "2"
    assert await redis.hget(stored.key, "haeufigkeit") == "1"


async def test_theme_with_a_comma_matches_no_stored_theme(
    memory: ShortTermWriter, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    scripted.add("Reise", "Der Nutzer plant eine Reise.")
    first = await memory.store_salience_write(PAIR, daten("Reise.", 0.5, ["rom", "paris"]), "user")
    assert first is not None
    # stored themes are split at commas when compared, so "rom,paris" is no stored theme
    second = await memory.store_salience_write(PAIR, daten("Reise!", 0.5, ["Rom,Paris"]), "user")
    assert second is not None and second.reinforced == ()
    assert await redis.hget(first.key, "haeufigkeit") == "1"


async def test_entries_written_before_the_normalised_field_are_still_reinforced(
    memory: ShortTermWriter, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    fields = {
        "user_id": "meister",
        "character_id": "nova",
        "beobachter": "user",
        "themen": "Köln, Umzug",
        "inhalt": "Der Nutzer zieht um.",
        "salienz": repr(curve.salience(0.66)),
        "salienz_eingang": "0.66",
        "haeufigkeit": 1,
    }
    vector = (await memory.model.embed(["alt"]))[0]
    old = await memory.store.create(PAIR, fields, vector, ttl_seconds=86_400, epoch_ms=1000)
    other = await memory.store.create(
        PAIR, {**fields, "themen": "Sport"}, vector, ttl_seconds=86_400, epoch_ms=2000
    )
    assert await redis.hget(old, "themen_norm") is None
    assert await redis.get(keys.profile_dirty(PAIR)) is None  # no flag asked for
    scripted.add("Kisten", "Der Nutzer packt Kisten.")
    stored = await memory.store_salience_write(PAIR, daten("Kisten.", 0.5, ["köln"]), "user")
    assert stored is not None and stored.reinforced == (old,)
    assert await redis.hget(old, "haeufigkeit") == "2"
    assert float(str(await redis.hget(old, "salienz"))) == pytest.approx(curve.salience(0.66, 2))
    assert 13 * 86_400 < await redis.ttl(old) <= 14 * 86_400  # raised to the new tier
    assert await redis.hget(other, "haeufigkeit") == "1"
    # 0.66 + 2 × 0.03 ≥ 0.7: the legacy neighbour crosses the gate on its second bump
    await memory.store_salience_write(PAIR, daten("Kisten!", 0.5, ["UMZUG"]), "user")
    queue = [json.loads(j) for j in await redis.lrange(keys.promotion_queue("meister"), 0, -1)]
    assert [(j["key"], j["themen"]) for j in queue] == [(old, ["köln", "umzug"])]


async def test_reinforcement_prunes_expired_members_and_queues_normalised_themes(
    memory: ShortTermWriter, redis: aioredis.Redis, scripted: ScriptedLLM
) -> None:
    scripted.add("Hochzeit", "Der Nutzer heiratet im Mai.")
    near = await memory.store_salience_write(
        PAIR, daten("Hochzeit.", 0.65, ["Hochzeit", "Ärger"]), "user"
    )
    gone = await memory.store_salience_write(PAIR, daten("Hochzeit!", 0.4, ["hochzeit"]), "user")
    assert near and gone
    await redis.delete(gone.key)  # expired
    stored = await memory.store_salience_write(PAIR, daten("Hochzeit?", 0.4, ["ÄRGER"]), "user")
    assert stored is not None and stored.reinforced == (near.key,)
    assert gone.key not in await redis.smembers(keys.short_term_index(PAIR))
    assert await redis.hget(near.key, "haeufigkeit") == "3"  # bumped by both later entries
    queue = [json.loads(j) for j in await redis.lrange(keys.promotion_queue("meister"), 0, -1)]
    assert [(j["key"], j["themen"]) for j in queue] == [(near.key, ["hochzeit", "ärger"])]
    assert await redis.hget(near.key, "befoerderung_am") is not None


async def test_cached_search_notices_entries_added_and_removed_by_another_client(
    redis: aioredis.Redis, endpoints: Endpoints, model: ModelLayer
) -> None:
    reader = ShortTermStore(redis)
    other = create_redis(endpoints.redis_url)  # another process: its own client and cache
    try:
        writer = ShortTermStore(other)
        texts = ["Der Nutzer segelt gern.", "Die Katze heisst Mimi.", "Das Auto ist rot."]
        vectors = await model.embed(texts)
        fields = {"user_id": "meister", "character_id": "nova", "salienz": "0.8"}
        made = [
            await writer.create(
                PAIR, {**fields, "inhalt": t}, v, ttl_seconds=3600, epoch_ms=1000 + i
            )
            for i, (t, v) in enumerate(zip(texts[1:], vectors[1:], strict=True))
        ]
        query = vectors[0]
        assert {h.key for h in await reader.nearest(PAIR, query, 5)} == set(made)
        sailing = await writer.create(
            PAIR, {**fields, "inhalt": texts[0]}, query, ttl_seconds=3600, epoch_ms=5000
        )
        hits = await reader.nearest(PAIR, query, 5)
        assert hits[0].key == sailing and len(hits) == 3
        assert hits[0].fields["inhalt"] == texts[0] and "embedding" not in hits[0].fields
        await writer.forget(PAIR, [made[0]])
        assert {h.key for h in await reader.nearest(PAIR, query, 5)} == {sailing, made[1]}
        cached = reader._pairs[PAIR]
        assert cached.version == await redis.get(keys.short_term_index_version(PAIR))
    finally:
        await other.aclose()


async def test_search_hits_keep_every_text_field_however_it_is_encoded(
    redis: aioredis.Redis, model: ModelLayer
) -> None:
    store = ShortTermStore(redis)
    vector = (await model.embed(["Notiz"]))[0]
    fields = {"user_id": "meister", "inhalt": "Notiz", "roh": b"a\xffb", "nul": "x\0y", "leer": ""}
    key = await store.create(PAIR, fields, vector, ttl_seconds=3600, epoch_ms=1)
    other = await store.create(PAIR, {"inhalt": "Ü"}, vector, ttl_seconds=3600, epoch_ms=2)
    bare = await store.create(PAIR, {}, vector, ttl_seconds=3600, epoch_ms=3)  # vector only
    hits = {h.key: h.fields for h in await store.nearest(PAIR, vector, 5)}
    assert hits[bare] == {}  # a live entry, not mistaken for an expired one
    assert hits[key] == {
        "user_id": "meister",
        "inhalt": "Notiz",
        "roh": "a\ufffdb",
        "nul": "x\0y",
        "leer": "",
    }
    assert hits[other] == {"inhalt": "Ü"}
