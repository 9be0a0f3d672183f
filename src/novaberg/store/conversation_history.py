"""The conversation history of a pair: its answered turns as the dispatcher recorded them
(`pipeline_log` rows of `art = 'turn_roh'`) and its failed turns (`turn_gescheitert`,
store/failed_turns.py), both kept when older log rows are purged.

Read newest first by row id, so a client pages backwards with the smallest id it has
(`before_id`) and never sees a row twice while new turns arrive. One chat's history is the
rows inside its id ranges (store/chats.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair
from novaberg.store.pipeline_log import KIND_FAILED_TURN, KIND_RAW_TURN

_SQL = (
    "SELECT id, erstellt_am, turn_id, art, inhalt FROM pipeline_log"
    f" WHERE art IN ('{KIND_RAW_TURN}', '{KIND_FAILED_TURN}')"
    " AND user_id = %s AND character_id = %s AND id < %s{ranges}"
    " ORDER BY id DESC LIMIT %s"
)
"""The arts are literals, not parameters: the planner matches them with the partial index
(migration 013) also in a generic plan."""

NO_CURSOR = 2**63 - 1
"""`before_id` of the first page: above every bigserial id."""

RowRange = tuple[int, int]
"""Row ids `[from, to)` of one span of a chat."""


def range_clause(ranges: Sequence[RowRange]) -> tuple[str, list[int]]:
    """SQL that keeps rows inside one of `ranges`, and its parameters (no range: none)."""
    clause = " OR ".join("(id >= %s AND id < %s)" for _ in ranges) or "FALSE"
    return f"({clause})", [bound for span in ranges for bound in span]


async def read_history(
    pool: AsyncConnectionPool,
    pair: Pair,
    *,
    before_id: int | None,
    limit: int,
    ranges: Sequence[RowRange] | None = None,
) -> list[dict[str, Any]]:
    """Up to `limit` answered or failed turns of `pair` below `before_id`, newest first;
    with `ranges`, only rows inside one of them (one chat's)."""
    cursor = NO_CURSOR if before_id is None else before_id
    clause, bounds = range_clause(ranges) if ranges is not None else ("", [])
    sql = _SQL.replace("{ranges}", f" AND {clause}" if clause else "")
    async with pool.connection() as conn:
        cur = await conn.execute(sql, (pair.user_id, pair.character_id, cursor, *bounds, limit))
        return [dict(row) for row in await cur.fetchall()]
