"""Long-term memory (LZG) storage: SQL on `lzg_knoten` and `lzg_kanten`
(docs/behaviour/memory.md#long-term-memory, docs/behaviour/memory.md#long-term-search).

Nearest-neighbour search uses the HNSW index (`ORDER BY embedding <=> v LIMIT k`) with the
pair filter of production; `hnsw.ef_search` and iterative scans are set per transaction.
The index's build parameters live in migration 003 (bench/memory.py reads them there).
Every function takes an open connection so callers decide the transaction boundaries.
No model calls and no weight formulas here (those live in `novaberg.memory`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final

import numpy as np
from psycopg import AsyncConnection

from novaberg.pair import Pair
from novaberg.store.pipeline_log import HISTORY_ARTS
from novaberg.store.pipelined import Reply, local_settings, pipeline
from novaberg.store.text_search import QueryTerms, text_config

EF_SEARCH: Final = 100
"""HNSW candidate list per query. With the index of migration 003 (m 32, ef_construction
128) bench/memory.py measures recall@10 at 1 M clustered nodes of 0.877 / 0.950 / 0.970 /
0.990 at ef 40 / 60 / 100 / 200; 100 keeps a margin above the goal of 0.95 for less
regular real data. Latency barely depends on it: it is set by how much of the index sits
in shared_buffers (the figures: bench/README.md, "Long-term search")."""

ITERATIVE_SCAN: Final = "strict_order"
"""pgvector ≥ 0.8: keep scanning the index until LIMIT rows pass the pair filter, in
exact distance order (the spreading read takes its anchors in that order), so a small pair
among many is still found through HNSW. With one dominant pair the first ef_search
candidates already fill LIMIT and the scan stops there."""

MAX_SCAN_TUPLES: Final = 20_000
"""Where an iterative scan gives up (pgvector's `hnsw.max_scan_tuples`, set explicitly so
the bound does not change with the extension's default): bounds the latency of a pair
whose nodes are rare in the scanned region. A really small pair is planned through the
pair b-tree + exact sort instead (2 000 nodes beside 1 M: p99 ≈ 12–14 ms, recall 1.0)."""

NODE_COLUMNS: Final = (
    "k.id, k.kzg_quell_key, k.user_id, k.character_id, k.beobachter, k.inhalt, k.dimension,"
    " k.gewicht_roh, k.gewicht_absolut, k.gewicht_decay, k.haeufigkeit, k.abrufe, k.aktiv,"
    " k.erstellt_am, k.verstaerkt_am, k.abgerufen_am, k.decay_am, k.kzg_erstellt_am, k.themen,"
    " k.gedaechtnistyp, k.entitaet_ids, k.timeline_id, k.emotion, k.arousal,"
    " k.emotions_vektor, k.intentionen, k.modus, k.sprach_stil, k.beziehungs_dynamik, k.tone,"
    " k.korrigiert_am, t.precision AS timeline_praezision, t.event_time AS timeline_zeit"
)
"""Every node column except the embedding, plus its timeline anchor (edge layer 4)."""

_FROM: Final = "FROM lzg_knoten k LEFT JOIN timeline t ON t.id = k.timeline_id"

INSERT_COLUMNS: Final = (
    "kzg_quell_key",
    "user_id",
    "character_id",
    "beobachter",
    "inhalt",
    "embedding",
    "dimension",
    "gewicht_roh",
    "gewicht_absolut",
    "gewicht_decay",
    "haeufigkeit",
    "erstellt_am",
    "verstaerkt_am",
    "kzg_erstellt_am",
    "themen",
    "gedaechtnistyp",
    "entitaet_ids",
    "timeline_id",
    "emotion",
    "arousal",
    "emotions_vektor",
    "intentionen",
    "modus",
    "sprach_stil",
    "beziehungs_dynamik",
    "tone",
    "korrigiert_am",
    "sprache",
)


def as_vector(vector: Sequence[float] | np.ndarray) -> np.ndarray:
    return np.asarray(vector, dtype=np.float32)


async def set_search_params(conn: AsyncConnection[Any], ef_search: int = EF_SEARCH) -> None:
    """Per-transaction HNSW settings (call inside `conn.transaction()`)."""
    await conn.execute(
        "SELECT set_config('hnsw.ef_search', %s, true),"
        " set_config('hnsw.iterative_scan', %s, true),"
        " set_config('hnsw.max_scan_tuples', %s, true)",
        (str(int(ef_search)), ITERATIVE_SCAN, str(int(MAX_SCAN_TUPLES))),
    )


async def insert_node(conn: AsyncConnection[Any], node: Mapping[str, Any]) -> int | None:
    """Insert a node; None if a node for this `kzg_quell_key` already exists or the person
    deleted the node made from it (`lzg_geloescht`)."""
    values = [node.get(col) for col in INSERT_COLUMNS]
    values[INSERT_COLUMNS.index("embedding")] = as_vector(node["embedding"])
    values[INSERT_COLUMNS.index("sprache")] = node.get("sprache") or text_config(node["inhalt"])
    placeholders = ", ".join(
        "%s::regconfig" if col == "sprache" else "%s" for col in INSERT_COLUMNS
    )
    cur = await conn.execute(
        f"INSERT INTO lzg_knoten ({', '.join(INSERT_COLUMNS)}) SELECT {placeholders}"
        " WHERE NOT EXISTS (SELECT 1 FROM lzg_geloescht WHERE kzg_key = %s)"
        " ON CONFLICT (kzg_quell_key) DO NOTHING RETURNING id",
        [*values, node.get("kzg_quell_key")],
    )
    row = await cur.fetchone()
    return None if row is None else int(row["id"])


INSERT_TYPES: Final = {
    "embedding": "vector",
    "gewicht_roh": "float8",
    "gewicht_absolut": "float8",
    "gewicht_decay": "float8",
    "haeufigkeit": "int4",
    "erstellt_am": "timestamptz",
    "verstaerkt_am": "timestamptz",
    "kzg_erstellt_am": "timestamptz",
    "themen": "text[]",
    "entitaet_ids": "int4[]",
    "timeline_id": "int4",
    "arousal": "float8",
    "korrigiert_am": "timestamptz",
    "sprache": "regconfig",
}
"""Column types of `INSERT_COLUMNS` other than text, cast in a VALUES list (whose NULLs
would otherwise be text)."""

_NODE_VALUES: Final = (
    "(%s::int, " + ", ".join(f"%s::{INSERT_TYPES.get(col, 'text')}" for col in INSERT_COLUMNS) + ")"
)
"""One node of `insert_nodes`: its place in the batch, then its columns."""


async def insert_nodes(
    conn: AsyncConnection[Any], nodes: Sequence[Mapping[str, Any]]
) -> list[int | None]:
    """`insert_node` for a batch, as one statement (all or nothing; the pair-size triggers
    run once), ids in the batch's order: per node its new id, or None where its
    `kzg_quell_key` (required, distinct) is stored or tombstoned already."""
    if not nodes:
        return []
    values: list[Any] = []
    for place, node in enumerate(nodes):
        row = [node.get(col) for col in INSERT_COLUMNS]
        row[INSERT_COLUMNS.index("embedding")] = as_vector(node["embedding"])
        row[INSERT_COLUMNS.index("sprache")] = node.get("sprache") or text_config(node["inhalt"])
        values.extend([place, *row])
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
    return [stored.get(str(node["kzg_quell_key"])) for node in nodes]


async def stored_sources(conn: AsyncConnection[Any], kzg_keys: Sequence[str]) -> set[str]:
    """Which of these source keys have a node, or had one the person deleted."""
    cur = await conn.execute(
        "SELECT kzg_quell_key AS k FROM lzg_knoten WHERE kzg_quell_key = ANY(%(k)s)"
        " UNION SELECT kzg_key FROM lzg_geloescht WHERE kzg_key = ANY(%(k)s)",
        {"k": list(kzg_keys)},
    )
    return {str(row["k"]) for row in await cur.fetchall()}


async def node_by_source(conn: AsyncConnection[Any], kzg_key: str) -> dict[str, Any] | None:
    cur = await conn.execute(
        f"SELECT {NODE_COLUMNS} {_FROM} WHERE k.kzg_quell_key = %s", (kzg_key,)
    )
    return await cur.fetchone()


async def promoted_to(conn: AsyncConnection[Any], kzg_key: str) -> int | None:
    """The node a short-term key was carried into, if it was promoted already."""
    cur = await conn.execute(
        "SELECT lzg_id FROM lzg_befoerderung WHERE kzg_key = %s"
        " UNION ALL SELECT id FROM lzg_knoten WHERE kzg_quell_key = %s LIMIT 1",
        (kzg_key, kzg_key),
    )
    row = await cur.fetchone()
    return None if row is None else int(row["lzg_id"])


async def deleted_key(conn: AsyncConnection[Any], kzg_key: str) -> int | None:
    """The id of the deleted node a short-term key belonged to, if the person deleted it."""
    cur = await conn.execute("SELECT lzg_id FROM lzg_geloescht WHERE kzg_key = %s", (kzg_key,))
    row = await cur.fetchone()
    return None if row is None else int(row["lzg_id"])


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


async def correct_node(
    conn: AsyncConnection[Any],
    pair: Pair,
    node_id: int,
    inhalt: str,
    vector: Sequence[float] | np.ndarray,
    now: datetime,
) -> dict[str, Any] | None:
    """Replace a node's text and embedding with the person's correction (weights, edges and
    provenance stay); the updated node, or None when the pair has no such node."""
    cur = await conn.execute(
        "UPDATE lzg_knoten SET inhalt = %s, embedding = %s, sprache = %s::regconfig,"
        " korrigiert_am = %s WHERE id = %s AND user_id = %s AND character_id = %s RETURNING id",
        (
            inhalt,
            as_vector(vector),
            text_config(inhalt),
            now,
            node_id,
            pair.user_id,
            pair.character_id,
        ),
    )
    if await cur.fetchone() is None:
        return None
    return await get_node(conn, node_id)


async def record_promotion(
    conn: AsyncConnection[Any], kzg_key: str, node_id: int, action: str
) -> bool:
    """Record the promotion of `kzg_key`; False if it was recorded already."""
    cur = await conn.execute(
        "INSERT INTO lzg_befoerderung (kzg_key, lzg_id, aktion) VALUES (%s, %s, %s)"
        " ON CONFLICT (kzg_key) DO NOTHING",
        (kzg_key, node_id, action),
    )
    return cur.rowcount == 1


async def get_node(conn: AsyncConnection[Any], node_id: int) -> dict[str, Any] | None:
    cur = await conn.execute(f"SELECT {NODE_COLUMNS} {_FROM} WHERE k.id = %s", (node_id,))
    return await cur.fetchone()


async def get_node_of(
    conn: AsyncConnection[Any], pair: Pair, node_id: int
) -> dict[str, Any] | None:
    """A node by id if it belongs to the pair (another pair's node is None)."""
    cur = await conn.execute(
        f"SELECT {NODE_COLUMNS} {_FROM} WHERE k.id = %s AND k.user_id = %s AND k.character_id = %s",
        (node_id, pair.user_id, pair.character_id),
    )
    return await cur.fetchone()


EXACT_PAIR_LIMIT: Final = 4_000
"""A pair with at most this many active nodes is ranked exactly (pair b-tree + sort) instead
of through HNSW. The planner cannot see how small one pair is next to a big one: at
100 000 nodes it chose HNSW for a 2 000-node pair and the filtered iterative scan gave up
at `MAX_SCAN_TUPLES` with recall 0.70. Exact ranking costs ~5 µs a row (2 000 rows: p50
≈ 9 ms), so the limit keeps it inside the latency goal."""


async def pair_size(conn: AsyncConnection[Any], pair: Pair) -> int:
    """Active nodes of the pair (`lzg_paar_groesse`, kept by triggers; migration 004)."""
    cur = await conn.execute(
        "SELECT aktive FROM lzg_paar_groesse WHERE user_id = %s AND character_id = %s",
        (pair.user_id, pair.character_id),
    )
    row = await cur.fetchone()
    return int(row["aktive"]) if row else 0


PAIR_SIZE_SECONDS: Final = 30.0
"""How long `nearest` trusts a pair size it read. The size only picks the plan (exact vs
HNSW): a stale one near the limit changes neither correctness nor the goal measurably,
and re-reading it on every search costs a round trip per search."""

_sizes: dict[tuple[Any, ...], tuple[int, float]] = {}


async def recent_pair_size(
    conn: AsyncConnection[Any], pair: Pair, *, clock: Callable[[], float] = time.monotonic
) -> int:
    """`pair_size`, re-read at most every `PAIR_SIZE_SECONDS` per database and pair."""
    info = conn.info
    key = (info.host, info.port, info.dbname, pair)
    now = clock()
    known = _sizes.get(key)
    if known is not None and now - known[1] < PAIR_SIZE_SECONDS:
        return known[0]
    size = await pair_size(conn, pair)
    if len(_sizes) >= 4096:  # many pairs over a long uptime: start over, never grow unbounded
        _sizes.clear()
    _sizes[key] = (size, now)
    return size


def forget_pair_sizes() -> None:
    """Drop every remembered pair size (after the tables were emptied wholesale)."""
    _sizes.clear()


def nearest_sql(*, active_only: bool, index_order: bool) -> str:
    """The k-nearest query of a pair. Without `index_order` the distance is ordered as
    `(distance) + 0`, an expression the HNSW index cannot serve: the pair is ranked exactly."""
    active = " AND k.aktiv" if active_only else ""
    distance = "k.embedding <=> %(v)s"
    order = distance if index_order else f"({distance}) + 0"
    return (
        f"SELECT {NODE_COLUMNS}, 1 - ({distance}) AS cosine {_FROM}"
        f" WHERE k.user_id = %(u)s AND k.character_id = %(c)s{active}"
        f" ORDER BY {order} LIMIT %(k)s"
    )


async def nearest(
    conn: AsyncConnection[Any],
    pair: Pair,
    vector: Sequence[float] | np.ndarray,
    k: int,
    *,
    active_only: bool = True,
    ef_search: int = EF_SEARCH,
    exact: bool = False,
    exact_below: int = EXACT_PAIR_LIMIT,
) -> list[dict[str, Any]]:
    """The pair's k nodes nearest to `vector` (cosine), each with a `cosine` column.

    A pair with at most `exact_below` active nodes (`recent_pair_size`) is ranked exactly
    (`+ 0` keeps the HNSW index out of the plan) by one plain query; a larger one through
    HNSW with the settings local to a transaction. `exact=True` disables index scans
    altogether (the benchmark's ground truth; never used in production).
    """
    small = not exact and await recent_pair_size(conn, pair) <= exact_below
    sql = nearest_sql(active_only=active_only, index_order=not small)
    params = {"v": as_vector(vector), "u": pair.user_id, "c": pair.character_id, "k": int(k)}
    if small:  # no settings to scope: no transaction around it
        cur = await conn.execute(sql, params)
        return list(await cur.fetchall())
    # pipeline mode: BEGIN, the settings, the query and COMMIT go out in one round trip
    async with pipeline(conn), conn.transaction():
        if exact:
            await conn.execute("SET LOCAL enable_indexscan = off")
        elif not small:
            await set_search_params(conn, ef_search)
        cur = await conn.execute(sql, params)
    return list(await cur.fetchall())


async def queue_nearest(
    conn: AsyncConnection[Any],
    pair: Pair,
    vector: Sequence[float] | np.ndarray,
    k: int,
    *,
    active_only: bool = True,
) -> Reply[list[dict[str, Any]]]:
    """`nearest` (never `exact`) queued in the caller's pipeline (`store/pipelined.py`),
    the HNSW settings of a large pair local to its statement. The pair size is read
    first (`recent_pair_size`: mostly remembered; a read syncs the pipeline)."""
    small = await recent_pair_size(conn, pair) <= EXACT_PAIR_LIMIT
    sql = nearest_sql(active_only=active_only, index_order=not small)
    params = {"v": as_vector(vector), "u": pair.user_id, "c": pair.character_id, "k": int(k)}
    if small:
        cur = await conn.execute(sql, params)
    else:
        async with local_settings(conn):
            await set_search_params(conn)
            cur = await conn.execute(sql, params)
    return Reply.of(cur, list)


async def overlap_candidates(
    conn: AsyncConnection[Any],
    pair: Pair,
    vector: Sequence[float] | np.ndarray,
    *,
    themes: Sequence[str],
    entity_ids: Sequence[int],
    exclude_id: int | None,
    limit: int,
) -> list[dict[str, Any]]:
    """Active nodes of the pair sharing a theme or an entity, strongest first, with cosine."""
    if not themes and not entity_ids:
        return []
    cur = await conn.execute(
        f"SELECT {NODE_COLUMNS}, 1 - (k.embedding <=> %(v)s) AS cosine {_FROM}"
        " WHERE k.user_id = %(u)s AND k.character_id = %(c)s AND k.aktiv"
        " AND k.id <> %(x)s AND (k.themen && %(t)s::text[] OR k.entitaet_ids && %(e)s::int[])"
        " ORDER BY k.gewicht_decay DESC LIMIT %(n)s",
        {
            "v": as_vector(vector),
            "u": pair.user_id,
            "c": pair.character_id,
            "x": exclude_id if exclude_id is not None else -1,
            "t": list(themes),
            "e": list(entity_ids),
            "n": int(limit),
        },
    )
    return list(await cur.fetchall())


async def timeline_candidates(
    conn: AsyncConnection[Any],
    pair: Pair,
    vector: Sequence[float] | np.ndarray,
    *,
    precision: str,
    moment: datetime,
    within_days: int,
    exclude_id: int | None,
    limit: int,
) -> list[dict[str, Any]]:
    """Active nodes of the pair anchored to a timeline row of the same precision nearby."""
    cur = await conn.execute(
        f"SELECT {NODE_COLUMNS}, 1 - (k.embedding <=> %(v)s) AS cosine {_FROM}"
        " WHERE k.user_id = %(u)s AND k.character_id = %(c)s AND k.aktiv AND k.id <> %(x)s"
        " AND t.precision = %(p)s"
        " AND t.event_time BETWEEN %(m)s - make_interval(days => %(d)s)"
        " AND %(m)s + make_interval(days => %(d)s)"
        " ORDER BY k.gewicht_decay DESC LIMIT %(n)s",
        {
            "v": as_vector(vector),
            "u": pair.user_id,
            "c": pair.character_id,
            "x": exclude_id if exclude_id is not None else -1,
            "p": precision,
            "m": moment,
            "d": int(within_days) + 1,
            "n": int(limit),
        },
    )
    return list(await cur.fetchall())


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
    """A reinforcement or reactivation: new weights, active, verstaerkt_am = now."""
    await conn.execute(
        "UPDATE lzg_knoten SET gewicht_roh = %s, gewicht_absolut = %s, gewicht_decay = %s,"
        " aktiv = TRUE, verstaerkt_am = %s,"
        " haeufigkeit = haeufigkeit + CASE WHEN %s THEN 1 ELSE 0 END WHERE id = %s",
        (raw, absolute, decayed, now, count_frequency, node_id),
    )


EdgeRow = tuple[int, int, float, float, list[str], list[int], list[str], float | None, float | None]
"""(a, b, gewicht_roh, gewicht_absolut, gruende, geteilte_entitaet_ids, geteilte_themen,
timeline_naehe_tage, embedding_cosine_initial)."""


async def upsert_edges(conn: AsyncConnection[Any], rows: Iterable[EdgeRow], now: datetime) -> int:
    """Insert directed edges; an existing (a, b) gets the new weights only."""
    batch = [(*row, len(row[4]), now) for row in rows]
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


async def edges_touching(conn: AsyncConnection[Any], node_id: int) -> list[dict[str, Any]]:
    """Every directed edge from or to a node, with both ends' weight, themes and precision."""
    cur = await conn.execute(
        "SELECT e.id, e.knoten_a_id, e.knoten_b_id, e.verbindungs_gruende,"
        " e.embedding_cosine_initial, e.timeline_naehe_tage,"
        " a.gewicht_absolut AS a_absolut, a.themen AS a_themen, ta.precision AS a_praezision,"
        " b.gewicht_absolut AS b_absolut, b.themen AS b_themen, tb.precision AS b_praezision"
        " FROM lzg_kanten e JOIN lzg_knoten a ON a.id = e.knoten_a_id"
        " JOIN lzg_knoten b ON b.id = e.knoten_b_id"
        " LEFT JOIN timeline ta ON ta.id = a.timeline_id"
        " LEFT JOIN timeline tb ON tb.id = b.timeline_id"
        " WHERE e.knoten_a_id = %s OR e.knoten_b_id = %s",
        (node_id, node_id),
    )
    return list(await cur.fetchall())


async def set_edge_weights(
    conn: AsyncConnection[Any], updates: Iterable[tuple[float, float, int]]
) -> None:
    """(gewicht_roh, gewicht_absolut, edge id) for recomputed edges."""
    batch = list(updates)
    if not batch:
        return
    async with conn.cursor() as cur:
        await cur.executemany(
            "UPDATE lzg_kanten SET gewicht_roh = %s, gewicht_absolut = %s WHERE id = %s", batch
        )


async def outgoing(
    conn: AsyncConnection[Any], steps: Sequence[tuple[int, int | None]], k: int
) -> list[dict[str, Any]]:
    """For each (node, predecessor): its k strongest outgoing edges to active nodes, never
    back to the predecessor (docs/behaviour/memory.md#spreading-read)."""
    if not steps or k <= 0:
        return []
    sources = [s for s, _ in steps]
    previous = [p for _, p in steps]
    cur = await conn.execute(
        "SELECT s.quelle, s.vorgaenger, e.id AS kante_id, e.gewicht_absolut AS kanten_gewicht,"
        " e.verbindungs_gruende, e.geteilte_entitaet_ids, e.geteilte_themen,"
        " n.id, n.inhalt, n.dimension, n.gewicht_decay, n.emotion, n.arousal, n.themen,"
        " n.entitaet_ids, n.erstellt_am, n.verstaerkt_am, n.beobachter"
        " FROM unnest(%s::bigint[], %s::bigint[]) AS s(quelle, vorgaenger)"
        " CROSS JOIN LATERAL ("
        "   SELECT e.* FROM lzg_kanten e JOIN lzg_knoten nn ON nn.id = e.knoten_b_id"
        "   WHERE e.knoten_a_id = s.quelle AND nn.aktiv"
        "     AND (s.vorgaenger IS NULL OR e.knoten_b_id <> s.vorgaenger)"
        "   ORDER BY e.gewicht_absolut DESC LIMIT %s) e"
        " JOIN lzg_knoten n ON n.id = e.knoten_b_id",
        (sources, previous, int(k)),
    )
    return list(await cur.fetchall())


async def mark_retrieved(conn: AsyncConnection[Any], node_ids: Sequence[int], now: datetime) -> int:
    """abrufe + 1, abgerufen_am = now: decay then measures from this use."""
    if not node_ids:
        return 0
    cur = await conn.execute(
        "UPDATE lzg_knoten SET abrufe = abrufe + 1, abgerufen_am = %s WHERE id = ANY(%s)",
        (now, list(node_ids)),
    )
    return cur.rowcount


async def decay_batch(
    conn: AsyncConnection[Any],
    *,
    now: datetime,
    rate_per_day: float,
    threshold: float,
    after_id: int,
    batch: int,
) -> tuple[int, int, int | None]:
    """Decay up to `batch` active nodes with id > after_id (Ebbinghaus,
    docs/behaviour/memory.md#decay).

    gewicht_decay = gewicht_absolut × e^(−rate × days since the newer of verstaerkt_am and
    abgerufen_am); below `threshold` the node is deactivated (soft delete).
    Returns (updated, deactivated, last id or None when done).
    """
    cur = await conn.execute(
        "WITH b AS ("
        "  SELECT id, gewicht_absolut * exp(-%(r)s * GREATEST(0, extract(epoch FROM"
        "    (%(now)s - GREATEST(verstaerkt_am, abgerufen_am))) / 86400.0)) AS d"
        "  FROM lzg_knoten WHERE aktiv AND id > %(after)s ORDER BY id LIMIT %(n)s)"
        " UPDATE lzg_knoten k SET gewicht_decay = b.d, decay_am = %(now)s,"
        "   aktiv = b.d >= %(th)s"
        " FROM b WHERE k.id = b.id RETURNING k.id, k.aktiv",
        {"r": rate_per_day, "now": now, "after": after_id, "n": int(batch), "th": threshold},
    )
    rows = await cur.fetchall()
    if not rows:
        return 0, 0, None
    deactivated = sum(1 for row in rows if not row["aktiv"])
    return len(rows), deactivated, max(int(row["id"]) for row in rows)


async def list_nodes(
    conn: AsyncConnection[Any],
    pair: Pair,
    *,
    include_inactive: bool = False,
    limit: int = 50,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """A pair's nodes for read APIs, strongest (gewicht_decay) first."""
    active = "" if include_inactive else " AND k.aktiv"
    cur = await conn.execute(
        f"SELECT {NODE_COLUMNS}, (SELECT count(*) FROM lzg_kanten e WHERE e.knoten_a_id = k.id)"
        f" AS kanten {_FROM} WHERE k.user_id = %s AND k.character_id = %s{active}"
        " ORDER BY k.gewicht_decay DESC, k.id LIMIT %s OFFSET %s",
        (pair.user_id, pair.character_id, int(limit), int(offset)),
    )
    return list(await cur.fetchall())


async def count_nodes(conn: AsyncConnection[Any], pair: Pair) -> dict[str, int]:
    cur = await conn.execute(
        "SELECT count(*) FILTER (WHERE aktiv) AS aktiv, count(*) AS gesamt FROM lzg_knoten"
        " WHERE user_id = %s AND character_id = %s",
        (pair.user_id, pair.character_id),
    )
    row = await cur.fetchone()
    return {"aktiv": int(row["aktiv"]), "gesamt": int(row["gesamt"])} if row else {}


async def link_turn(conn: AsyncConnection[Any], kzg_key: str, node_id: int) -> None:
    """Fill `verbindung.lzg_id` for the promoted short-term key."""
    await conn.execute("UPDATE verbindung SET lzg_id = %s WHERE kzg_id = %s", (node_id, kzg_key))


async def purge_pipeline_log(conn: AsyncConnection[Any], before: datetime) -> int:
    """Delete pipeline_log rows older than `before`, except the conversation history
    (answered and failed turns, kept forever)."""
    cur = await conn.execute(
        "DELETE FROM pipeline_log WHERE erstellt_am < %s AND art <> ALL(%s)",
        (before, list(HISTORY_ARTS)),
    )
    return cur.rowcount


def lexical_sql(*, active_only: bool, window: bool) -> str:
    """The pair's nodes by words: Σ idf of the matched lexemes (condensed nodes are of similar
    length, so no length normalisation)."""
    active = " AND k.aktiv" if active_only else ""
    within = (
        " AND coalesce(k.kzg_erstellt_am, k.erstellt_am) >= %(von)s"
        " AND coalesce(k.kzg_erstellt_am, k.erstellt_am) < %(bis)s"
        if window
        else ""
    )
    return (
        "SELECT k.id, (SELECT sum(t.w) FROM unnest(%(tq)s::tsquery[], %(w)s::float8[])"
        " AS t(q, w) WHERE k.tsv @@ t.q) AS score FROM lzg_knoten k"
        f" WHERE k.user_id = %(u)s AND k.character_id = %(c)s{active}"
        f" AND k.tsv @@ %(any)s::tsquery{within} ORDER BY score DESC, k.id DESC LIMIT %(k)s"
    )


async def queue_lexical(
    conn: AsyncConnection[Any],
    pair: Pair,
    terms: QueryTerms,
    k: int,
    *,
    active_only: bool = True,
    window: tuple[datetime, datetime] | None = None,
) -> Reply[list[tuple[int, float]]]:
    """(node id, score) of the pair's k best nodes by words, best first; queued in the
    caller's pipeline (`store/pipelined.py`)."""
    if not terms.selecting:
        return Reply.ready([])
    params: dict[str, Any] = {
        "tq": terms.term_queries,
        "w": terms.weights,
        "any": terms.any_query,
        "u": pair.user_id,
        "c": pair.character_id,
        "k": int(k),
    }
    if window is not None:
        params["von"], params["bis"] = window
    cur = await conn.execute(
        lexical_sql(active_only=active_only, window=window is not None), params
    )
    return Reply.of(
        cur, lambda rows: [(int(row["id"]), float(row["score"] or 0.0)) for row in rows]
    )


async def queue_nodes_by_id(
    conn: AsyncConnection[Any], ids: Iterable[int]
) -> Reply[dict[int, dict[str, Any]]]:
    """Nodes (without vectors) of these ids, queued in the caller's pipeline."""
    wanted = sorted(set(ids))
    if not wanted:
        return Reply.ready({})
    cur = await conn.execute(f"SELECT {NODE_COLUMNS} {_FROM} WHERE k.id = ANY(%s)", (wanted,))
    return Reply.of(cur, lambda rows: {int(row["id"]): dict(row) for row in rows})


async def queue_source_keys(
    conn: AsyncConnection[Any], node_ids: Iterable[int]
) -> Reply[list[dict[str, Any]]]:
    """Provenance of nodes: every short-term key each was created from or reinforced by
    (`kzg_quell_key`, `lzg_befoerderung`) and the turn that key was condensed from
    (`verbindung`), as rows {lzg_id, kzg_key, turn_id}; queued in the caller's pipeline."""
    wanted = sorted(set(node_ids))
    if not wanted:
        return Reply.ready([])
    cur = await conn.execute(
        "WITH schluessel AS ("
        " SELECT id AS lzg_id, kzg_quell_key AS kzg_key FROM lzg_knoten"
        "  WHERE id = ANY(%(ids)s) AND kzg_quell_key IS NOT NULL"
        " UNION SELECT lzg_id, kzg_key FROM lzg_befoerderung WHERE lzg_id = ANY(%(ids)s))"
        " SELECT s.lzg_id, s.kzg_key, v.turn_id FROM schluessel s"
        " LEFT JOIN verbindung v ON v.kzg_id = s.kzg_key ORDER BY s.lzg_id, s.kzg_key",
        {"ids": wanted},
    )
    return Reply.of(cur, lambda rows: [dict(row) for row in rows])
