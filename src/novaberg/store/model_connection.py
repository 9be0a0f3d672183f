"""The installation's model connection set in the page (`modell_verbindung`, one row at
most) and the Redis counter that tells every process it changed
(docs/behaviour/web.md#model-connection). No row: the environment's variables apply."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.store import keys


@dataclass(frozen=True, slots=True)
class StoredConnection:
    url: str
    model: str
    api_key: str
    changed_by: str
    changed_at: datetime


def _connection(row: dict[str, Any]) -> StoredConnection:
    return StoredConnection(
        url=str(row["url"]),
        model=str(row["modell"]),
        api_key=str(row["schluessel"]),
        changed_by=str(row["geaendert_von"]),
        changed_at=row["geaendert_am"],
    )


async def read_connection(pool: AsyncConnectionPool) -> StoredConnection | None:
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT url, modell, schluessel, geaendert_von, geaendert_am FROM modell_verbindung"
        )
        row = cast(dict[str, Any] | None, await cur.fetchone())
    return _connection(row) if row else None


async def write_connection(
    pool: AsyncConnectionPool,
    redis: aioredis.Redis,
    *,
    url: str,
    model: str,
    api_key: str,
    user_id: str,
) -> StoredConnection:
    """Store the connection, then announce it (the row first: a process that sees the new
    version must find the new row)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "INSERT INTO modell_verbindung (url, modell, schluessel, geaendert_von)"
            " VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (einzig) DO UPDATE SET url = EXCLUDED.url, modell = EXCLUDED.modell,"
            " schluessel = EXCLUDED.schluessel, geaendert_von = EXCLUDED.geaendert_von,"
            " geaendert_am = now()"
            " RETURNING url, modell, schluessel, geaendert_von, geaendert_am",
            (url, model, api_key, user_id),
        )
        row = cast(dict[str, Any], await cur.fetchone())
    await redis.incr(keys.model_connection_version())
    return _connection(row)


async def clear_connection(pool: AsyncConnectionPool, redis: aioredis.Redis) -> None:
    """Back to the environment's connection, announced like a change."""
    async with pool.connection() as conn:
        await conn.execute("DELETE FROM modell_verbindung")
    await redis.incr(keys.model_connection_version())


async def announced_version(redis: aioredis.Redis) -> str | None:
    """The change counter (one GET: cheap enough before every model call)."""
    value = await redis.get(keys.model_connection_version())
    return None if value is None else str(value)
