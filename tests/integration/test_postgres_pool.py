"""The process's PostgreSQL pool: after PostgreSQL ended the pool's connections (a restart,
an administrator), the next queries get fresh connections instead of failing on the dead
ones; its commits wait for the WAL unless the settings say otherwise."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from novaberg.api.context import AppContext
from novaberg.config import Settings
from novaberg.llm.layer import ModelLayer
from novaberg.runtime.services import Endpoints
from novaberg.store.postgres import create_pool


async def test_connections_the_server_ended_are_replaced(endpoints: Endpoints) -> None:
    pool = await create_pool(endpoints.database_url, min_size=3, max_size=3)
    try:
        pids: list[int] = []

        async def hold() -> None:
            async with pool.connection() as conn:
                row = await (await conn.execute("SELECT pg_backend_pid() AS pid")).fetchone()
                assert row is not None
                pids.append(int(row["pid"]))
                await asyncio.sleep(0.2)  # all three at once: each holds its own connection

        await asyncio.gather(hold(), hold(), hold())
        assert len(set(pids)) == 3
        async with await psycopg.AsyncConnection.connect(
            endpoints.database_url, autocommit=True
        ) as admin:  # what a restart does to them: "terminating connection due to ..."
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) pid", [pids]
            )
        await asyncio.sleep(0.3)

        for _ in range(3):
            async with pool.connection() as conn:
                row = await (await conn.execute("SELECT 1 AS one")).fetchone()
                assert row == {"one": 1}
    finally:
        await pool.close()


@pytest.mark.parametrize(("async_commit", "expected"), [(None, "on"), (True, "off")])
async def test_commits_wait_for_the_wal_unless_the_setting_says_otherwise(
    settings: Settings,
    endpoints: Endpoints,
    model: ModelLayer,
    async_commit: bool | None,
    expected: str,
) -> None:
    """A pooled connection of the process context commits synchronously by default;
    NOVABERG_POSTGRES_ASYNC_COMMIT=true turns that off on every connection."""
    if async_commit is not None:
        settings = settings.model_copy(update={"postgres_async_commit": async_commit})
    ctx = await AppContext.open(settings, endpoints, model=model)
    try:
        async with ctx.pool.connection() as first, ctx.pool.connection() as second:
            for conn in (first, second):  # each connection of the pool configured alike
                row = await (await conn.execute("SHOW synchronous_commit")).fetchone()
                assert row == {"synchronous_commit": expected}
    finally:
        await ctx.aclose()
