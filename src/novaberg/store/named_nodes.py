"""Long-term nodes bound to an entity: the memory anchor's read of `lzg_knoten`
(docs/behaviour/nodes.md#memory-anchor). A node belongs to an entity when its
`entitaet_ids` hold the entity's id — whatever words its text uses — strongest
`gewicht_decay` first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair

_NODES_SQL: Final = (
    "SELECT e.entitaet_id, k.id, k.inhalt, k.dimension, k.themen, k.emotion, k.gewicht_decay,"
    " k.beobachter"
    " FROM unnest(%s::bigint[]) AS e(entitaet_id)"
    " CROSS JOIN LATERAL ("
    "  SELECT id, inhalt, dimension, themen, emotion, gewicht_decay, beobachter"
    "  FROM lzg_knoten WHERE user_id = %s AND character_id = %s AND aktiv"
    "  AND entitaet_ids @> ARRAY[e.entitaet_id::int]"
    "  ORDER BY gewicht_decay DESC, id LIMIT %s"
    " ) AS k"
)
"""Per entity its strongest nodes (the GIN index on `entitaet_ids` serves `@>`)."""


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


async def bound_to(
    pool: AsyncConnectionPool, pair: Pair, entity_ids: Sequence[int], limit: int
) -> dict[int, list[NamedNode]]:
    """The pair's active long-term nodes of each entity, at most `limit` per entity, in the
    order of `entity_ids` (an entity without nodes has no key)."""
    wanted = list(dict.fromkeys(int(i) for i in entity_ids))
    if not wanted:
        return {}
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(_NODES_SQL, (wanted, pair.user_id, pair.character_id, limit))
        rows = await cur.fetchall()
    found: dict[int, list[NamedNode]] = {}
    for row in rows:
        found.setdefault(int(row["entitaet_id"]), []).append(
            NamedNode(
                id=int(row["id"]),
                text=str(row["inhalt"]),
                dimension=str(row.get("dimension") or ""),
                topics=tuple(str(t) for t in row.get("themen") or []),
                emotion=str(row.get("emotion") or ""),
                decayed_weight=float(row.get("gewicht_decay") or 0.0),
                observer=str(row.get("beobachter") or ""),
            )
        )
    return found
