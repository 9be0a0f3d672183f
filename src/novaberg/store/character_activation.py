"""Which characters a person has paused (`charakter_aktivierung`).

Pausing is per (user, character): a built-in character is shared by every user, and one
person pausing Nova must not silence her for anybody else; an own character is only ever
one person's anyway. A pair without a row is active. The event consumer asks once per event
(one primary-key read), the worker's sweep once per paused pair and heartbeat
(docs/behaviour/events.md#paused-characters).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair


async def is_paused(pool: AsyncConnectionPool, pair: Pair) -> bool:
    """Whether the user has paused the character."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT NOT aktiv AS pausiert FROM charakter_aktivierung"
            " WHERE user_id = %s AND character_id = %s",
            (pair.user_id, pair.character_id),
        )
        row = cast(dict[str, Any] | None, await cur.fetchone())
    return bool(row and row["pausiert"])


async def paused_among(
    pool: AsyncConnectionPool, user_id: str, character_ids: Iterable[str]
) -> set[str]:
    """The ids of `character_ids` the user has paused (one read for a whole list)."""
    wanted = list(character_ids)
    if not wanted:
        return set()
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT character_id FROM charakter_aktivierung"
            " WHERE user_id = %s AND character_id = ANY(%s) AND NOT aktiv",
            (user_id, wanted),
        )
        rows = cast(list[dict[str, Any]], await cur.fetchall())
    return {str(row["character_id"]) for row in rows}


async def set_active(pool: AsyncConnectionPool, pair: Pair, active: bool, now: datetime) -> None:
    """Pause (`active` False) or activate the character for the user."""
    async with pool.connection() as conn:
        await conn.execute(
            "INSERT INTO charakter_aktivierung (user_id, character_id, aktiv, geaendert_am)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (user_id, character_id)"
            " DO UPDATE SET aktiv = EXCLUDED.aktiv, geaendert_am = EXCLUDED.geaendert_am",
            (pair.user_id, pair.character_id, active, now),
        )
