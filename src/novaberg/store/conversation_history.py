"""The conversation history of a pair: its answered turns as the dispatcher recorded them
(`pipeline_log` rows of `art = 'turn_roh'`, kept when older log rows are purged).

Read newest first by row id, so a client pages backwards with the smallest id it has
(`before_id`) and never sees a row twice while new turns arrive.
"""

from __future__ import annotations

from typing import Any

from psycopg_pool import AsyncConnectionPool

from novaberg.store.keys import Pair
from novaberg.store.pipeline_log import ART_RAW_TURN

_SQL = (
    "SELECT id, erstellt_am, turn_id, inhalt FROM pipeline_log"
    " WHERE art = %s AND user_id = %s AND character_id = %s AND id < %s"
    " ORDER BY id DESC LIMIT %s"
)

NO_CURSOR = 2**63 - 1
"""`before_id` of the first page: above every bigserial id."""


async def read_history(
    pool: AsyncConnectionPool, pair: Pair, *, before_id: int | None, limit: int
) -> list[dict[str, Any]]:
    """Up to `limit` answered turns of `pair` with an id below `before_id`, newest first."""
    cursor = NO_CURSOR if before_id is None else before_id
    async with pool.connection() as conn:
        cur = await conn.execute(
            _SQL, (ART_RAW_TURN, pair.user_id, pair.character_id, cursor, limit)
        )
        return [dict(row) for row in await cur.fetchall()]
