"""Long-term memory edges ("synapses"): the rows of `lzg_kanten`
(docs/behaviour/memory.md#edges, docs/behaviour/memory.md#spreading-read).

An edge is directed (a → b) and keeps the values it was made from (its layers, shared
entities and themes, timeline distance, first cosine) so it can be recomputed when a node
is reinforced. The German column names appear once, in the SQL of this module; the edge
math lives in `novaberg.memory.long_term.edges`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg import AsyncConnection


@dataclass(frozen=True, slots=True)
class NewEdge:
    """A directed edge to store, with the values it was made from."""

    source_id: int
    target_id: int
    raw_weight: float
    absolute_weight: float
    reasons: list[str]
    shared_entity_ids: list[int]
    shared_themes: list[str]
    timeline_days: float | None
    initial_cosine: float | None


async def upsert_edges(conn: AsyncConnection[Any], edges: Iterable[NewEdge], now: datetime) -> int:
    """Insert directed edges; an existing (a, b) gets the new weights only."""
    batch = [
        (
            e.source_id,
            e.target_id,
            e.raw_weight,
            e.absolute_weight,
            e.reasons,
            e.shared_entity_ids,
            e.shared_themes,
            e.timeline_days,
            e.initial_cosine,
            len(e.reasons),
            now,
        )
        for e in edges
    ]
    if not batch:
        return 0
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO lzg_kanten (knoten_a_id, knoten_b_id, gewicht_roh, gewicht_absolut,"
            " verbindungs_gruende, geteilte_entitaet_ids, geteilte_themen, timeline_naehe_tage,"
            " embedding_cosine_initial, anzahl_schichten, erstellt_am)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (knoten_a_id, knoten_b_id) DO UPDATE SET"
            " gewicht_roh = EXCLUDED.gewicht_roh, gewicht_absolut = EXCLUDED.gewicht_absolut",
            batch,
        )
    return len(batch)


@dataclass(frozen=True, slots=True)
class StoredEdge:
    """An edge with what its recomputation needs: its frozen values and both ends' current
    absolute weight, themes and timeline precision (a: where it starts, b: where it ends)."""

    id: int
    reasons: list[str]
    initial_cosine: float | None
    timeline_days: float | None
    a_absolute_weight: float
    a_themes: list[str]
    a_precision: str | None
    b_absolute_weight: float
    b_themes: list[str]
    b_precision: str | None


async def edges_touching(conn: AsyncConnection[Any], node_id: int) -> list[StoredEdge]:
    """Every directed edge from or to a node."""
    cur = await conn.execute(
        "SELECT e.id, e.verbindungs_gruende AS reasons,"
        " e.embedding_cosine_initial AS initial_cosine, e.timeline_naehe_tage AS timeline_days,"
        " a.gewicht_absolut AS a_absolute_weight, a.themen AS a_themes,"
        " ta.precision AS a_precision,"
        " b.gewicht_absolut AS b_absolute_weight, b.themen AS b_themes,"
        " tb.precision AS b_precision"
        " FROM lzg_kanten e JOIN lzg_knoten a ON a.id = e.knoten_a_id"
        " JOIN lzg_knoten b ON b.id = e.knoten_b_id"
        " LEFT JOIN timeline ta ON ta.id = a.timeline_id"
        " LEFT JOIN timeline tb ON tb.id = b.timeline_id"
        " WHERE e.knoten_a_id = %s OR e.knoten_b_id = %s",
        (node_id, node_id),
    )
    return [
        StoredEdge(
            id=int(row["id"]),
            reasons=list(row["reasons"] or []),
            initial_cosine=row["initial_cosine"],
            timeline_days=row["timeline_days"],
            a_absolute_weight=float(row["a_absolute_weight"]),
            a_themes=list(row["a_themes"] or []),
            a_precision=row["a_precision"],
            b_absolute_weight=float(row["b_absolute_weight"]),
            b_themes=list(row["b_themes"] or []),
            b_precision=row["b_precision"],
        )
        for row in await cur.fetchall()
    ]


async def set_edge_weights(
    conn: AsyncConnection[Any], updates: Iterable[tuple[float, float, int]]
) -> None:
    """(raw weight, absolute weight, edge id) for recomputed edges."""
    batch = list(updates)
    if not batch:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            "UPDATE lzg_kanten SET gewicht_roh = %s, gewicht_absolut = %s WHERE id = %s", batch
        )


@dataclass(frozen=True, slots=True)
class OutgoingEdge:
    """An edge the spreading read follows from `source_id`, and the node it reaches."""

    source_id: int
    edge_id: int
    edge_weight: float
    reasons: list[str]
    shared_entity_ids: list[int]
    shared_themes: list[str]
    target_id: int
    text: str
    dimension: str
    decayed_weight: float
    emotion: str | None
    themes: list[str]
    created_at: datetime | None
    observer: str


async def outgoing(
    conn: AsyncConnection[Any], steps: Sequence[tuple[int, int | None]], k: int
) -> list[OutgoingEdge]:
    """For each (node, predecessor): its k strongest outgoing edges to active nodes, never
    back to the predecessor (docs/behaviour/memory.md#spreading-read)."""
    if not steps or k <= 0:
        return []
    sources = [s for s, _ in steps]
    previous = [p for _, p in steps]
    cur = await conn.execute(
        "SELECT s.source_id, e.id AS edge_id, e.gewicht_absolut AS edge_weight,"
        " e.verbindungs_gruende AS reasons, e.geteilte_entitaet_ids AS shared_entity_ids,"
        " e.geteilte_themen AS shared_themes, n.id AS target_id, n.inhalt AS text,"
        " n.dimension, n.gewicht_decay AS decayed_weight, n.emotion, n.themen AS themes,"
        " n.erstellt_am AS created_at, n.beobachter AS observer"
        " FROM unnest(%s::bigint[], %s::bigint[]) AS s(source_id, predecessor_id)"
        " CROSS JOIN LATERAL ("
        "   SELECT e.* FROM lzg_kanten e JOIN lzg_knoten nn ON nn.id = e.knoten_b_id"
        "   WHERE e.knoten_a_id = s.source_id AND nn.aktiv"
        "     AND (s.predecessor_id IS NULL OR e.knoten_b_id <> s.predecessor_id)"
        "   ORDER BY e.gewicht_absolut DESC LIMIT %s) e"
        " JOIN lzg_knoten n ON n.id = e.knoten_b_id",
        (sources, previous, int(k)),
    )
    return [
        OutgoingEdge(
            source_id=int(row["source_id"]),
            edge_id=int(row["edge_id"]),
            edge_weight=float(row["edge_weight"]),
            reasons=list(row["reasons"] or []),
            shared_entity_ids=list(row["shared_entity_ids"] or []),
            shared_themes=list(row["shared_themes"] or []),
            target_id=int(row["target_id"]),
            text=row["text"],
            dimension=row["dimension"],
            decayed_weight=float(row["decayed_weight"]),
            emotion=row["emotion"],
            themes=list(row["themes"] or []),
            created_at=row["created_at"],
            observer=row["observer"],
        )
        for row in await cur.fetchall()
    ]
