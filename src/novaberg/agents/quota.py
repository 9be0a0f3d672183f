"""Quotas on what a user may keep active (notes, timeline entries, directives): one user
cannot fill the database, and the directives, which enter every prompt, stay few.

Counted and written in one transaction under a per-user, per-table advisory lock, so
concurrent writes never pass the limit: every write that can add an active row (a create,
a restore, an update of a row that is no longer active) takes the lock before it counts.
Archived or deactivated rows do not count, nor the timeline rows that anchor memories to a
day (`erinnerungs_anker`: memory makes them, not the person)."""

from __future__ import annotations

from typing import Any, Literal

from psycopg import AsyncConnection

from novaberg.wire import TIMELINE_MEMORY_ANCHOR

QuotaTable = Literal["notizen", "timeline", "direktiven", "charakter_anweisungen"]


class QuotaExceeded(Exception):
    """The user already keeps `limit` active items of this kind."""

    def __init__(self, table: QuotaTable, limit: int) -> None:
        super().__init__(f"at most {limit} active {table} per user")
        self.table = table
        self.limit = limit


async def lock(conn: AsyncConnection[Any], table: QuotaTable, user_id: str) -> None:
    """Inside the caller's transaction: hold the user's quota lock on `table` until it ends
    (taken again by `ensure_room` in the same transaction, which is allowed). A write that
    locks rows first takes this lock before them, so two writers never wait on each other."""
    await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"quota:{table}:{user_id}",))


async def ensure_room(
    conn: AsyncConnection[Any], table: QuotaTable, user_id: str, limit: int | None
) -> None:
    """Inside the caller's transaction: raise QuotaExceeded if one more would pass `limit`
    (None = no limit)."""
    if limit is None:
        return
    await lock(conn, table, user_id)
    anchors = f" AND event_type <> '{TIMELINE_MEMORY_ANCHOR}'" if table == "timeline" else ""
    cur = await conn.execute(
        f"SELECT count(*) AS n FROM {table} WHERE user_id = %s AND aktiv{anchors}",  # Literals
        (user_id,),
    )
    row = await cur.fetchone()
    count = int(row["n"] if isinstance(row, dict) else row[0]) if row else 0
    if count >= limit:
        raise QuotaExceeded(table, limit)
