"""The conversation history of a pair: its answered turns as the dispatcher recorded them
(`pipeline_log` rows of `art = 'turn_roh'`) and its failed turns (`turn_gescheitert`,
store/failed_turns.py), both kept when older log rows are purged.

Read newest first by row id, so a client pages backwards with the smallest id it has
(`before_id`) and never sees a row twice while new turns arrive. One chat's history is the
rows whose turn began inside one of its spans (store/chats.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from psycopg import AsyncConnection
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair
from novaberg.store.pipeline_log import KIND_FAILED_TURN, KIND_RAW_TURN
from novaberg.wire import ORIGIN_OPENING

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

RowRange = tuple[datetime | None, datetime | None]
"""One span of a chat: rows whose time is in `[from, to)` (None: open on that side)."""


def row_time(table: str = "") -> str:
    """SQL for ROW_TIME of the rows of `table` (an alias in a join; "" alone)."""
    p = f"{table}." if table else ""
    return (
        f"(CASE WHEN jsonb_typeof({p}inhalt->'empfangen_am') = 'number'"
        f" THEN to_timestamp(({p}inhalt->>'empfangen_am')::float8) ELSE {p}erstellt_am END)"
    )


ROW_TIME = row_time()
"""When a history row's turn began: the person's message arrived (`empfangen_am`, which the
dispatcher copies into the row), else when the row was written (an own thought, a failed
turn). A chat holds the turns that began while it was open, however late they were
answered or written."""


def range_clause(ranges: Sequence[RowRange]) -> tuple[str, list[datetime]]:
    """SQL that keeps rows whose time lies in one of `ranges`, and its parameters (no
    range: none)."""
    clauses: list[str] = []
    params: list[datetime] = []
    for start, end in ranges:
        parts = []
        if start is not None:
            parts.append(f"{ROW_TIME} >= %s")
            params.append(start)
        if end is not None:
            parts.append(f"{ROW_TIME} < %s")
            params.append(end)
        clauses.append("(" + (" AND ".join(parts) or "TRUE") + ")")
    return "(" + (" OR ".join(clauses) or "FALSE") + ")", params


async def read_history(
    pool: AsyncConnectionPool,
    pair: Pair,
    *,
    before_id: int | None,
    limit: int,
    ranges: Sequence[RowRange] | None = None,
) -> list[dict[str, Any]]:
    """Up to `limit` answered or failed turns of `pair` below `before_id`, newest first;
    with `ranges`, only rows whose turn began inside one of them (one chat's)."""
    cursor = NO_CURSOR if before_id is None else before_id
    clause, bounds = range_clause(ranges) if ranges is not None else ("", [])
    sql = _SQL.replace("{ranges}", f" AND {clause}" if clause else "")
    async with pool.connection() as conn:
        cur = await conn.execute(sql, (pair.user_id, pair.character_id, cursor, *bounds, limit))
        return [dict(row) for row in await cur.fetchall()]


OPENING_SOURCE: Final = "seite"
"""`quelle` of an opening's row: written by the page's request, not by a graph."""


async def add_opening(conn: AsyncConnection[Any], pair: Pair, text: str, now: datetime) -> bool:
    """Record `text` as the character's opening of `pair`'s conversation: a `turn_roh` row
    with an answer and no stimulus (`herkunft` eroeffnung), shown by the history like an
    answer. Only into an empty conversation (False otherwise, nothing written); a per-pair
    lock makes two tabs answering the greeting at once write one opening."""
    await conn.execute(
        "SELECT pg_advisory_xact_lock(hashtext(%s))",
        (f"opening:{pair.user_id}:{pair.character_id}",),
    )
    cur = await conn.execute(
        "SELECT 1 FROM pipeline_log"
        f" WHERE art IN ('{KIND_RAW_TURN}', '{KIND_FAILED_TURN}')"
        " AND user_id = %s AND character_id = %s LIMIT 1",
        (pair.user_id, pair.character_id),
    )
    if await cur.fetchone() is not None:
        return False
    content = {"user_prompt": "", "response": text, "herkunft": ORIGIN_OPENING}
    await conn.execute(
        "INSERT INTO pipeline_log (erstellt_am, quelle, node, art, inhalt, user_id, character_id)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s)",
        (
            now,
            OPENING_SOURCE,
            "begruessung",
            KIND_RAW_TURN,
            Jsonb(content),
            pair.user_id,
            pair.character_id,
        ),
    )
    return True
