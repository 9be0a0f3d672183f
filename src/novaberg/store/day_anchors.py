"""Day anchors: the `timeline` rows of type `erinnerungs_anker` that tie memories to the day
they are about (docs/behaviour/memory.md#day-anchors), and the reads that find a day's
memories through them.

One anchor per user and local day: a transaction-scoped advisory lock on (user, day) makes
"find, else insert" safe when two runs anchor the same day at once (no unique index: the
timeline table also holds appointments, which may share a day and a time).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Final

from psycopg import AsyncConnection

from novaberg.pair import Pair
from novaberg.wire import TIMELINE_MEMORY_ANCHOR

ANCHOR_PRECISION: Final = "day"

_FIND: Final = (
    "SELECT id FROM timeline WHERE user_id = %s AND event_type = %s AND aktiv"
    " AND event_time = %s ORDER BY id LIMIT 1"
)
_INSERT: Final = (
    "INSERT INTO timeline (user_id, event_time, event_type, title, precision, themen)"
    " VALUES (%s, %s, %s, %s, %s, ARRAY[%s]) RETURNING id"
)


async def day_anchor(
    conn: AsyncConnection[Any], user_id: str, day_start: datetime, title: str
) -> tuple[int, bool]:
    """(id, created) of the user's anchor row for the day beginning at `day_start` (local
    midnight, aware): the existing one, else a new one titled `title`."""
    async with conn.transaction():
        await conn.execute(
            "SELECT pg_advisory_xact_lock(hashtext(%s))",
            (f"{TIMELINE_MEMORY_ANCHOR}:{user_id}:{day_start.isoformat()}",),
        )
        cur = await conn.execute(_FIND, (user_id, TIMELINE_MEMORY_ANCHOR, day_start))
        row = await cur.fetchone()
        if row is not None:
            return int(row["id"]), False
        cur = await conn.execute(
            _INSERT,
            (
                user_id,
                day_start,
                TIMELINE_MEMORY_ANCHOR,
                title,
                ANCHOR_PRECISION,
                TIMELINE_MEMORY_ANCHOR,
            ),
        )
        created = await cur.fetchone()
        assert created is not None
        return int(created["id"]), True


async def rows_in_window(
    conn: AsyncConnection[Any], user_id: str, ids: Iterable[int], start: datetime, end: datetime
) -> set[int]:
    """Those of the timeline rows `ids` (any type, active or not) whose time lies in
    [start, end): the rows a memory names, asked which fall on the day."""
    wanted = sorted(set(ids))
    if not wanted:
        return set()
    cur = await conn.execute(
        "SELECT id FROM timeline WHERE user_id = %s AND id = ANY(%s)"
        " AND event_time >= %s AND event_time < %s",
        (user_id, wanted, start, end),
    )
    return {int(row["id"]) for row in await cur.fetchall()}


_NODES_OF_DAY: Final = (
    "SELECT k.id, k.inhalt, k.gewicht_decay, k.timeline_id FROM lzg_knoten k"
    " LEFT JOIN timeline t ON t.id = k.timeline_id"
    " WHERE k.user_id = %s AND k.character_id = %s AND k.aktiv"
    " AND CASE WHEN t.id IS NOT NULL THEN t.event_time >= %s AND t.event_time < %s"
    " ELSE coalesce(k.kzg_erstellt_am, k.erstellt_am) >= %s"
    " AND coalesce(k.kzg_erstellt_am, k.erstellt_am) < %s END"
    " ORDER BY k.gewicht_decay DESC, k.id LIMIT %s"
)


async def long_term_of_day(
    conn: AsyncConnection[Any], pair: Pair, start: datetime, end: datetime, limit: int
) -> list[tuple[int, str, float, int | None]]:
    """The pair's active long-term nodes about [start, end), strongest first, as
    (id, text, decayed weight, timeline id): a node with a timeline row is about that row's
    day, one without about the day it was said."""
    cur = await conn.execute(
        _NODES_OF_DAY,
        (pair.user_id, pair.character_id, start, end, start, end, limit),
    )
    return [
        (
            int(row["id"]),
            str(row["inhalt"] or ""),
            float(row["gewicht_decay"] or 0.0),
            row["timeline_id"],
        )
        for row in await cur.fetchall()
    ]
