"""Fixtures for agent tests: GraphDeps on the real Redis/PostgreSQL with a fixed clock."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis
from agent_turns import NOW
from psycopg_pool import AsyncConnectionPool

from novaberg.config import Settings
from novaberg.graph.contract import GraphDeps
from novaberg.llm.layer import ModelLayer
from novaberg.runtime.services import Endpoints


@pytest.fixture(scope="session")
def agent_schema(endpoints: Endpoints, settings: Settings) -> list[str]:
    """Apply every agent's schema.sql once per session, as the runtime does."""
    from novaberg.agents.registry import agent_migrations
    from novaberg.store.migrate import migrate

    return migrate(endpoints.database_url, settings.embed_dim, agent_migrations())


@pytest.fixture
def deps(
    settings: Settings,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    agent_schema: list[str],
) -> GraphDeps:
    return GraphDeps(settings=settings, redis=redis, pool=db, model=model, clock=NOW.timestamp)
