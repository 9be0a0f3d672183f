"""Where long-term nodes came from: the short-term keys promoted into them
(`lzg_befoerderung`, a node's own `kzg_quell_key`), the turns those keys were condensed
from (`verbindung`) and the keys of nodes the person deleted (`lzg_geloescht`, never
promoted or imported again) (docs/behaviour/memory.md#promotion,
docs/behaviour/memory.md#correcting-and-deleting).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection

from novaberg.store.pipelined import Reply


async def stored_sources(conn: AsyncConnection[Any], source_keys: Sequence[str]) -> set[str]:
    """Which of these source keys have a node, or had one the person deleted."""
    cur = await conn.execute(
        "SELECT kzg_quell_key AS k FROM lzg_knoten WHERE kzg_quell_key = ANY(%(k)s)"
        " UNION SELECT kzg_key FROM lzg_geloescht WHERE kzg_key = ANY(%(k)s)",
        {"k": list(source_keys)},
    )
    return {str(row["k"]) for row in await cur.fetchall()}


async def promoted_to(conn: AsyncConnection[Any], short_term_key: str) -> int | None:
    """The node a short-term key was carried into, if it was promoted already."""
    cur = await conn.execute(
        "SELECT lzg_id AS node_id FROM lzg_befoerderung WHERE kzg_key = %s"
        " UNION ALL SELECT id FROM lzg_knoten WHERE kzg_quell_key = %s LIMIT 1",
        (short_term_key, short_term_key),
    )
    row = await cur.fetchone()
    return None if row is None else int(row["node_id"])


async def deleted_key(conn: AsyncConnection[Any], short_term_key: str) -> int | None:
    """The id of the deleted node a short-term key belonged to, if the person deleted it."""
    cur = await conn.execute(
        "SELECT lzg_id AS node_id FROM lzg_geloescht WHERE kzg_key = %s", (short_term_key,)
    )
    row = await cur.fetchone()
    return None if row is None else int(row["node_id"])


async def record_promotion(
    conn: AsyncConnection[Any], short_term_key: str, node_id: int, action: str
) -> bool:
    """Record the promotion of `short_term_key`; False if it was recorded already."""
    cur = await conn.execute(
        "INSERT INTO lzg_befoerderung (kzg_key, lzg_id, aktion) VALUES (%s, %s, %s)"
        " ON CONFLICT (kzg_key) DO NOTHING",
        (short_term_key, node_id, action),
    )
    return cur.rowcount == 1


async def link_turn(conn: AsyncConnection[Any], short_term_key: str, node_id: int) -> None:
    """Fill in the node of the turn → short-term key link (`verbindung`) once promoted."""
    await conn.execute(
        "UPDATE verbindung SET lzg_id = %s WHERE kzg_id = %s", (node_id, short_term_key)
    )


@dataclass(frozen=True, slots=True)
class NodeSource:
    """A short-term key a node was created from or reinforced by, and its turn."""

    node_id: int
    short_term_key: str
    turn_id: str | None


async def queue_source_keys(
    conn: AsyncConnection[Any], node_ids: Iterable[int]
) -> Reply[list[NodeSource]]:
    """Provenance of nodes: every short-term key each was created from or reinforced by
    and the turn that key was condensed from; queued in the caller's pipeline."""
    wanted = sorted(set(node_ids))
    if not wanted:
        return Reply.ready([])
    cur = await conn.execute(
        "WITH schluessel AS ("
        " SELECT id AS lzg_id, kzg_quell_key AS kzg_key FROM lzg_knoten"
        "  WHERE id = ANY(%(ids)s) AND kzg_quell_key IS NOT NULL"
        " UNION SELECT lzg_id, kzg_key FROM lzg_befoerderung WHERE lzg_id = ANY(%(ids)s))"
        " SELECT s.lzg_id AS node_id, s.kzg_key AS short_term_key, v.turn_id FROM schluessel s"
        " LEFT JOIN verbindung v ON v.kzg_id = s.kzg_key ORDER BY s.lzg_id, s.kzg_key",
        {"ids": wanted},
    )
    return Reply.of(
        cur,
        lambda rows: [
            NodeSource(int(row["node_id"]), str(row["short_term_key"]), row["turn_id"])
            for row in rows
        ],
    )
