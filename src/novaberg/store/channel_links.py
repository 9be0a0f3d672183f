"""A person's linked channels (`kanal_verknuepfung`): which chat belongs to which user.

A row is one chat of one kind (`telegram`) linked to one user, talking to one character.
A permanently failed channel keeps its row with `gestoert_am` set, so the failure is
visible and it is never tried again; linking the chat anew clears it. Redis keeps the set
of users with a working link (`kanal_nutzer`), the gate the outcome script asks before it
puts an outcome into the outbox; `sync_channel_users` rebuilds it from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.store import keys

TELEGRAM = "telegram"
"""`art` of a Telegram chat."""

PUSH = "push"
"""`art` of a device's Web Push subscription; `ziel` is the subscription's JSON."""

_COLUMNS = "id, user_id, art, ziel, character_id, gestoert_am, stoerung"


@dataclass(frozen=True)
class ChannelLink:
    id: int
    user_id: str
    kind: str
    target: str
    character_id: str
    failed_at: datetime | None
    failure: str | None

    @property
    def working(self) -> bool:
        return self.failed_at is None


def _row(row: dict[str, Any]) -> ChannelLink:
    return ChannelLink(
        id=int(row["id"]),
        user_id=str(row["user_id"]),
        kind=str(row["art"]),
        target=str(row["ziel"]),
        character_id=str(row["character_id"]),
        failed_at=row["gestoert_am"],
        failure=row["stoerung"],
    )


async def link(
    pool: AsyncConnectionPool,
    redis: aioredis.Redis,
    user_id: str,
    kind: str,
    target: str,
    character_id: str,
) -> ChannelLink:
    """Link the chat to the user (a chat linked before moves to this user, and a failed
    one works again); the user enters the outbox gate."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "INSERT INTO kanal_verknuepfung (user_id, art, ziel, character_id)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (art, ziel) DO UPDATE SET"
            " user_id = EXCLUDED.user_id, character_id = EXCLUDED.character_id,"
            " erstellt_am = now(), gestoert_am = NULL, stoerung = NULL"
            f" RETURNING {_COLUMNS}",
            (user_id, kind, target, character_id),
        )
        row = cast(dict[str, Any], await cur.fetchone())
    await redis.sadd(keys.channel_users(), user_id)
    return _row(row)


async def subscribe(
    pool: AsyncConnectionPool,
    redis: aioredis.Redis,
    user_id: str,
    subscription: str,
    endpoint: str,
    character_id: str,
) -> ChannelLink:
    """Link a device's push subscription (JSON) to the user. A subscription of the same
    endpoint made before (new keys after the browser renewed it, or another user on this
    device) is replaced: one endpoint, one row."""
    async with pool.connection() as conn:
        await conn.execute(
            "DELETE FROM kanal_verknuepfung WHERE art = %s AND ziel::jsonb ->> 'endpoint' = %s"
            " AND ziel <> %s",
            (PUSH, endpoint, subscription),
        )
    return await link(pool, redis, user_id, PUSH, subscription, character_id)


async def by_target(pool: AsyncConnectionPool, kind: str, target: str) -> ChannelLink | None:
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {_COLUMNS} FROM kanal_verknuepfung WHERE art = %s AND ziel = %s",
            (kind, target),
        )
        row = cast(dict[str, Any] | None, await cur.fetchone())
    return _row(row) if row else None


async def of_user(pool: AsyncConnectionPool, user_id: str) -> list[ChannelLink]:
    """Every link of the user, working or not, oldest first."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {_COLUMNS} FROM kanal_verknuepfung WHERE user_id = %s ORDER BY id",
            (user_id,),
        )
        rows = cast(list[dict[str, Any]], await cur.fetchall())
    return [_row(r) for r in rows]


async def set_character(pool: AsyncConnectionPool, link_id: int, character_id: str) -> None:
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE kanal_verknuepfung SET character_id = %s WHERE id = %s",
            (character_id, link_id),
        )


async def mark_failed(
    pool: AsyncConnectionPool, redis: aioredis.Redis, link: ChannelLink, reason: str
) -> None:
    """The channel failed for good: never used again until linked anew. A user left without
    a working link leaves the outbox gate."""
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE kanal_verknuepfung SET gestoert_am = now(), stoerung = %s"
            " WHERE id = %s AND gestoert_am IS NULL",
            (reason[:200], link.id),
        )
    if not any(other.working for other in await of_user(pool, link.user_id)):
        await redis.srem(keys.channel_users(), link.user_id)


async def unlink(
    pool: AsyncConnectionPool, redis: aioredis.Redis, user_id: str, link_id: int
) -> bool:
    """Remove one of the user's links (False: no such link of theirs). A user left without
    a working link leaves the outbox gate."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "DELETE FROM kanal_verknuepfung WHERE id = %s AND user_id = %s", (link_id, user_id)
        )
        removed = cur.rowcount == 1
    if removed and not any(other.working for other in await of_user(pool, user_id)):
        await redis.srem(keys.channel_users(), user_id)
    return removed


async def sync_channel_users(pool: AsyncConnectionPool, redis: aioredis.Redis) -> int:
    """Rebuild the outbox gate from the table (Redis may have lost it); returns its size."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT DISTINCT user_id FROM kanal_verknuepfung WHERE gestoert_am IS NULL"
        )
        users = [str(r["user_id"]) for r in cast(list[dict[str, Any]], await cur.fetchall())]
    async with redis.pipeline(transaction=True) as pipe:
        pipe.delete(keys.channel_users())
        if users:
            pipe.sadd(keys.channel_users(), *users)
        await pipe.execute()
    return len(users)
