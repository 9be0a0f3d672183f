"""Long-term memory nodes: the rows of `lzg_knoten` as `LongTermNode`, and their writes
(docs/behaviour/memory.md#long-term-memory).

A node's German column names appear once, in `_NODE_FIELDS` (read) and `_NEW_NODE_FIELDS`
(insert); everything above this module reads English attributes. Every function takes an
open connection so callers decide the transaction boundaries. No model calls and no weight
formulas here (those live in `novaberg.memory.long_term`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any, Final

import numpy as np
from psycopg import AsyncConnection

from novaberg.pair import Pair
from novaberg.store.pipelined import Reply
from novaberg.store.text_search import text_config

_NODE_FIELDS: Final = (
    ("id", "k.id"),
    ("source_key", "k.kzg_quell_key"),
    ("user_id", "k.user_id"),
    ("character_id", "k.character_id"),
    ("observer", "k.beobachter"),
    ("text", "k.inhalt"),
    ("dimension", "k.dimension"),
    ("raw_weight", "k.gewicht_roh"),
    ("absolute_weight", "k.gewicht_absolut"),
    ("decayed_weight", "k.gewicht_decay"),
    ("frequency", "k.haeufigkeit"),
    ("retrievals", "k.abrufe"),
    ("active", "k.aktiv"),
    ("created_at", "k.erstellt_am"),
    ("reinforced_at", "k.verstaerkt_am"),
    ("retrieved_at", "k.abgerufen_am"),
    ("decayed_at", "k.decay_am"),
    ("short_term_created_at", "k.kzg_erstellt_am"),
    ("themes", "k.themen"),
    ("memory_type", "k.gedaechtnistyp"),
    ("entity_ids", "k.entitaet_ids"),
    ("timeline_id", "k.timeline_id"),
    ("emotion", "k.emotion"),
    ("arousal", "k.arousal"),
    ("emotion_vector", "k.emotions_vektor"),
    ("intentions", "k.intentionen"),
    ("mode", "k.modus"),
    ("language_style", "k.sprach_stil"),
    ("relationship_dynamic", "k.beziehungs_dynamik"),
    ("tone", "k.tone"),
    ("corrected_at", "k.korrigiert_am"),
    ("timeline_precision", "t.precision"),
    ("timeline_time", "t.event_time"),
)
"""`LongTermNode` attribute ← column of `lzg_knoten k` (or of its timeline anchor `t`)."""

NODE_COLUMNS: Final = ", ".join(f"{column} AS {name}" for name, column in _NODE_FIELDS)
"""Every node column except the embedding, plus its timeline anchor (edge layer 4), each
under its `LongTermNode` name."""

NODE_FROM: Final = "FROM lzg_knoten k LEFT JOIN timeline t ON t.id = k.timeline_id"


@dataclass(frozen=True, slots=True)
class LongTermNode:
    """One long-term memory: a row of `lzg_knoten` without its embedding.

    `cosine`: its similarity to the query of the read that found it (nearest reads only);
    `edge_count`: its outgoing edges (`list_nodes` only)."""

    id: int
    source_key: str | None
    user_id: str
    character_id: str
    observer: str
    text: str
    dimension: str
    raw_weight: float
    absolute_weight: float
    decayed_weight: float
    frequency: int
    retrievals: int
    active: bool
    created_at: datetime
    reinforced_at: datetime | None
    retrieved_at: datetime | None
    decayed_at: datetime | None
    short_term_created_at: datetime | None
    themes: list[str]
    memory_type: str | None
    entity_ids: list[int]
    timeline_id: int | None
    emotion: str | None
    arousal: float | None
    emotion_vector: str | None
    intentions: str | None
    mode: str | None
    language_style: str | None
    relationship_dynamic: str | None
    tone: str | None
    corrected_at: datetime | None
    timeline_precision: str | None
    timeline_time: datetime | None
    cosine: float | None = None
    edge_count: int | None = None


def node_of(row: Mapping[str, Any]) -> LongTermNode:
    """A row selected with `NODE_COLUMNS` (and optionally `cosine`, `edge_count`)."""
    values = dict(row)
    values["themes"] = list(values["themes"] or [])
    values["entity_ids"] = list(values["entity_ids"] or [])
    if values.get("cosine") is not None:
        values["cosine"] = float(values["cosine"])
    return LongTermNode(**values)


def nodes_of(rows: Iterable[Mapping[str, Any]]) -> list[LongTermNode]:
    return [node_of(row) for row in rows]


@dataclass(frozen=True, slots=True)
class NewNode:
    """A node to insert (promotion, a card's lorebook). `language`: the text-search
    configuration (`regconfig`); None chooses it from the text."""

    source_key: str
    user_id: str
    character_id: str
    observer: str
    text: str
    embedding: Sequence[float] | np.ndarray = field(repr=False)
    dimension: str
    raw_weight: float
    absolute_weight: float
    decayed_weight: float
    frequency: int
    created_at: datetime
    reinforced_at: datetime
    short_term_created_at: datetime | None = None
    themes: list[str] = field(default_factory=list)
    memory_type: str = "kurz"
    entity_ids: list[int] = field(default_factory=list)
    timeline_id: int | None = None
    emotion: str = ""
    arousal: float | None = None
    emotion_vector: str = ""
    intentions: str = "[]"
    mode: str = ""
    language_style: str = ""
    relationship_dynamic: str = ""
    tone: str = ""
    corrected_at: datetime | None = None
    language: str | None = None


_NEW_NODE_FIELDS: Final = (
    ("source_key", "kzg_quell_key", "text"),
    ("user_id", "user_id", "text"),
    ("character_id", "character_id", "text"),
    ("observer", "beobachter", "text"),
    ("text", "inhalt", "text"),
    ("embedding", "embedding", "vector"),
    ("dimension", "dimension", "text"),
    ("raw_weight", "gewicht_roh", "float8"),
    ("absolute_weight", "gewicht_absolut", "float8"),
    ("decayed_weight", "gewicht_decay", "float8"),
    ("frequency", "haeufigkeit", "int4"),
    ("created_at", "erstellt_am", "timestamptz"),
    ("reinforced_at", "verstaerkt_am", "timestamptz"),
    ("short_term_created_at", "kzg_erstellt_am", "timestamptz"),
    ("themes", "themen", "text[]"),
    ("memory_type", "gedaechtnistyp", "text"),
    ("entity_ids", "entitaet_ids", "int4[]"),
    ("timeline_id", "timeline_id", "int4"),
    ("emotion", "emotion", "text"),
    ("arousal", "arousal", "float8"),
    ("emotion_vector", "emotions_vektor", "text"),
    ("intentions", "intentionen", "text"),
    ("mode", "modus", "text"),
    ("language_style", "sprach_stil", "text"),
    ("relationship_dynamic", "beziehungs_dynamik", "text"),
    ("tone", "tone", "text"),
    ("corrected_at", "korrigiert_am", "timestamptz"),
    ("language", "sprache", "regconfig"),
)
"""`NewNode` attribute → column of `lzg_knoten`, and its type (cast in a VALUES list, whose
NULLs would otherwise be text)."""

INSERT_COLUMNS: Final = tuple(column for _, column, _ in _NEW_NODE_FIELDS)
assert {name for name, _, _ in _NEW_NODE_FIELDS} == {f.name for f in fields(NewNode)}


def as_vector(vector: Sequence[float] | np.ndarray) -> np.ndarray:
    return np.asarray(vector, dtype=np.float32)


def _values(node: NewNode) -> list[Any]:
    values = [getattr(node, name) for name, _, _ in _NEW_NODE_FIELDS]
    values[INSERT_COLUMNS.index("embedding")] = as_vector(node.embedding)
    values[INSERT_COLUMNS.index("sprache")] = node.language or text_config(node.text)
    return values


async def insert_node(conn: AsyncConnection[Any], node: NewNode) -> int | None:
    """Insert a node; None if a node for this `source_key` already exists or the person
    deleted the node made from it (`lzg_geloescht`)."""
    placeholders = ", ".join(
        "%s::regconfig" if col == "sprache" else "%s" for col in INSERT_COLUMNS
    )
    cur = await conn.execute(
        f"INSERT INTO lzg_knoten ({', '.join(INSERT_COLUMNS)}) SELECT {placeholders}"
        " WHERE NOT EXISTS (SELECT 1 FROM lzg_geloescht WHERE kzg_key = %s)"
        " ON CONFLICT (kzg_quell_key) DO NOTHING RETURNING id",
        [*_values(node), node.source_key],
    )
    row = await cur.fetchone()
    return None if row is None else int(row["id"])


_NODE_VALUES: Final = (
    "(%s::int, " + ", ".join(f"%s::{kind}" for _, _, kind in _NEW_NODE_FIELDS) + ")"
)
"""One node of `insert_nodes`: its place in the batch, then its columns."""


async def insert_nodes(conn: AsyncConnection[Any], nodes: Sequence[NewNode]) -> list[int | None]:
    """`insert_node` for a batch, as one statement (all or nothing; the pair-size triggers
    run once), ids in the batch's order: per node its new id, or None where its
    `source_key` (distinct) is stored or tombstoned already."""
    if not nodes:
        return []
    values: list[Any] = []
    for place, node in enumerate(nodes):
        values.extend([place, *_values(node)])
    columns = ", ".join(INSERT_COLUMNS)
    picked = ", ".join(f"v.{col}" for col in INSERT_COLUMNS)
    cur = await conn.execute(
        f"INSERT INTO lzg_knoten ({columns}) SELECT {picked} FROM (VALUES"
        f" {', '.join([_NODE_VALUES] * len(nodes))}) AS v (platz, {columns})"
        " WHERE NOT EXISTS (SELECT 1 FROM lzg_geloescht g WHERE g.kzg_key = v.kzg_quell_key)"
        " ORDER BY v.platz ON CONFLICT (kzg_quell_key) DO NOTHING RETURNING id, kzg_quell_key",
        values,
    )
    stored = {str(row["kzg_quell_key"]): int(row["id"]) for row in await cur.fetchall()}
    return [stored.get(node.source_key) for node in nodes]


async def node_by_source(conn: AsyncConnection[Any], source_key: str) -> LongTermNode | None:
    cur = await conn.execute(
        f"SELECT {NODE_COLUMNS} {NODE_FROM} WHERE k.kzg_quell_key = %s", (source_key,)
    )
    row = await cur.fetchone()
    return None if row is None else node_of(row)


async def get_node(conn: AsyncConnection[Any], node_id: int) -> LongTermNode | None:
    cur = await conn.execute(f"SELECT {NODE_COLUMNS} {NODE_FROM} WHERE k.id = %s", (node_id,))
    row = await cur.fetchone()
    return None if row is None else node_of(row)


async def get_node_of(conn: AsyncConnection[Any], pair: Pair, node_id: int) -> LongTermNode | None:
    """A node by id if it belongs to the pair (another pair's node is None)."""
    cur = await conn.execute(
        f"SELECT {NODE_COLUMNS} {NODE_FROM}"
        " WHERE k.id = %s AND k.user_id = %s AND k.character_id = %s",
        (node_id, pair.user_id, pair.character_id),
    )
    row = await cur.fetchone()
    return None if row is None else node_of(row)


async def queue_nodes_by_id(
    conn: AsyncConnection[Any], ids: Iterable[int]
) -> Reply[dict[int, LongTermNode]]:
    """Nodes (without vectors) of these ids, queued in the caller's pipeline."""
    wanted = sorted(set(ids))
    if not wanted:
        return Reply.ready({})
    cur = await conn.execute(f"SELECT {NODE_COLUMNS} {NODE_FROM} WHERE k.id = ANY(%s)", (wanted,))
    return Reply.of(cur, lambda rows: {node.id: node for node in nodes_of(rows)})


async def list_nodes(
    conn: AsyncConnection[Any],
    pair: Pair,
    *,
    include_inactive: bool = False,
    limit: int = 50,
    offset: int = 0,
) -> list[LongTermNode]:
    """A pair's nodes for read APIs, strongest (decayed weight) first, with `edge_count`."""
    active = "" if include_inactive else " AND k.aktiv"
    cur = await conn.execute(
        f"SELECT {NODE_COLUMNS}, (SELECT count(*) FROM lzg_kanten e WHERE e.knoten_a_id = k.id)"
        f" AS edge_count {NODE_FROM} WHERE k.user_id = %s AND k.character_id = %s{active}"
        " ORDER BY k.gewicht_decay DESC, k.id LIMIT %s OFFSET %s",
        (pair.user_id, pair.character_id, int(limit), int(offset)),
    )
    return nodes_of(await cur.fetchall())


@dataclass(frozen=True, slots=True)
class NodeCounts:
    active: int
    total: int


async def count_nodes(conn: AsyncConnection[Any], pair: Pair) -> NodeCounts:
    cur = await conn.execute(
        "SELECT count(*) FILTER (WHERE aktiv) AS active, count(*) AS total FROM lzg_knoten"
        " WHERE user_id = %s AND character_id = %s",
        (pair.user_id, pair.character_id),
    )
    row = await cur.fetchone()
    return NodeCounts(int(row["active"]), int(row["total"])) if row else NodeCounts(0, 0)


async def correct_node(
    conn: AsyncConnection[Any],
    pair: Pair,
    node_id: int,
    text: str,
    vector: Sequence[float] | np.ndarray,
    now: datetime,
) -> LongTermNode | None:
    """Replace a node's text and embedding with the person's correction (weights, edges and
    provenance stay); the updated node, or None when the pair has no such node."""
    cur = await conn.execute(
        "UPDATE lzg_knoten SET inhalt = %s, embedding = %s, sprache = %s::regconfig,"
        " korrigiert_am = %s WHERE id = %s AND user_id = %s AND character_id = %s RETURNING id",
        (
            text,
            as_vector(vector),
            text_config(text),
            now,
            node_id,
            pair.user_id,
            pair.character_id,
        ),
    )
    if await cur.fetchone() is None:
        return None
    return await get_node(conn, node_id)


async def delete_node(conn: AsyncConnection[Any], pair: Pair, node_id: int) -> list[str] | None:
    """Delete one node of the pair for good and tombstone every short-term key it was made
    from or reinforced by; the keys, or None when the pair has no such node. Its edges go
    with it (ON DELETE CASCADE); `verbindung.lzg_id` becomes NULL. Call in a transaction."""
    cur = await conn.execute(
        "SELECT kzg_quell_key FROM lzg_knoten"
        " WHERE id = %s AND user_id = %s AND character_id = %s FOR UPDATE",
        (node_id, pair.user_id, pair.character_id),
    )
    row = await cur.fetchone()
    if row is None:
        return None
    cur = await conn.execute("SELECT kzg_key FROM lzg_befoerderung WHERE lzg_id = %s", (node_id,))
    found = {str(r["kzg_key"]) for r in await cur.fetchall()}
    if row["kzg_quell_key"]:
        found.add(str(row["kzg_quell_key"]))
    source = sorted(found)
    if source:
        async with conn.cursor() as tomb:
            await tomb.executemany(
                "INSERT INTO lzg_geloescht (kzg_key, lzg_id, user_id, character_id)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT (kzg_key) DO NOTHING",
                [(key, node_id, pair.user_id, pair.character_id) for key in source],
            )
    await conn.execute("DELETE FROM lzg_knoten WHERE id = %s", (node_id,))
    return source


async def set_weights(
    conn: AsyncConnection[Any],
    node_id: int,
    *,
    raw: float,
    absolute: float,
    decayed: float,
    now: datetime,
    count_frequency: bool,
) -> None:
    """A reinforcement or reactivation: new weights, active, reinforced now."""
    await conn.execute(
        "UPDATE lzg_knoten SET gewicht_roh = %s, gewicht_absolut = %s, gewicht_decay = %s,"
        " aktiv = TRUE, verstaerkt_am = %s,"
        " haeufigkeit = haeufigkeit + CASE WHEN %s THEN 1 ELSE 0 END WHERE id = %s",
        (raw, absolute, decayed, now, count_frequency, node_id),
    )


async def mark_retrieved(conn: AsyncConnection[Any], node_ids: Sequence[int], now: datetime) -> int:
    """One more retrieval, retrieved now: decay then measures from this use."""
    if not node_ids:
        return 0
    cur = await conn.execute(
        "UPDATE lzg_knoten SET abrufe = abrufe + 1, abgerufen_am = %s WHERE id = ANY(%s)",
        (now, list(node_ids)),
    )
    return cur.rowcount


@dataclass(frozen=True, slots=True)
class DecayBatch:
    """One statement of the decay job: nodes updated, of them deactivated, the last id
    (None when no active node was left after the given id)."""

    updated: int
    deactivated: int
    last_id: int | None


async def decay_batch(
    conn: AsyncConnection[Any],
    *,
    now: datetime,
    rate_per_day: float,
    threshold: float,
    after_id: int,
    batch: int,
) -> DecayBatch:
    """Decay up to `batch` active nodes with id > after_id (Ebbinghaus,
    docs/behaviour/memory.md#decay): the decayed weight = absolute weight ×
    e^(−rate × days since the newer of the last reinforcement and the last retrieval);
    below `threshold` the node is deactivated (soft delete)."""
    cur = await conn.execute(
        "WITH b AS ("
        "  SELECT id, gewicht_absolut * exp(-%(r)s * GREATEST(0, extract(epoch FROM"
        "    (%(now)s - GREATEST(verstaerkt_am, abgerufen_am))) / 86400.0)) AS d"
        "  FROM lzg_knoten WHERE aktiv AND id > %(after)s ORDER BY id LIMIT %(n)s)"
        " UPDATE lzg_knoten k SET gewicht_decay = b.d, decay_am = %(now)s,"
        "   aktiv = b.d >= %(th)s"
        " FROM b WHERE k.id = b.id RETURNING k.id, k.aktiv AS active",
        {"r": rate_per_day, "now": now, "after": after_id, "n": int(batch), "th": threshold},
    )
    rows = await cur.fetchall()
    if not rows:
        return DecayBatch(0, 0, None)
    deactivated = sum(1 for row in rows if not row["active"])
    return DecayBatch(len(rows), deactivated, max(int(row["id"]) for row in rows))
