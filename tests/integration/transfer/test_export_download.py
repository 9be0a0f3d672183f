"""`GET /export`: the signed-in person downloads their own archive, nobody else's, and
restoring the download gives their data."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from app_client import signed_in_client
from novaberg.config import Settings
from novaberg.llm.layer import ModelLayer
from novaberg.runtime.services import Endpoints
from novaberg.store.transfer.archive_format import read_archive


@pytest.fixture
async def client(
    settings: Settings,
    endpoints: Endpoints,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
) -> AsyncIterator[httpx.AsyncClient]:
    async with signed_in_client(
        settings, endpoints, redis, db, model, user="meister", gate="scripted-export"
    ) as http:
        yield http


async def test_the_download_is_the_callers_archive_only(
    client: httpx.AsyncClient, db: AsyncConnectionPool
) -> None:
    async with db.connection() as conn:
        await conn.execute(
            "INSERT INTO direktiven (user_id, anweisung) VALUES ('meister', 'Kurz.'),"
            " ('andere', 'Geheim.')"
        )
        await conn.execute(
            "INSERT INTO ziele (user_id, character_id, ziel_typ, zielsatz) VALUES"
            " ('meister', 'nova', 'wunsch', 'Mehr wandern'),"
            " ('meister', 'kaethe', 'wunsch', 'Nur für Käthe')"
        )
    answer = await client.get("/export")
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/zip"
    assert answer.headers["content-disposition"].startswith(
        'attachment; filename="novaberg-meister-'
    )
    archive = read_archive(answer.content)
    assert archive.user_id == "meister"
    assert [r["anweisung"] for r in archive.tables["direktiven"]] == ["Kurz."]
    assert sorted(r["zielsatz"] for r in archive.tables["ziele"]) == [
        "Mehr wandern",
        "Nur für Käthe",
    ]
    assert [r["user_id"] for r in archive.tables["users"]] == ["meister"]
    assert "api_tokens" not in archive.tables

    one = read_archive((await client.get("/export", params={"character": "nova"})).content)
    assert one.character_id == "nova"
    assert [r["zielsatz"] for r in one.tables["ziele"]] == ["Mehr wandern"]
    assert [r["anweisung"] for r in one.tables["direktiven"]] == ["Kurz."]  # the person's own

    anonymous = await client.get("/export", headers={"Authorization": ""})
    assert anonymous.status_code == 401


async def test_a_second_export_while_one_runs_is_refused_in_words(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from novaberg.api import export_api

    monkeypatch.setattr(export_api, "_running", {"meister"})  # one is being built
    answer = await client.get("/export")
    assert answer.status_code == 429
    assert answer.headers["retry-after"] == "5"
    detail = answer.json()["detail"]
    assert detail["fehler"] == "export_laeuft"
    assert "gerade schon" in detail["meldung"]
