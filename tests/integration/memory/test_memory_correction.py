"""The person's edits of the memory: correcting and deleting short- and long-term entries
through the API, and a deleted long-term node staying gone (decay, promotion of the same
keys, an import of the same key, spreading activation)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import httpx
import numpy as np
import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from test_memory_api import client  # noqa: F401  (the fixture)

from novaberg.llm.errors import ModelUnavailable
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedEmbedder, ScriptedLLM
from novaberg.memory.long_term.decay import decay
from novaberg.memory.long_term.edits import delete_node
from novaberg.memory.long_term.promotion import Promotion
from novaberg.memory.long_term.spreading import spreading_read
from novaberg.memory.short_term.creation import ShortTermWriter, StoredEntry
from novaberg.memory.short_term.edits import correct_entry
from novaberg.memory.short_term.entry_text import embed_text
from novaberg.pair import Pair
from novaberg.store import keys, long_term_nodes, long_term_search
from novaberg.store.long_term_nodes import NewNode
from novaberg.store.short_term import ShortTermStore

PAIR = Pair("meister", "nova")
EMBED = ScriptedEmbedder(384)


async def remember(
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
    said: str,
    kern: str,
    *,
    pair: Pair = PAIR,
    themes: tuple[str, ...] = ("Umzug",),
    turn_id: str = "t-1",
) -> StoredEntry:
    scripted.add(said, kern)
    stored = await ShortTermWriter(redis, model, pool=db).store_salience_write(
        pair,
        {"salienz_obj": {"salienz": 0.9, "themen": list(themes)}, "segment": said},
        "user",
        turn_id,
    )
    assert stored is not None
    return stored


def cosine(a: object, b: object) -> float:
    x, y = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


async def node_ids(db: AsyncConnectionPool) -> list[int]:
    async with db.connection() as conn:
        cur = await conn.execute("SELECT id FROM lzg_knoten ORDER BY id")
        return [int(r["id"]) for r in await cur.fetchall()]


# --- short-term -------------------------------------------------------------------------


async def test_a_corrected_short_term_entry_is_re_embedded_and_keeps_its_provenance(
    client: httpx.AsyncClient,  # noqa: F811
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
) -> None:
    stored = await remember(redis, db, model, scripted, "Madrid!", "Der Nutzer zieht nach Madrid.")
    await redis.delete(keys.profile_dirty(PAIR))
    ttl_before = await redis.pttl(stored.key)

    answer = await client.patch(
        f"/memory/nova/short_term/{stored.key}",
        json={"inhalt": "  Der Nutzer zieht nach Lissabon. "},
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["key"] == stored.key and body["inhalt"] == "Der Nutzer zieht nach Lissabon."
    assert body["korrigiert_am"] is not None and body["turn_id"] == "t-1"
    assert body["themen"] == ["Umzug"] and body["salienz"] == pytest.approx(stored.salience)
    assert body["ttl_s"] is not None and body["ttl_s"] * 1000 <= ttl_before
    assert body["ttl_s"] * 1000 > ttl_before - 60_000, "the TTL is kept, not renewed or lost"

    entry = await ShortTermStore(redis).get(stored.key)
    assert entry is not None and entry.vector is not None
    wanted = EMBED.vector(embed_text(["Umzug"], "Der Nutzer zieht nach Lissabon."))
    assert cosine(entry.vector, wanted) == pytest.approx(1.0, abs=1e-5), "re-embedded"
    assert entry.fields["beobachter"] == "user" and entry.fields["turn_id"] == "t-1"
    assert await redis.get(keys.profile_dirty(PAIR)) == "1", "profiles are distilled again"

    listed = (await client.get("/memory/nova/short_term")).json()["entries"]
    assert [(e["inhalt"], e["korrigiert_am"] is not None) for e in listed] == [
        ("Der Nutzer zieht nach Lissabon.", True)
    ]


async def test_short_term_correction_errors(
    client: httpx.AsyncClient,  # noqa: F811
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
) -> None:
    mine = await remember(redis, db, model, scripted, "Madrid!", "Der Nutzer zieht nach Madrid.")
    other = await remember(
        redis, db, model, scripted, "Rom!", "Anna zieht nach Rom.", pair=Pair("anna", "nova")
    )
    url = f"/memory/nova/short_term/{mine.key}"
    assert (await client.patch(url, json={"inhalt": ""})).status_code == 422
    assert (await client.patch(url, json={"inhalt": "   \n"})).status_code == 422
    assert (await client.patch(url, json={})).status_code == 422
    assert (await client.patch(url, json={"inhalt": "x", "mehr": 1})).status_code == 422
    unknown = await client.patch("/memory/nova/short_term/kzg:meister:nova:1", json={"inhalt": "x"})
    assert unknown.status_code == 404 and unknown.json()["detail"]["fehler"] == "nicht_gefunden"
    foreign = await client.patch(f"/memory/nova/short_term/{other.key}", json={"inhalt": "x"})
    assert foreign.status_code == 404, "another person's entry is not the caller's"
    assert (await ShortTermStore(redis).get(other.key)).fields["inhalt"] == "Anna zieht nach Rom."  # type: ignore[union-attr]
    elsewhere = await client.patch(f"/memory/luna/short_term/{mine.key}", json={"inhalt": "x"})
    assert elsewhere.status_code == 404, "the caller's entry with another character"
    no_token = await client.patch(url, json={"inhalt": "x"}, headers={"Authorization": ""})
    assert no_token.status_code == 401
    assert (await ShortTermStore(redis).get(mine.key)).fields[
        "inhalt"
    ] == "Der Nutzer zieht nach Madrid."  # type: ignore[union-attr]


async def test_another_process_searches_with_the_corrected_vector(
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
) -> None:
    """A process that cached the pair's vectors before the correction ranks by the new one."""
    stored = await remember(redis, db, model, scripted, "Madrid!", "Der Nutzer zieht nach Madrid.")
    await remember(
        redis, db, model, scripted, "Katze!", "Die Katze heisst Mimi.", themes=("Tiere",)
    )
    reader = ShortTermStore(redis)
    old = EMBED.vector(embed_text(["Umzug"], "Der Nutzer zieht nach Madrid."))
    assert (await reader.nearest(PAIR, old, 1))[0].key == stored.key  # the vectors are cached

    assert await correct_entry(
        ShortTermStore(redis), model, PAIR, stored.key, "Orangen und Zitronen aus Valencia"
    )
    new = EMBED.vector(embed_text(["Umzug"], "Orangen und Zitronen aus Valencia"))
    (hit,) = await reader.nearest(PAIR, new, 1)
    assert hit.key == stored.key and hit.similarity == pytest.approx(1.0, abs=1e-5)
    assert hit.fields["inhalt"] == "Orangen und Zitronen aus Valencia"


