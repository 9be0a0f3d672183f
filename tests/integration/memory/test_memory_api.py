"""Read APIs of the memory (panels): every route answers for the caller's pair only."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import httpx
import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from app_client import signed_in_client
from novaberg.config import Settings
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.memory.long_term.promotion import Promotion
from novaberg.memory.short_term.creation import ShortTermWriter
from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints
from novaberg.store import character_profiles, goals
from novaberg.store.pipeline_log import PipelineLog
from novaberg.store.session import append_turn

PAIR = Pair("meister", "nova")


@pytest.fixture
async def client(
    settings: Settings,
    endpoints: Endpoints,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
) -> AsyncIterator[httpx.AsyncClient]:
    async with signed_in_client(
        settings, endpoints, redis, db, model, user="meister", gate="scripted-api", local_page=False
    ) as http:
        yield http


async def test_routes_need_a_token(client: httpx.AsyncClient) -> None:
    response = await client.get("/memory/nova/short_term", headers={"Authorization": ""})
    assert response.status_code == 401


async def test_memory_panels_show_the_callers_pair(
    client: httpx.AsyncClient,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
) -> None:
    await append_turn(redis, PAIR, {"rolle": "user", "inhalt": "Hallo", "embedding": [0.1] * 384})
    await append_turn(redis, Pair("anna", "nova"), {"rolle": "user", "inhalt": "fremd"})
    scripted.add("Madrid", "Der Nutzer zieht nach Madrid.")
    short = ShortTermWriter(redis, model, pool=db)
    stored = await short.store_salience_write(
        PAIR,
        {"salienz_obj": {"salienz": 0.9, "themen": ["Umzug"]}, "segment": "Madrid!"},
        "user",
        "t-1",
    )
    assert stored is not None
    node = await Promotion(db, redis, model).promote(
        {"key": stored.key, "user_id": "meister", "character_id": "nova"}
    )
    async with db.connection() as conn:
        await goals.insert_goal(
            conn,
            PAIR,
            statement="Mehr ueber Madrid erfahren",
            embedding=None,
            now=datetime.now(UTC),
        )
        await character_profiles.upsert_layers(
            conn, "meister", "nova", {"core": "Zieht um."}, datetime.now(UTC)
        )

    session = (await client.get("/memory/nova/session")).json()
    assert [t["inhalt"] for t in session["turns"]] == ["Hallo"]
    assert "embedding" not in session["turns"][0] and session["summary"] == ""

    entries = (await client.get("/memory/nova/short_term")).json()["entries"]
    assert len(entries) == 1
    entry = entries[0]
    assert entry["inhalt"] == "Der Nutzer zieht nach Madrid." and entry["themen"] == ["Umzug"]
    assert entry["salienz"] > 0.94 and entry["haeufigkeit"] == 1
    assert 29 * 86_400 < entry["ttl_s"] <= 30 * 86_400
    assert "themen_norm" not in entry  # the stored matching aid is not shown

    long_term = (await client.get("/memory/nova/long_term")).json()
    assert long_term["anzahl"] == {"aktiv": 1, "gesamt": 1}
    assert long_term["nodes"][0]["id"] == node.node_id
    assert long_term["nodes"][0]["gewicht_decay"] > 0 and long_term["nodes"][0]["verstaerkt_am"]

    goal_list = (await client.get("/memory/nova/goals")).json()["goals"]
    assert [g["zielsatz"] for g in goal_list] == ["Mehr ueber Madrid erfahren"]
    assert goal_list[0]["motivation_jetzt"] == pytest.approx(0.5, abs=1e-3)

    profiles = (await client.get("/memory/nova/profiles")).json()
    assert profiles["user"]["core"] == "Zieht um." and profiles["character"] is None

    assert (await client.get("/memory/other/short_term")).json() == {"entries": []}


async def test_pipeline_of_a_turn_only_for_its_user(
    client: httpx.AsyncClient, db: AsyncConnectionPool
) -> None:
    log = PipelineLog(db)
    log.add(
        source="human",
        node="perception",
        kind="node",
        turn_id="t-9",
        user_id="meister",
        character_id="nova",
    )
    log.add(
        source="human",
        node="perception",
        kind="node",
        turn_id="t-x",
        user_id="anna",
        character_id="nova",
    )
    await log.close()
    mine = await client.get("/pipeline/t-9")
    assert mine.status_code == 200 and [r["node"] for r in mine.json()["rows"]] == ["perception"]
    assert (await client.get("/pipeline/t-x")).status_code == 404


async def test_parameters_postgresql_cannot_take_are_a_422(client: httpx.AsyncClient) -> None:
    assert (await client.get("/pipeline/t%009")).status_code == 422  # a NUL in the turn id
    huge = await client.get("/memory/nova/long_term", params={"offset": 10**20})
    assert huge.status_code == 422
    assert "offset" in huge.json()["detail"][0]["loc"]
    assert (await client.get("/memory/nova/long_term", params={"offset": 10})).status_code == 200


async def test_forgetting_a_short_term_entry_of_the_callers_pair_only(
    client: httpx.AsyncClient,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
) -> None:
    scripted.add("Lissabon", "Der Nutzer mag Lissabon.")
    short = ShortTermWriter(redis, model, pool=db)
    mine = await short.store_salience_write(
        Pair("meister", "luna"),
        {"salienz_obj": {"salienz": 0.9, "themen": ["Reisen"]}, "segment": "Lissabon!"},
        "user",
        "t-lis",
    )
    other = await short.store_salience_write(
        Pair("anna", "luna"),
        {"salienz_obj": {"salienz": 0.9, "themen": ["Reisen"]}, "segment": "Lissabon?"},
        "user",
        "t-lis-anna",
    )
    assert mine is not None and other is not None
    assert (await client.delete(f"/memory/luna/short_term/{other.key}")).status_code == 404
    assert await redis.exists(other.key), "another pair's entry stays"
    assert (await client.delete(f"/memory/luna/short_term/{mine.key}")).status_code == 204
    assert not await redis.exists(mine.key)
    assert (await client.get("/memory/luna/short_term")).json() == {"entries": []}
    assert (await client.delete(f"/memory/luna/short_term/{mine.key}")).status_code == 404
