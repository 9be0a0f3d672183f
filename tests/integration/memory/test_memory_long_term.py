"""Long-term memory (LZG) against the real PostgreSQL + pgvector: promotion (new node,
reinforcement, reactivation, edges), spreading read, decay (spec pipeline §9)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.layer import ModelLayer
from novaberg.memory import curve
from novaberg.memory.jobs.promotion import run_promotions
from novaberg.memory.long_term.decay import DEACTIVATION_THRESHOLD, decay, decayed_weight
from novaberg.memory.long_term.promotion import REINFORCEMENT_BOOST, Promotion
from novaberg.memory.long_term.spreading import spreading_read
from novaberg.pair import Pair
from novaberg.store import keys, long_term_nodes
from novaberg.store.short_term import ShortTermStore

PAIR = Pair("meister", "nova")
T0 = 1_790_000_000.0
YEAR = 365 * 86_400


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def short_term_entry(
    store: ShortTermStore,
    model: ModelLayer,
    inhalt: str,
    *,
    ms: int,
    themen: str = "",
    salienz: float = 0.95,
    emotion: str = "",
    pair: Pair = PAIR,
) -> str:
    vector = (await model.embed([inhalt]))[0]
    fields = {
        "user_id": pair.user_id,
        "character_id": pair.character_id,
        "beobachter": "user",
        "themen": themen,
        "inhalt": inhalt,
        "salienz": salienz,
        "salienz_eingang": 0.7,
        "haeufigkeit": 1,
        "dimension": "kontext",
        "gedaechtnistyp": "lang",
        "emotion": emotion,
        "erstellt_am": T0,
        "entitaet_ids": "",
    }
    return await store.create(pair, fields, vector, ttl_seconds=3600, epoch_ms=ms)


def job(key: str) -> dict[str, Any]:
    return {"aufgabe": "lzg_promotion", "user_id": "meister", "character_id": "nova", "key": key}


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(redis: aioredis.Redis) -> ShortTermStore:
    return ShortTermStore(redis)


@pytest.fixture
def memory(
    db: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: ModelLayer,
    store: ShortTermStore,
    clock: Clock,
) -> Promotion:
    return Promotion(db, redis, model, short_term=store, clock=clock)


async def node(db: AsyncConnectionPool, node_id: int) -> dict[str, Any]:
    async with db.connection() as conn:
        cur = await conn.execute("SELECT * FROM lzg_knoten WHERE id = %s", (node_id,))
        row = await cur.fetchone()
    assert row is not None
    return row


async def edges(db: AsyncConnectionPool) -> list[dict[str, Any]]:
    async with db.connection() as conn:
        cur = await conn.execute("SELECT * FROM lzg_kanten ORDER BY knoten_a_id, knoten_b_id")
        return list(await cur.fetchall())


async def test_promotion_creates_then_reinforces_on_near_duplicate(
    memory: Promotion,
    store: ShortTermStore,
    model: ModelLayer,
    db: AsyncConnectionPool,
    redis: aioredis.Redis,
) -> None:
    first = await short_term_entry(
        store, model, "Der Nutzer heiratet im Mai Anna in Rom.", ms=1, themen="Hochzeit, Rom"
    )
    async with db.connection() as conn:
        await conn.execute("INSERT INTO verbindung (turn_id, kzg_id) VALUES ('t1', %s)", (first,))
    created = await memory.promote(job(first))
    assert created.action == "neu" and created.node_id is not None
    row = await node(db, created.node_id)
    assert row["gewicht_roh"] == pytest.approx(0.95)
    assert row["gewicht_absolut"] == pytest.approx(curve.long_term_weight(0.95))
    assert row["gewicht_decay"] == pytest.approx(row["gewicht_absolut"])
    assert row["themen"] == ["hochzeit", "rom"] and row["aktiv"] and row["haeufigkeit"] == 1
    assert row["kzg_quell_key"] == first
    assert await store.get(first) is not None  # the short-term hash is kept
    assert await redis.get(keys.profile_dirty(PAIR)) == "1"
    async with db.connection() as conn:
        cur = await conn.execute("SELECT lzg_id FROM verbindung WHERE kzg_id = %s", (first,))
        assert (await cur.fetchone())["lzg_id"] == created.node_id

    again = await memory.promote(job(first))
    assert again.action == "schon_befoerdert" and again.node_id == created.node_id

    # near-duplicate (0.82 ≤ cosine < 1): one word more
    second = await short_term_entry(
        store, model, "Der Nutzer heiratet im Mai Anna in Rom bald.", ms=2
    )
    reinforced = await memory.promote(job(second))
    assert reinforced.action == "verstaerkt" and reinforced.node_id == created.node_id
    assert reinforced.cosine is not None and 0.82 <= reinforced.cosine < 0.99
    row = await node(db, created.node_id)
    assert row["gewicht_roh"] == pytest.approx(0.95 + REINFORCEMENT_BOOST)
    assert row["gewicht_absolut"] == pytest.approx(curve.long_term_weight(1.05))
    assert row["haeufigkeit"] == 2
    async with db.connection() as conn:
        count = await (await conn.execute("SELECT count(*) AS n FROM lzg_knoten")).fetchone()
    assert count["n"] == 1

    # the job runs again (its worker died after the commit): the node is not reinforced twice
    repeated = await memory.promote(job(second))
    assert repeated.action == "schon_befoerdert" and repeated.node_id == created.node_id
    assert (await node(db, created.node_id))["gewicht_roh"] == pytest.approx(
        0.95 + REINFORCEMENT_BOOST
    )


async def test_new_node_gets_two_directed_edges_per_joining_layer(
    memory: Promotion, store: ShortTermStore, model: ModelLayer, db: AsyncConnectionPool
) -> None:
    a = await memory.promote(
        job(await short_term_entry(store, model, "Anna liebt Katzen sehr.", ms=1, themen="Tiere"))
    )
    b = await memory.promote(
        job(
            await short_term_entry(
                store, model, "Der Nutzer faehrt Ski in Tirol.", ms=2, themen="Sport"
            )
        )
    )
    c = await memory.promote(
        job(
            await short_term_entry(
                store,
                model,
                "Ein Hund wohnt jetzt beim Nutzer.",
                ms=3,
                themen="tiere, Hund",
                salienz=1.0,
            )
        )
    )
    assert (a.action, b.action, c.action) == ("neu", "neu", "neu")
    rows = await edges(db)
    assert {(e["knoten_a_id"], e["knoten_b_id"]) for e in rows} == {
        (a.node_id, c.node_id),
        (c.node_id, a.node_id),
    }
    for e in rows:
        assert e["verbindungs_gruende"] == ["themen"] and e["geteilte_themen"] == ["tiere"]
        assert 0 < e["gewicht_absolut"] <= 10
    weak_to_strong = next(e for e in rows if e["knoten_a_id"] == a.node_id)
    strong_to_weak = next(e for e in rows if e["knoten_a_id"] == c.node_id)
    assert weak_to_strong["gewicht_roh"] < strong_to_weak["gewicht_roh"]

    # reinforcing c recomputes its edges from the new anchor weight
    before = {e["id"]: e["gewicht_roh"] for e in rows}
    again = await memory.promote(
        job(await short_term_entry(store, model, "Ein Hund wohnt jetzt beim Nutzer.", ms=4))
    )
    assert again.action == "verstaerkt" and again.edges == 2
    after = {e["id"]: e["gewicht_roh"] for e in await edges(db)}
    assert all(after[i] > before[i] for i in before)


async def test_inactive_match_is_half_reactivated(
    memory: Promotion, store: ShortTermStore, model: ModelLayer, db: AsyncConnectionPool
) -> None:
    created = await memory.promote(
        job(await short_term_entry(store, model, "Der Nutzer mag Jazz.", ms=1))
    )
    async with db.connection() as conn:
        await conn.execute("UPDATE lzg_knoten SET aktiv = FALSE, gewicht_decay = 0.05")
    back = await memory.promote(
        job(await short_term_entry(store, model, "Der Nutzer mag Jazz.", ms=2))
    )
    assert back.action == "reaktiviert" and back.node_id == created.node_id
    row = await node(db, created.node_id)
    assert row["aktiv"]
    assert row["gewicht_decay"] == pytest.approx((row["gewicht_absolut"] + 0.1) / 2)
    assert row["haeufigkeit"] == 1


async def test_decay_deactivates_unused_and_spares_used(
    memory: Promotion,
    store: ShortTermStore,
    model: ModelLayer,
    db: AsyncConnectionPool,
    clock: Clock,
) -> None:
    unused = await memory.promote(
        job(await short_term_entry(store, model, "Alte Geschichte vom Zelten.", ms=1))
    )
    used = await memory.promote(
        job(await short_term_entry(store, model, "Die Schwester heisst Lea.", ms=2))
    )
    assert unused.node_id and used.node_id
    clock.now = T0 + 8 * YEAR - 86_400
    async with db.connection() as conn:  # the seed's reinforcement on use
        await long_term_nodes.mark_retrieved(
            conn, [used.node_id], datetime.fromtimestamp(clock(), UTC)
        )
    clock.now = T0 + 8 * YEAR
    outcome = await decay(db, clock=clock)
    assert outcome.updated == 2 and outcome.deactivated == 1
    old, fresh = await node(db, unused.node_id), await node(db, used.node_id)
    assert not old["aktiv"]
    assert old["gewicht_decay"] == pytest.approx(
        decayed_weight(old["gewicht_absolut"], 8 * 365), rel=1e-6
    )
    assert old["gewicht_decay"] < DEACTIVATION_THRESHOLD
    assert fresh["aktiv"] and fresh["abrufe"] == 1
    assert fresh["gewicht_decay"] == pytest.approx(
        decayed_weight(fresh["gewicht_absolut"], 1), rel=1e-6
    )
    # a second run leaves the deactivated node alone
    assert (await decay(db, clock=clock)).updated == 1


async def test_decay_purges_old_pipeline_log_but_keeps_turn_roh(
    memory: Promotion, db: AsyncConnectionPool, clock: Clock
) -> None:
    async with db.connection() as conn:
        for art, age in (("node", 400), ("turn_roh", 400), ("node", 10)):
            await conn.execute(
                "INSERT INTO pipeline_log (erstellt_am, quelle, node, art)"
                " VALUES (to_timestamp(%s), 'x', 'x', %s)",
                (T0 - age * 86_400, art),
            )
    assert (await decay(db, clock=clock)).log_rows_deleted == 1
    async with db.connection() as conn:
        rows = await (await conn.execute("SELECT art FROM pipeline_log ORDER BY art")).fetchall()
    assert [r["art"] for r in rows] == ["node", "turn_roh"]


async def test_spreading_read_follows_edges_by_cluster_depth(
    memory: Promotion,
    store: ShortTermStore,
    model: ModelLayer,
    db: AsyncConnectionPool,
    clock: Clock,
) -> None:
    anchor = await memory.promote(
        job(
            await short_term_entry(
                store,
                model,
                "Der Nutzer segelt am Gardasee.",
                ms=1,
                themen="segeln",
                emotion="freude",
            )
        )
    )
    friend = await memory.promote(
        job(
            await short_term_entry(
                store, model, "Tom kauft ein neues Boot.", ms=2, themen="segeln, boot"
            )
        )
    )
    far = await memory.promote(
        job(await short_term_entry(store, model, "Die Werft liegt in Kiel.", ms=3, themen="boot"))
    )
    query = (await model.embed(["Der Nutzer segelt am Gardasee"]))[0]

    shallow = await spreading_read(
        db, PAIR, query, "werkstatt", "freude", mark_retrieved=False, clock=clock
    )
    assert shallow.depth == 0 and shallow.anchor_count == 1
    assert [m.node_id for m in shallow.memories] == [anchor.node_id]

    deep = await spreading_read(db, PAIR, query, "bier", "freude", clock=clock)
    assert deep.depth == 2 and deep.cluster == "bier" and deep.nova_sector is not None
    by_id = {m.node_id: m for m in deep.memories}
    assert set(by_id) == {anchor.node_id, friend.node_id, far.node_id}
    assert by_id[anchor.node_id].shell == 0 and by_id[friend.node_id].shell == 1
    assert by_id[far.node_id].shell == 2
    assert [s.from_node_id for s in by_id[far.node_id].path] == [anchor.node_id, friend.node_id]
    weights = [m.sort_weight for m in deep.memories]
    assert weights == sorted(weights, reverse=True)
    assert by_id[friend.node_id].sort_weight == pytest.approx(
        by_id[friend.node_id].decayed_weight * 0.75
    )
    state = deep.as_state()
    assert state["anker_anzahl"] == 1 and len(state["erinnerungen"]) == 3
    assert json.dumps(state)  # serialisable into the graph state / logs
    entries = deep.entries()
    assert {e.source for e in entries} == {"lzg"} and all(0 < e.weight <= 1 for e in entries)
    for m in deep.memories:
        assert (await node(db, m.node_id))["abrufe"] == 1  # marked retrieved

    unrelated = (await model.embed(["Quantenphysik Vorlesung"]))[0]
    empty = await spreading_read(db, PAIR, unrelated, None, clock=clock)
    assert empty.anchor_count == 0 and empty.memories == [] and empty.cluster == "paradox"


async def test_promotion_job_drains_queue_requeues_and_gives_up(
    memory: Promotion, store: ShortTermStore, model: ModelLayer, redis: aioredis.Redis
) -> None:
    good = await short_term_entry(store, model, "Der Nutzer lernt Spanisch.", ms=1)
    queue, working = keys.promotion_queue("meister"), keys.promotion_working("meister")
    gone = job(keys.short_term_entry(PAIR, 999))  # expired before promotion
    broken = {**job(await short_term_entry(store, model, "Kaputt.", ms=2)), "character_id": "nova"}
    await redis.hdel(broken["key"], "salienz")  # promotion of this one raises
    for item in (job(good), gone, broken):
        await redis.rpush(queue, json.dumps(item))
    await redis.rpush(queue, "kein json")
    await redis.sadd(keys.promotion_users(), "meister")

    counts = await run_promotions(redis, memory)
    assert counts == {"neu": 1, "verfallen": 1, "fehler": 1, "gescheitert": 1}
    assert await redis.llen(queue) == 0
    assert [json.loads(i)["key"] for i in await redis.lrange(working, 0, -1)] == [broken["key"]]
    assert await redis.lrange(keys.promotion_failed("meister"), 0, -1) == ["kein json"]

    for _ in range(2):  # re-queued twice, failing each time
        counts = await run_promotions(redis, memory)
        assert counts == {"erneut": 1, "fehler": 1}
    counts = await run_promotions(redis, memory)
    assert counts == {"gescheitert": 1}
    assert await redis.llen(working) == 0
    assert len(await redis.lrange(keys.promotion_failed("meister"), 0, -1)) == 2
    assert await redis.smembers(keys.promotion_users()) == set()
