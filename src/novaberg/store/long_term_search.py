"""Long-term memory search: the nearest nodes of a pair by vector (HNSW or exact), by
shared themes, entities or timeline, and by words (docs/behaviour/memory.md#long-term-search).

Nearest-neighbour search uses the HNSW index (`ORDER BY embedding <=> v LIMIT k`) with the
pair filter of production; `hnsw.ef_search` and iterative scans are set per transaction.
The index's build parameters live in migration 003 (bench/memory.py reads them there).
Every read returns `LongTermNode`s (store/long_term_nodes.py) with their `cosine`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Final

import numpy as np
from psycopg import AsyncConnection

from novaberg.pair import Pair
from novaberg.store.long_term_nodes import (
    NODE_COLUMNS,
    NODE_FROM,
    LongTermNode,
    as_vector,
    nodes_of,
)
from novaberg.store.pipelined import Reply, local_settings, pipeline
from novaberg.store.text_search import QueryTerms

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


async def set_search_params(conn: AsyncConnection[Any], ef_search: int = EF_SEARCH) -> None:
    """Per-transaction HNSW settings (call inside `conn.transaction()`)."""
    await conn.execute(
        "SELECT set_config('hnsw.ef_search', %s, true),"
        " set_config('hnsw.iterative_scan', %s, true),"
        " set_config('hnsw.max_scan_tuples', %s, true)",
        (str(int(ef_search)), ITERATIVE_SCAN, str(int(MAX_SCAN_TUPLES))),
    )


EXACT_PAIR_LIMIT: Final = 4_000
"""A pair with at most this many active nodes is ranked exactly (pair b-tree + sort) instead
of through HNSW. The planner cannot see how small one pair is next to a big one: at
100 000 nodes it chose HNSW for a 2 000-node pair and the filtered iterative scan gave up
at `MAX_SCAN_TUPLES` with recall 0.70. Exact ranking costs ~5 µs a row (2 000 rows: p50
≈ 9 ms), so the limit keeps it inside the latency goal."""


async def pair_size(conn: AsyncConnection[Any], pair: Pair) -> int:
    """Active nodes of the pair (`lzg_paar_groesse`, kept by triggers; migration 004)."""
    cur = await conn.execute(
        "SELECT aktive AS active FROM lzg_paar_groesse WHERE user_id = %s AND character_id = %s",
        (pair.user_id, pair.character_id),
    )
    row = await cur.fetchone()
    return int(row["active"]) if row else 0


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
        f"SELECT {NODE_COLUMNS}, 1 - ({distance}) AS cosine {NODE_FROM}"
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
) -> list[LongTermNode]:
    """The pair's k nodes nearest to `vector` (cosine), each with its `cosine`.

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
        return nodes_of(await cur.fetchall())
    # pipeline mode: BEGIN, the settings, the query and COMMIT go out in one round trip
    async with pipeline(conn), conn.transaction():
        if exact:
            await conn.execute("SET LOCAL enable_indexscan = off")
        elif not small:
            await set_search_params(conn, ef_search)
        cur = await conn.execute(sql, params)
    return nodes_of(await cur.fetchall())


async def queue_nearest(
    conn: AsyncConnection[Any],
    pair: Pair,
    vector: Sequence[float] | np.ndarray,
    k: int,
    *,
    active_only: bool = True,
) -> Reply[list[LongTermNode]]:
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
    return Reply.of(cur, nodes_of)


async def overlap_candidates(
    conn: AsyncConnection[Any],
    pair: Pair,
    vector: Sequence[float] | np.ndarray,
    *,
    themes: Sequence[str],
    entity_ids: Sequence[int],
    exclude_id: int | None,
    limit: int,
) -> list[LongTermNode]:
    """Active nodes of the pair sharing a theme or an entity, strongest first, with cosine."""
    if not themes and not entity_ids:
        return []
    cur = await conn.execute(
        f"SELECT {NODE_COLUMNS}, 1 - (k.embedding <=> %(v)s) AS cosine {NODE_FROM}"
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
    return nodes_of(await cur.fetchall())


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
) -> list[LongTermNode]:
    """Active nodes of the pair anchored to a timeline row of the same precision nearby."""
    cur = await conn.execute(
        f"SELECT {NODE_COLUMNS}, 1 - (k.embedding <=> %(v)s) AS cosine {NODE_FROM}"
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
    return nodes_of(await cur.fetchall())


def lexical_sql(*, active_only: bool, window: bool) -> str:
    """The pair's nodes by words: Σ idf of the matched lexemes (condensed nodes are of similar
    length, so no length normalisation)."""
    active = " AND k.aktiv" if active_only else ""
    # the day a node is about: its timeline row's (a day anchor, an appointment), else when said
    day = (
        "coalesce((SELECT t.event_time FROM timeline t WHERE t.id = k.timeline_id),"
        " k.kzg_erstellt_am, k.erstellt_am)"
    )
    within = f" AND {day} >= %(start)s AND {day} < %(end)s" if window else ""
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
        params["start"], params["end"] = window
    cur = await conn.execute(
        lexical_sql(active_only=active_only, window=window is not None), params
    )
    return Reply.of(
        cur, lambda rows: [(int(row["id"]), float(row["score"] or 0.0)) for row in rows]
    )
