"""Shared fixtures: the embedded Redis and PostgreSQL, started once per test session.

Tests talk to the real servers (never mocks). Each test gets a flushed Redis
database and emptied data tables; the only model double is `scripted`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from novaberg.config import Settings, load_settings
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedEmbedder, ScriptedLLM
from novaberg.runtime.services import EmbeddedServices, Endpoints
from novaberg.store import lzg
from novaberg.store.postgres import create_pool
from novaberg.store.redis_client import create_redis

KEEP_TABLES = {"schema_migrations", "schema_settings", "characters"}


@pytest.fixture(scope="session")
def test_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("novaberg-home")


@pytest.fixture(scope="session")
def endpoints(test_home: Path) -> Iterator[Endpoints]:
    services = EmbeddedServices(load_settings(home=test_home, llm="scripted"))
    yield services.start()
    services.stop()


@pytest.fixture(scope="session")
def settings(test_home: Path, endpoints: Endpoints) -> Settings:
    return load_settings(
        home=test_home,
        redis_url=endpoints.redis_url,
        database_url=endpoints.database_url,
        llm="scripted",
        embed_dim=384,
        pixie=False,
    )


@pytest.fixture(scope="session")
async def pg_pool(endpoints: Endpoints) -> AsyncIterator[AsyncConnectionPool]:
    pool = await create_pool(endpoints.database_url)
    yield pool
    await pool.close()


@pytest.fixture
async def db(pg_pool: AsyncConnectionPool) -> AsyncConnectionPool:
    """The pool, with every data table emptied first."""
    async with pg_pool.connection() as conn:
        rows = await conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        tables = [
            r["tablename"] for r in await rows.fetchall() if r["tablename"] not in KEEP_TABLES
        ]
        if tables:
            await conn.execute(
                "TRUNCATE " + ", ".join(f'"{t}"' for t in tables) + " RESTART IDENTITY CASCADE"
            )
    lzg.forget_pair_sizes()  # the sizes this process remembered described the old rows
    return pg_pool


@pytest.fixture
async def redis(endpoints: Endpoints) -> AsyncIterator[aioredis.Redis]:
    """A client on a freshly flushed database."""
    client = create_redis(endpoints.redis_url)
    await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture
def scripted() -> ScriptedLLM:
    return ScriptedLLM()


@pytest.fixture
def model(scripted: ScriptedLLM) -> ModelLayer:
    return ModelLayer(scripted, ScriptedEmbedder(384))