# --- long-term --------------------------------------------------------------------------


async def promoted(
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
    said: str,
    kern: str,
    **kwargs: object,
) -> tuple[StoredEntry, int]:
    stored = await remember(redis, db, model, scripted, said, kern, **kwargs)  # type: ignore[arg-type]
    pair = kwargs.get("pair", PAIR)
    assert isinstance(pair, Pair)
    outcome = await Promotion(db, redis, model).promote(
        {"key": stored.key, "user_id": pair.user_id, "character_id": pair.character_id}
    )
    assert outcome.action == "neu" and outcome.node_id is not None
    return stored, outcome.node_id


async def test_a_corrected_long_term_node_is_re_embedded_in_place(
    client: httpx.AsyncClient,  # noqa: F811
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
) -> None:
    stored, node_id = await promoted(
        redis, db, model, scripted, "Madrid!", "Der Nutzer zieht nach Madrid."
    )
    async with db.connection() as conn:
        before = await long_term_nodes.get_node(conn, node_id)
    assert before is not None
    await redis.delete(keys.profile_dirty(PAIR))

    answer = await client.patch(
        f"/memory/nova/long_term/{node_id}", json={"inhalt": "Der Nutzer zieht nach Lissabon."}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["id"] == node_id and body["inhalt"] == "Der Nutzer zieht nach Lissabon."
    assert body["korrigiert_am"] is not None
    assert body["gewicht_decay"] == pytest.approx(before.decayed_weight)
    async with db.connection() as conn:
        after = await long_term_nodes.get_node(conn, node_id)
        nearest = await long_term_search.nearest(
            conn, PAIR, EMBED.vector("Der Nutzer zieht nach Lissabon."), 1
        )
        words = await conn.execute(
            "SELECT count(*) AS n FROM lzg_knoten WHERE tsv @@ plainto_tsquery('simple', 'lissabon')"
        )
        found = await words.fetchone()
    assert after is not None and after.source_key == stored.key, "provenance kept"
    assert nearest[0].id == node_id and float(nearest[0].cosine or 0.0) == pytest.approx(
        1.0, abs=1e-5
    )
    assert found is not None and found["n"] == 1, "the word index follows the text"
    assert await redis.get(keys.profile_dirty(PAIR)) == "1"

    listed = (await client.get("/memory/nova/long_term")).json()["nodes"]
    assert [n["inhalt"] for n in listed] == ["Der Nutzer zieht nach Lissabon."]
    assert listed[0]["korrigiert_am"] is not None


async def test_long_term_errors(
    client: httpx.AsyncClient,  # noqa: F811
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
) -> None:
    _, mine = await promoted(redis, db, model, scripted, "Madrid!", "Der Nutzer zieht nach Madrid.")
    _, other = await promoted(
        redis, db, model, scripted, "Rom!", "Anna zieht nach Rom.", pair=Pair("anna", "nova")
    )
    assert (
        await client.patch(f"/memory/nova/long_term/{mine}", json={"inhalt": " "})
    ).status_code == 422
    for node in (other, 999_999):
        patched = await client.patch(f"/memory/nova/long_term/{node}", json={"inhalt": "x"})
        assert patched.status_code == 404 and patched.json()["detail"]["fehler"] == "nicht_gefunden"
        assert (await client.delete(f"/memory/nova/long_term/{node}")).status_code == 404
    assert (await client.delete(f"/memory/luna/long_term/{mine}")).status_code == 404
    assert (await client.delete("/memory/nova/long_term/abc")).status_code == 422
    assert (await client.delete("/memory/nova/long_term/0")).status_code == 422
    no_token = await client.delete(f"/memory/nova/long_term/{mine}", headers={"Authorization": ""})
    assert no_token.status_code == 401
    assert await node_ids(db) == sorted([mine, other]), "nothing was changed"


async def test_a_deleted_node_is_gone_with_its_edges_and_its_short_term_source(
    client: httpx.AsyncClient,  # noqa: F811
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
) -> None:
    stored, gone = await promoted(
        redis, db, model, scripted, "Madrid!", "Der Nutzer zieht im Mai nach Madrid."
    )
    _, kept = await promoted(
        redis,
        db,
        model,
        scripted,
        "Wohnung!",
        "Der Nutzer sucht im Mai eine Wohnung.",
        turn_id="t-2",
    )
    async with db.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM lzg_kanten")
        linked = await cur.fetchone()
    assert linked is not None and linked["n"] == 2, "the shared theme joined the two nodes"
    await redis.delete(keys.profile_dirty(PAIR))

    assert (await client.delete(f"/memory/nova/long_term/{gone}")).status_code == 204
    assert await node_ids(db) == [kept]
    async with db.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM lzg_kanten")
        left = await cur.fetchone()
        cur = await conn.execute("SELECT kzg_key, lzg_id, user_id FROM lzg_geloescht")
        tombs = await cur.fetchall()
    assert left is not None and left["n"] == 0
    assert [(t["kzg_key"], t["lzg_id"], t["user_id"]) for t in tombs] == [
        (stored.key, gone, "meister")
    ]
    assert not await redis.exists(stored.key), "the live short-term source is the same memory"
    assert await redis.get(keys.profile_dirty(PAIR)) == "1"
    assert (await client.delete(f"/memory/nova/long_term/{gone}")).status_code == 404
    listed = (await client.get("/memory/nova/long_term", params={"inaktive": True})).json()
    assert [n["id"] for n in listed["nodes"]] == [kept] and listed["anzahl"]["gesamt"] == 1


async def test_a_deleted_node_does_not_come_back(
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
) -> None:
    """Neither through decay, nor a promotion (or an import) of one of its keys, nor the
    spreading read from a neighbour that was linked to it."""
    memory = Promotion(db, redis, model)
    fact = "Madrid liegt in Spanien."
    first, gone = await promoted(redis, db, model, scripted, "Madrid!", fact)
    # a second key reinforcing the same node: it is one of the node's keys too
    again = await remember(redis, db, model, scripted, "Madrid, ja", fact, turn_id="t-2")
    reinforced = await memory.promote(
        {"key": again.key, "user_id": "meister", "character_id": "nova"}
    )
    assert reinforced.action == "verstaerkt" and reinforced.node_id == gone
    # a neighbour sharing the theme only: the spreading read reaches `gone` by the edge alone
    _, kept = await promoted(
        redis, db, model, scripted, "Wohnung!", "Der Nutzer sucht eine Wohnung.", turn_id="t-3"
    )
    anchor = EMBED.vector("Der Nutzer sucht eine Wohnung.")
    async with db.connection() as conn:
        anchors = await long_term_search.nearest(conn, PAIR, anchor, 3)
    assert [r.id for r in anchors if float(r.cosine or 0.0) >= 0.40] == [kept]
    before = await spreading_read(db, PAIR, anchor, "glut", mark_retrieved=False)
    assert {m.node_id: m.shell for m in before.memories} == {kept: 0, gone: 1}

    deleted = await delete_node(db, ShortTermStore(redis), PAIR, gone)
    assert sorted(deleted or []) == sorted([first.key, again.key])

    # decay, even years later, touches only what exists
    await decay(db, datetime(2031, 1, 1, tzinfo=UTC).timestamp())
    assert await node_ids(db) == [kept]

    # the promotion of either key again: the same jobs, and the entries written anew under
    # the same keys (a short-term entry outliving the node)
    for key in (first.key, again.key):
        job = {"key": key, "user_id": "meister", "character_id": "nova"}
        assert (await memory.promote(job)).action in {"geloescht", "verfallen"}
        await ShortTermStore(redis).create(
            PAIR,
            {"inhalt": fact, "salienz": "0.95", "user_id": "meister", "character_id": "nova"},
            EMBED.vector(fact),
            ttl_seconds=600,
            epoch_ms=int(key.rsplit(":", 1)[1]),
        )
        assert await redis.exists(key)
        assert (await memory.promote(job)).action == "geloescht"
    assert await node_ids(db) == [kept]

    # an import (or any insert) of one of the keys
    async with db.connection() as conn:
        inserted = await long_term_nodes.insert_node(
            conn,
            NewNode(
                source_key=first.key,
                user_id="meister",
                character_id="nova",
                observer="user",
                text=fact,
                embedding=EMBED.vector(fact),
                dimension="kontext",
                raw_weight=0.9,
                absolute_weight=0.9,
                decayed_weight=0.9,
                frequency=1,
                created_at=datetime(2031, 1, 1, tzinfo=UTC),
                reinforced_at=datetime(2031, 1, 1, tzinfo=UTC),
            ),
        )
    assert inserted is None
    assert await node_ids(db) == [kept]

    # the spreading read from the neighbour finds no path to it any more
    after = await spreading_read(db, PAIR, anchor, "glut", mark_retrieved=False)
    assert [m.node_id for m in after.memories] == [kept]


class GoneEmbedder(ScriptedEmbedder):
    """An embedding server that does not answer."""

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise ModelUnavailable("embedding server gone")


async def test_a_correction_that_cannot_be_embedded_changes_nothing(
    client: httpx.AsyncClient,  # noqa: F811
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
) -> None:
    stored, node_id = await promoted(
        redis, db, model, scripted, "Madrid!", "Der Nutzer zieht nach Madrid."
    )
    model.embedder = GoneEmbedder(384)  # the API's model layer is this one
    for url in (f"/memory/nova/short_term/{stored.key}", f"/memory/nova/long_term/{node_id}"):
        answer = await client.patch(url, json={"inhalt": "Der Nutzer zieht nach Lissabon."})
        assert answer.status_code == 503
        assert answer.json()["detail"]["fehler"] == "modell_nicht_erreichbar"
    entry = await ShortTermStore(redis).get(stored.key)
    assert entry is not None and entry.fields["inhalt"] == "Der Nutzer zieht nach Madrid."
    assert "korrigiert_am" not in entry.fields
    async with db.connection() as conn:
        node = await long_term_nodes.get_node(conn, node_id)
    assert node is not None and node.text == "Der Nutzer zieht nach Madrid."
    assert node.corrected_at is None
