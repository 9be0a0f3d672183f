"""Long-term nodes that name a thing: the memory anchor's read of `lzg_knoten`
(docs/behaviour/nodes.md#memory-anchor). Matched by name — a theme equal to it, or the name
in the text — strongest `gewicht_decay` first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair

_NODES_SQL: Final = (
    "SELECT id, inhalt, dimension, themen, emotion, gewicht_decay, beobachter"
    " FROM lzg_knoten WHERE user_id = %s AND character_id = %s AND aktiv"
    " AND (EXISTS (SELECT 1 FROM unnest(themen) AS t WHERE lower(t) = lower(%s))"
    " OR inhalt ILIKE %s)"
    " ORDER BY gewicht_decay DESC, id LIMIT %s"
)


@dataclass(frozen=True, slots=True)
class NamedNode:
    """An active long-term node (English fields; the columns keep their names)."""

    id: int
    text: str
    dimension: str = ""
    topics: tuple[str, ...] = ()
    emotion: str = ""
    decayed_weight: float = 0.0
    observer: str = ""


def _like(name: str) -> str:
    escaped = name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


async def naming(pool: AsyncConnectionPool, pair: Pair, name: str, limit: int) -> list[NamedNode]:
    """The pair's active long-term nodes that name `name` (theme or text), at most `limit`."""
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(_NODES_SQL, (pair.user_id, pair.character_id, name, _like(name), limit))
        rows = await cur.fetchall()
    return [
        NamedNode(
            id=int(row["id"]),
            text=str(row["inhalt"]),
            dimension=str(row.get("dimension") or ""),
            topics=tuple(str(t) for t in row.get("themen") or []),
            emotion=str(row.get("emotion") or ""),
            decayed_weight=float(row.get("gewicht_decay") or 0.0),
            observer=str(row.get("beobachter") or ""),
        )
        for row in rows
    ]
