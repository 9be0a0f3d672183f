"""Memory search speed and quality: long-term HNSW vs exact search, short-term brute force.

Long-term (LZG, PostgreSQL + pgvector): synthetic nodes of one pair (clustered 384-d
vectors: 1000 gaussian centroids + noise, so approximate search has something to get
wrong) are loaded with binary COPY, then the production HNSW index is built with the
CREATE INDEX statement of the newest migration that defines `lzg_knoten_embedding` (so the
benchmark measures exactly what production builds). Queries run the production query
(`store.long_term_search.nearest`: pair filter + aktiv, `ORDER BY embedding <=> q LIMIT 10`,
hnsw.ef_search, iterative scan); the exact baseline is the same query with index scans
off, measured in the same run on the same queries. Reported: p50/p99 latency of both,
their ratio, recall@10 against exact. A measurement that failed shows as `null` / "failed",
never as a number. Goal (issue #5): at 1 M nodes p99 ≤ 20 ms and recall@10 ≥ 0.95.

Short-term (KZG, Redis): one pair with 5 000 entries, `ShortTermStore.nearest` (exact cosine in
numpy over the pair) with a cold vector cache and a warm one.

    .venv/bin/python bench/memory.py [--sizes 100000,1000000] [--queries 100]
        [--ef 40,100,200,400] [--kzg-entries 5000] [--shared-buffers 128MB] [--keep]
    .venv/bin/python bench/memory.py --reuse /tmp/novaberg-bench-memory-XXXX --sizes 1000000

Runs its own embedded PostgreSQL and Valkey under a fresh directory in /tmp (never the
user's data). On 2 cores the 1 M index build takes the longest part (about half an hour);
progress is printed to stderr. Options:
- `--keep` keeps the directory; `--reuse DIR` measures again on a kept directory without
  loading or building what is already there (same seed, same queries), e.g. on a quiet
  machine;
- `--shared-buffers 4GB` sets the server's shared_buffers (default: what production's
  `NOVABERG_POSTGRES_SHARED_BUFFERS=auto` gives, a quarter of the RAM up to 8GB; `default`
  = PostgreSQL's own 128MB) and `--prewarm` loads the index into them first (the steady
  state of a server whose shared_buffers hold the index);
- `--rare-pair-nodes N` (default 2000) adds a small second pair to the table after the big
  one is measured and measures its query (which plan serves it, latency, recall);
- `--index-params 16:64,24:128` builds and measures other (m, ef_construction) pairs for
  tuning (rows marked non-production), and `--centroids` changes the data for such
  exploration only. The goal is judged only on production data (1000 centroids), the
  production index and the production ef_search.
Build resources (maintenance_work_mem, parallel workers) are the benchmark's own: they
change how fast the graph is built, not the graph. Prints one JSON line per measurement,
then a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

GOAL_P99_MS = 20.0
GOAL_RECALL = 0.95
GOAL_NODES = 1_000_000
"""Issue #5: long-term search at 1 M nodes, p99 ≤ 20 ms and recall@10 ≥ 0.95."""

DIM = 384
CENTROIDS = 1000
NOISE = 1.0
"""Per-vector noise norm relative to its unit centroid: cos(vector, centroid) ≈ 0.7."""

SEED = 7
STREAM_QUERIES, STREAM_NODES, STREAM_KZG, STREAM_RARE = 1, 2, 3, 4
"""Independent random streams: the nodes of a batch depend only on the seed and their
position, so a reused directory continues with the data a fresh run would have made."""

K = 10
COPY_BATCH = 50_000
PAIR = ("bench", "nova")
RARE_PAIR = ("selten", "nova")
"""A second, small pair in the same table: its query must filter out almost every row, which
is where the iterative-scan settings (`long_term_search.ITERATIVE_SCAN`, `long_term_search.MAX_SCAN_TUPLES`) matter."""
INDEX_NAME = "lzg_knoten_embedding"


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def emit(record: dict[str, Any]) -> None:
    print(json.dumps({"bench": "memory", **record}, ensure_ascii=False), flush=True)


class Clustered:
    """Deterministic clustered unit vectors (the same seed gives the same data)."""

    def __init__(self, dim: int, centroids: int, seed: int = SEED) -> None:
        rng = np.random.default_rng(seed)
        c = rng.standard_normal((centroids, dim)).astype(np.float32)
        self.centroids = c / np.linalg.norm(c, axis=1, keepdims=True)
        self.dim = dim
        self.seed = seed

    def sample(self, n: int, stream: int, start: int = 0) -> np.ndarray:
        """`n` vectors of a stream, starting at position `start` (batches are independent)."""
        rng = np.random.default_rng([self.seed, stream, start])
        which = rng.integers(0, len(self.centroids), n)
        noise = rng.standard_normal((n, self.dim)).astype(np.float32)
        noise *= NOISE / np.sqrt(self.dim)
        vectors = self.centroids[which] + noise
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


# --- the production index -----------------------------------------------------------

_INDEX_DDL = re.compile(
    rf"CREATE\s+INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?{INDEX_NAME}\s+ON\s+lzg_knoten\s+USING\s+hnsw"
    r"\s*\((?P<column>[^)]*)\)\s*WITH\s*\(\s*m\s*=\s*(?P<m>\d+)\s*,"
    r"\s*ef_construction\s*=\s*(?P<efc>\d+)\s*\)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class IndexSpec:
    """An HNSW build: (m, ef_construction) and where the parameters came from."""

    m: int
    ef_construction: int
    column: str
    source: str
    production: bool

    def ddl(self) -> str:
        return (
            f"CREATE INDEX {INDEX_NAME} ON lzg_knoten USING hnsw ({self.column})"
            f" WITH (m = {self.m}, ef_construction = {self.ef_construction})"
        )

    def reloptions(self) -> set[str]:
        return {f"m={self.m}", f"ef_construction={self.ef_construction}"}

    def label(self) -> str:
        return f"{self.m}:{self.ef_construction}"


def production_index() -> IndexSpec:
    """The index of the newest migration that creates `lzg_knoten_embedding`.

    Fails loudly if no migration does: a benchmark of a guessed index would measure
    something production never builds.
    """
    from novaberg.store.migrate import core_migrations

    found: IndexSpec | None = None
    for migration in core_migrations():
        for match in _INDEX_DDL.finditer(migration.sql):
            found = IndexSpec(
                int(match["m"]),
                int(match["efc"]),
                " ".join(match["column"].split()),
                migration.name,
                production=True,
            )
    if found is None:
        raise SystemExit(f"no migration creates {INDEX_NAME} with (m, ef_construction)")
    return found


def index_specs(option: str, production: IndexSpec) -> list[IndexSpec]:
    """`--index-params 16:64,24:128` → specs (the production one keeps its flag)."""
    if not option.strip():
        return [production]
    specs: list[IndexSpec] = []
    for item in option.split(","):
        m, efc = (int(x) for x in item.split(":"))
        is_production = (m, efc) == (production.m, production.ef_construction)
        specs.append(
            IndexSpec(
                m,
                efc,
                production.column,
                production.source if is_production else "--index-params",
                is_production,
            )
        )
    return specs


# --- long-term --------------------------------------------------------------------


def pair_count(url: str, pair: tuple[str, str] = PAIR) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM lzg_knoten WHERE user_id = %s AND character_id = %s", pair
        ).fetchone()
    return int(row[0]) if row else 0


def existing_index(url: str) -> set[str] | None:
    """reloptions of a valid `lzg_knoten_embedding`; None if there is none (or invalid)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT c.reloptions, i.indisvalid FROM pg_class c JOIN pg_index i"
            " ON i.indexrelid = c.oid WHERE c.relname = %s",
            (INDEX_NAME,),
        ).fetchone()
    if row is None or not row[1]:
        return None
    return set(row[0] or [])


def load_nodes(
    url: str,
    data: Clustered,
    start: int,
    count: int,
    *,
    pair: tuple[str, str] = PAIR,
    stream: int = STREAM_NODES,
    keep_index: bool = False,
) -> float:
    """COPY `count` nodes (binary) from position `start` of a stream; returns seconds.

    Without `keep_index` the HNSW index is dropped first (a bulk load plus one build is far
    faster than inserting into the graph); with it, the rows join the existing graph."""
    import psycopg
    from pgvector.psycopg import register_vector

    began = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        if not keep_index:
            conn.execute(f"DROP INDEX IF EXISTS {INDEX_NAME}")  # rebuilt after loading
        done = 0
        while done < count:
            n = min(COPY_BATCH, count - done)
            vectors = data.sample(n, stream, start + done)
            with (
                conn.cursor() as cur,
                cur.copy(
                    "COPY lzg_knoten (user_id, character_id, inhalt, embedding, gewicht_roh,"
                    " gewicht_absolut, gewicht_decay) FROM STDIN (FORMAT BINARY)"
                ) as copy,
            ):
                copy.set_types(["text", "text", "text", "vector", "float8", "float8", "float8"])
                for i in range(n):
                    copy.write_row(
                        (
                            *pair,
                            f"synthetischer Knoten {start + done + i}",
                            vectors[i],
                            1.0,
                            3.0,
                            3.0,
                        )
                    )
            done += n
            log(f"loaded {start + done:,} nodes ({time.perf_counter() - began:.0f} s)")
        conn.execute("VACUUM ANALYZE lzg_knoten")
    return time.perf_counter() - began


def build_index(url: str, spec: IndexSpec, maintenance_work_mem: str, workers: int) -> float:
    """(Re)build the HNSW index of `spec`; returns seconds. Prints progress."""
    import psycopg

    stop = threading.Event()

    def progress() -> None:
        with psycopg.connect(url, autocommit=True) as watch:
            while not stop.wait(60):
                row = watch.execute(
                    "SELECT phase, tuples_done, tuples_total, blocks_done, blocks_total"
                    " FROM pg_stat_progress_create_index"
                ).fetchone()
                if row:
                    log(
                        f"index build {spec.label()}: {row[0]} tuples {row[1]:,}"
                        f" blocks {row[3]:,}/{row[4]:,}"
                    )

    watcher = threading.Thread(target=progress, daemon=True)
    began = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX IF EXISTS {INDEX_NAME}")
        conn.execute(f"SET maintenance_work_mem = '{maintenance_work_mem}'")
        conn.execute(f"SET max_parallel_maintenance_workers = {int(workers)}")
        watcher.start()
        try:
            conn.execute(spec.ddl())  # type: ignore[arg-type]
        finally:
            stop.set()
        conn.execute("VACUUM ANALYZE lzg_knoten")
    return time.perf_counter() - began


def index_size_mb(url: str) -> float | None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT pg_relation_size(to_regclass(%s))", (INDEX_NAME,)).fetchone()
    return None if row is None or row[0] is None else round(row[0] / 2**20, 1)


def prewarm_index(url: str) -> int:
    """Load the whole HNSW index into shared_buffers (pg_prewarm); returns its blocks.

    Measures the steady state of a server whose shared_buffers hold the index, instead of
    the first queries after a restart that read every page through the kernel."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_prewarm")
        row = conn.execute("SELECT pg_prewarm(%s)", (INDEX_NAME,)).fetchone()
    return int(row[0]) if row else 0


async def exact_truth(
    url: str, queries: np.ndarray, nodes: int, pair: tuple[str, str] = PAIR
) -> tuple[list[list[int]], list[float]]:
    """Ground truth and latency of the exact baseline (index scans off)."""
    from novaberg.pair import Pair
    from novaberg.store import long_term_search
    from novaberg.store.postgres import create_pool

    pool = await create_pool(url, max_size=1)
    ids: list[list[int]] = []
    timings: list[float] = []
    try:
        async with pool.connection() as conn:
            log(f"exact search: {len(queries)} queries over {nodes:,} nodes")
            for q in queries:
                t = time.perf_counter()
                rows = await long_term_search.nearest(conn, Pair(*pair), q, K, exact=True)
                timings.append((time.perf_counter() - t) * 1000)
                ids.append([r.id for r in rows])
    finally:
        await pool.close()
    return ids, timings


def _plan_label(plan: str) -> str:
    """Which access path an EXPLAIN chose, in a few words."""
    for needle, label in (
        (INDEX_NAME, "hnsw"),
        ("lzg_knoten_pair", "pair index + sort"),
        ("Seq Scan", "seq scan + sort"),
    ):
        if needle in plan:
            return label
    return _short_plan(plan)


def _short_plan(plan: str) -> str:
    """An EXPLAIN text without the 384 numbers of the query vector."""
    return re.sub(r"'\[[^\]]*\]'::vector", "'[…]'::vector", plan)


async def measure_long_term(
    url: str,
    queries: np.ndarray,
    truth: list[list[int]],
    exact_ms: list[float],
    ef_values: list[int],
    extra: dict[str, Any],
) -> list[dict[str, Any]]:
    """One record per ef_search; a failed measurement keeps its figures None."""
    from novaberg.pair import Pair
    from novaberg.store import long_term_nodes, long_term_search
    from novaberg.store.postgres import create_pool

    pair = Pair(*PAIR)
    pool = await create_pool(url, max_size=1)
    results: list[dict[str, Any]] = []
    try:
        async with pool.connection() as conn:
            async with conn.transaction():
                await long_term_search.set_search_params(conn)
                cur = await conn.execute(
                    "EXPLAIN SELECT id FROM lzg_knoten k WHERE k.user_id = %s AND k.character_id = %s"
                    " AND k.aktiv ORDER BY k.embedding <=> %s LIMIT 10",
                    (*PAIR, long_term_nodes.as_vector(queries[0])),
                )
                plan = " | ".join(str(dict(r)["QUERY PLAN"]) for r in await cur.fetchall())
            uses_hnsw = INDEX_NAME in plan
            for ef in ef_values:
                record: dict[str, Any] = {
                    "store": "lzg",
                    "queries": len(queries),
                    "ef_search": ef,
                    "production_ef": ef == long_term_search.EF_SEARCH,
                    "iterative_scan": long_term_search.ITERATIVE_SCAN,
                    "max_scan_tuples": long_term_search.MAX_SCAN_TUPLES,
                    "hnsw_p50_ms": None,
                    "hnsw_p99_ms": None,
                    "exact_p50_ms": round(percentile(exact_ms, 50), 3),
                    "exact_p99_ms": round(percentile(exact_ms, 99), 3),
                    "speedup_p50": None,
                    "recall_at_10": None,
                    "uses_hnsw": uses_hnsw,
                    "error": None,
                    **extra,
                }
                try:
                    if not uses_hnsw:
                        raise RuntimeError(
                            f"the production query does not use {INDEX_NAME}: {_short_plan(plan)}"
                        )
                    for q in queries[: min(20, len(queries))]:  # warm-up
                        await long_term_search.nearest(conn, pair, q, K, ef_search=ef)
                    ann_ms: list[float] = []
                    recalls: list[float] = []
                    for q, want in zip(queries, truth, strict=True):
                        t = time.perf_counter()
                        rows = await long_term_search.nearest(conn, pair, q, K, ef_search=ef)
                        ann_ms.append((time.perf_counter() - t) * 1000)
                        recalls.append(len({r.id for r in rows} & set(want)) / K)
                    record["hnsw_p50_ms"] = round(percentile(ann_ms, 50), 3)
                    record["hnsw_p99_ms"] = round(percentile(ann_ms, 99), 3)
                    record["speedup_p50"] = round(
                        percentile(exact_ms, 50) / percentile(ann_ms, 50), 1
                    )
                    record["recall_at_10"] = round(statistics.fmean(recalls), 4)
                except Exception as exc:  # reported as a failed measurement, never as numbers
                    record["error"] = f"{type(exc).__name__}: {exc}"
                    log(f"FAILED measurement ef {ef}: {record['error']}")
                record["goal_met"] = goal_met(record)
                record["load_avg_1m"] = round(os.getloadavg()[0], 2)
                emit(record)
                results.append(record)
    finally:
        await pool.close()
    return results


async def measure_rare_pair(
    url: str, queries: np.ndarray, rare_nodes: int, table_nodes: int
) -> dict[str, Any]:
    """The production query for the small pair beside the big one: which plan serves it,
    its latency and recall (production ef_search only)."""
    from novaberg.pair import Pair
    from novaberg.store import long_term_nodes, long_term_search
    from novaberg.store.postgres import create_pool

    truth, exact_ms = await exact_truth(url, queries, rare_nodes, RARE_PAIR)
    record: dict[str, Any] = {
        "store": "lzg_rare_pair",
        "pair_nodes": rare_nodes,
        "table_nodes": table_nodes,
        "queries": len(queries),
        "ef_search": long_term_search.EF_SEARCH,
        "iterative_scan": long_term_search.ITERATIVE_SCAN,
        "max_scan_tuples": long_term_search.MAX_SCAN_TUPLES,
        "plan": None,
        "p50_ms": None,
        "p99_ms": None,
        "exact_p50_ms": round(percentile(exact_ms, 50), 3),
        "recall_at_10": None,
        "error": None,
    }
    pool = await create_pool(url, max_size=1)
    try:
        async with pool.connection() as conn:
            # the plan of the statement production sends for this pair (exact when small)
            small = (
                await long_term_search.pair_size(conn, Pair(*RARE_PAIR))
                <= long_term_search.EXACT_PAIR_LIMIT
            )
            sql = long_term_search.nearest_sql(active_only=True, index_order=not small)
            params = {
                "v": long_term_nodes.as_vector(queries[0]),
                "u": RARE_PAIR[0],
                "c": RARE_PAIR[1],
                "k": K,
            }
            async with conn.transaction():
                await long_term_search.set_search_params(conn)
                cur = await conn.execute(f"EXPLAIN {sql}", params)  # type: ignore[arg-type]
                plan = " | ".join(str(dict(r)["QUERY PLAN"]) for r in await cur.fetchall())
            record["plan"] = _plan_label(plan)
            pair = Pair(*RARE_PAIR)
            for q in queries[: min(20, len(queries))]:
                await long_term_search.nearest(conn, pair, q, K)
            timings: list[float] = []
            recalls: list[float] = []
            for q, want in zip(queries, truth, strict=True):
                t = time.perf_counter()
                rows = await long_term_search.nearest(conn, pair, q, K)
                timings.append((time.perf_counter() - t) * 1000)
                recalls.append(len({r.id for r in rows} & set(want)) / K)
            record["p50_ms"] = round(percentile(timings, 50), 3)
            record["p99_ms"] = round(percentile(timings, 99), 3)
            record["recall_at_10"] = round(statistics.fmean(recalls), 4)
    except Exception as exc:  # reported as a failed measurement, never as numbers
        record["error"] = f"{type(exc).__name__}: {exc}"
        log(f"FAILED rare-pair measurement: {record['error']}")
    finally:
        await pool.close()
    record["load_avg_1m"] = round(os.getloadavg()[0], 2)
    emit(record)
    return record


def goal_met(record: dict[str, Any]) -> bool | None:
    """True/False on the goal's own terms (production data, index and ef at ≥ 1 M nodes);
    None where the row does not answer the goal or the measurement failed."""
    answers_goal = (
        record.get("nodes", 0) >= GOAL_NODES
        and record.get("production_ef")
        and record.get("production_index")
        and record.get("centroids") == CENTROIDS
    )
    if not answers_goal:
        return None
    p99, recall = record.get("hnsw_p99_ms"), record.get("recall_at_10")
    if p99 is None or recall is None:
        return False
    return bool(p99 <= GOAL_P99_MS and recall >= GOAL_RECALL)


# --- short-term -------------------------------------------------------------------


async def measure_short_term(
    redis_url: str, entries: int, queries: np.ndarray, data: Clustered
) -> list[dict[str, Any]]:
    from novaberg.pair import Pair
    from novaberg.store.redis_client import create_redis
    from novaberg.store.short_term import ShortTermStore

    redis = create_redis(redis_url)
    pair = Pair(*PAIR)
    results: list[dict[str, Any]] = []
    try:
        await redis.flushdb()
        writer = ShortTermStore(redis)
        vectors = data.sample(entries, STREAM_KZG)
        began = time.perf_counter()
        for i, vec in enumerate(vectors):
            fields = {
                "user_id": PAIR[0],
                "character_id": PAIR[1],
                "beobachter": "user",
                "inhalt": f"Eintrag {i}",
                "salienz": 0.9,
                "salienz_eingang": 0.7,
                "themen": f"thema{i % 50}",
                "haeufigkeit": 1,
            }
            await writer.create(
                pair, fields, vec, ttl_seconds=86_400, epoch_ms=1_700_000_000_000 + i
            )
        load_s = time.perf_counter() - began
        normed = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        for mode, store in (
            ("cold", ShortTermStore(redis, cache_vectors=False)),
            ("warm", ShortTermStore(redis)),
        ):
            await store.nearest(pair, queries[0], K)  # warm-up (fills the cache in "warm")
            timings: list[float] = []
            recalls: list[float] = []
            for q in queries:
                t = time.perf_counter()
                hits = await store.nearest(pair, q, K)
                timings.append((time.perf_counter() - t) * 1000)
                truth = {int(i) for i in np.argsort(-(normed @ q))[:K]}
                got = {int(h.key.rsplit(":", 1)[1]) - 1_700_000_000_000 for h in hits}
                recalls.append(len(got & truth) / K)
            record = {
                "store": "kzg",
                "entries": entries,
                "queries": len(queries),
                "cache": mode,
                "p50_ms": round(percentile(timings, 50), 3),
                "p99_ms": round(percentile(timings, 99), 3),
                "recall_at_10": round(statistics.fmean(recalls), 4),
                "load_s": round(load_s, 1),
                "load_avg_1m": round(os.getloadavg()[0], 2),
            }
            emit(record)
            results.append(record)
    finally:
        await redis.aclose()
    return results


# --- main ---------------------------------------------------------------------------


def _num(value: Any, width: int, digits: int) -> str:
    return f"{'–':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def table(
    lzg_rows: list[dict[str, Any]],
    kzg_rows: list[dict[str, Any]],
    rare: dict[str, Any] | None = None,
) -> str:
    lines = [
        "",
        f"{'long-term nodes':>16} {'index':>7} {'ef':>4} {'hnsw p50':>9} {'hnsw p99':>9}"
        f" {'exact p50':>10} {'exact p99':>10} {'recall@10':>9} {'build s':>8} {'goal':>6}",
    ]
    for r in lzg_rows:
        index = r.get("index", "")
        if not r.get("production_index", False):
            index += "*"
        goal = {True: "ok", False: "MISS", None: ""}[r.get("goal_met")]
        if r.get("error"):
            goal = "failed"
        lines.append(
            f"{r['nodes']:>16,} {index:>7} {r.get('ef_search') or '–':>4}"
            f" {_num(r.get('hnsw_p50_ms'), 9, 2)} {_num(r.get('hnsw_p99_ms'), 9, 2)}"
            f" {_num(r.get('exact_p50_ms'), 10, 1)} {_num(r.get('exact_p99_ms'), 10, 1)}"
            f" {_num(r.get('recall_at_10'), 9, 3)} {_num(r.get('index_build_s'), 8, 0)} {goal:>6}"
        )
    lines.append(
        "(index = m:ef_construction, * = not the production index; build s – = index reused;"
        " exact = the same query with index scans off, same run, same queries)"
    )
    servers = {(r.get("shared_buffers"), r.get("prewarmed")) for r in lzg_rows if "index" in r}
    for buffers, prewarmed in sorted(servers, key=str):
        lines.append(
            f"(server: shared_buffers {buffers}, index"
            f" {'prewarmed into shared_buffers' if prewarmed else 'not prewarmed'})"
        )
    if rare is not None:
        outcome = "failed: " + rare["error"] if rare.get("error") else rare.get("plan")
        lines.append(
            f"small pair: {rare.get('pair_nodes', 0):,} nodes beside"
            f" {rare.get('table_nodes', 0):,}, ef {rare.get('ef_search', '–')}:"
            f" p50 {_num(rare.get('p50_ms'), 0, 2)} ms, p99 {_num(rare.get('p99_ms'), 0, 2)} ms,"
            f" exact p50 {_num(rare.get('exact_p50_ms'), 0, 1)} ms,"
            f" recall@10 {_num(rare.get('recall_at_10'), 0, 3)} ({outcome})"
        )
    lines.append("")
    lines.append(
        f"{'short-term entries':>18} {'cache':>6} {'p50 ms':>8} {'p99 ms':>8} {'recall@10':>9}"
    )
    for r in kzg_rows:
        lines.append(
            f"{r['entries']:>18,} {r['cache']:>6} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f}"
            f" {r['recall_at_10']:>9.3f}"
        )
    lines.append(
        f"(goal at {GOAL_NODES:,} nodes with the production index and ef: p99 ≤"
        f" {GOAL_P99_MS:.0f} ms, recall@10 ≥ {GOAL_RECALL})"
    )
    return "\n".join(lines)


async def configure_server(postgres: Any, url: str, shared_buffers: str) -> tuple[str, str]:
    """Apply `--shared-buffers` (or the server default when empty, so a reused directory
    keeps no earlier setting by accident). Returns (url, the effective shared_buffers)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        if shared_buffers:
            conn.execute(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
        else:
            conn.execute("ALTER SYSTEM RESET shared_buffers")
        conn.execute("SELECT pg_reload_conf()")
        pending = False
        for _ in range(50):  # the reload is asynchronous
            row = conn.execute(
                "SELECT pending_restart FROM pg_settings WHERE name = 'shared_buffers'"
            ).fetchone()
            pending = bool(row and row[0])
            if pending:
                break
            time.sleep(0.1)
    if pending:
        await asyncio.to_thread(postgres.stop)
        url = await asyncio.to_thread(postgres.start)
    with psycopg.connect(url, autocommit=True) as conn:
        effective = conn.execute("SHOW shared_buffers").fetchone()[0]  # type: ignore[index]
    return url, str(effective)


DATA_STAMP = "bench-memory-data.json"


def check_data_stamp(home: Path, centroids: int, reuse: bool) -> None:
    """A kept directory records how its data was made; reusing it with other data
    parameters would compare queries against the wrong nodes, so that stops the run."""
    stamp = home / DATA_STAMP
    wanted = {"dim": DIM, "centroids": centroids, "noise": NOISE, "seed": SEED}
    if reuse:
        if not (home / "postgres").is_dir() or not stamp.is_file():
            raise SystemExit(f"--reuse: {home} is not a directory kept by this benchmark")
        kept = json.loads(stamp.read_text())
        if kept != wanted:
            raise SystemExit(f"--reuse: {home} holds data made with {kept}, not {wanted}")
        return
    stamp.write_text(json.dumps(wanted))


async def rare_pair(
    url: str, queries: np.ndarray, data: Clustered, nodes: int, production: IndexSpec
) -> dict[str, Any]:
    """Add the small pair to the loaded table (into the existing graph) and measure it."""
    table_nodes = pair_count(url)
    if existing_index(url) != production.reloptions():
        record = {"store": "lzg_rare_pair", "pair_nodes": nodes, "error": "no production index"}
        emit(record)
        return record
    have = pair_count(url, RARE_PAIR)
    if have < nodes:
        log(f"inserting {nodes - have:,} nodes of the small pair into the built index")
        await asyncio.to_thread(
            load_nodes,
            url,
            data,
            have,
            nodes - have,
            pair=RARE_PAIR,
            stream=STREAM_RARE,
            keep_index=True,
        )
    return await measure_rare_pair(url, queries, pair_count(url, RARE_PAIR), table_nodes)


async def run(args: argparse.Namespace, home: Path, reuse: bool) -> int:
    from novaberg.runtime.embedded_postgres import EmbeddedPostgres, shared_buffers_for
    from novaberg.runtime.embedded_redis import EmbeddedRedis
    from novaberg.store import long_term_search
    from novaberg.store.migrate import migrate

    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    ef_values = sorted(
        {int(e) for e in args.ef.split(",") if e.strip()} | {long_term_search.EF_SEARCH}
    )
    production = production_index()
    specs = index_specs(args.index_params, production)
    data = Clustered(DIM, args.centroids)
    queries = data.sample(args.queries, STREAM_QUERIES)
    log(
        f"production index: m = {production.m}, ef_construction = {production.ef_construction}"
        f" ({production.source}); production ef_search {long_term_search.EF_SEARCH},"
        f" iterative scan {long_term_search.ITERATIVE_SCAN}, max_scan_tuples {long_term_search.MAX_SCAN_TUPLES}"
    )

    check_data_stamp(home, args.centroids, reuse)
    postgres = EmbeddedPostgres(home / "postgres")
    url = await asyncio.to_thread(postgres.start)
    redis_server = EmbeddedRedis(home / "redis")
    lzg_rows: list[dict[str, Any]] = []
    kzg_rows: list[dict[str, Any]] = []
    rare_row: dict[str, Any] | None = None
    try:
        migrate(url, DIM)
        url, buffers = await configure_server(
            postgres, url, shared_buffers_for(args.shared_buffers or "auto") or ""
        )
        log(f"PostgreSQL under {home} (shared_buffers {buffers})")
        if args.kzg_entries:
            redis_url = await asyncio.to_thread(redis_server.start)
            kzg_rows = await measure_short_term(redis_url, args.kzg_entries, queries, data)
        for size in sizes:
            loaded = pair_count(url)
            if loaded > size:
                log(f"size {size:,} skipped: the directory already holds {loaded:,} nodes")
                lzg_rows.append(
                    {"store": "lzg", "nodes": size, "error": f"directory holds {loaded:,} nodes"}
                )
                emit(lzg_rows[-1])
                continue
            load_s: float | None = None
            if loaded < size:
                load_s = await asyncio.to_thread(load_nodes, url, data, loaded, size - loaded)
            else:
                log(f"reusing {loaded:,} loaded nodes")
            truth, exact_ms = await exact_truth(url, queries, size)
            for spec in specs:
                build_s: float | None = None
                if existing_index(url) == spec.reloptions():
                    log(f"reusing the built index {spec.label()}")
                else:
                    log(f"building the HNSW index {spec.label()} over {size:,} nodes")
                    build_s = await asyncio.to_thread(
                        build_index, url, spec, args.maintenance_work_mem, args.build_workers
                    )
                    log(f"index {spec.label()} built in {build_s:.0f} s")
                if args.prewarm:
                    blocks = await asyncio.to_thread(prewarm_index, url)
                    log(f"prewarmed {blocks:,} index blocks into shared_buffers ({buffers})")
                lzg_rows += await measure_long_term(
                    url,
                    queries,
                    truth,
                    exact_ms,
                    ef_values,
                    {
                        "nodes": size,
                        "centroids": args.centroids,
                        "index": spec.label(),
                        "production_index": spec.production,
                        "index_source": spec.source,
                        "index_build_s": None if build_s is None else round(build_s, 1),
                        "index_mb": index_size_mb(url),
                        "load_s": None if load_s is None else round(load_s, 1),
                        "shared_buffers": buffers,
                        "prewarmed": bool(args.prewarm),
                    },
                )
        if args.rare_pair_nodes and sizes:
            rare_row = await rare_pair(url, queries, data, args.rare_pair_nodes, production)
    finally:
        await asyncio.to_thread(redis_server.stop)
        await asyncio.to_thread(postgres.stop)
    print(table(lzg_rows, kzg_rows, rare_row), flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="long-term node counts")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--ef", default="40,100,200,400", help="hnsw.ef_search values to compare")
    parser.add_argument("--kzg-entries", type=int, default=5000)
    parser.add_argument(
        "--rare-pair-nodes",
        type=int,
        default=2000,
        help="nodes of a second, small pair measured beside the big one (0 = skip)",
    )
    parser.add_argument(
        "--index-params",
        default="",
        help="m:ef_construction list to compare, e.g. 16:64,24:128 (default: the migration's)",
    )
    parser.add_argument(
        "--centroids",
        type=int,
        default=CENTROIDS,
        help="exploration only: other cluster counts never count toward the goal",
    )
    parser.add_argument(
        "--maintenance-work-mem",
        default="4GB",
        help="for the index build; the 1 M graph must fit in memory to be built fast",
    )
    parser.add_argument(
        "--build-workers",
        type=int,
        default=1,
        help="parallel maintenance workers (2 cores: leader + 1)",
    )
    parser.add_argument(
        "--shared-buffers",
        default=None,
        help="e.g. 2GB, or 'default' for PostgreSQL's 128MB; default: what production's "
        "NOVABERG_POSTGRES_SHARED_BUFFERS=auto gives on this machine",
    )
    parser.add_argument(
        "--prewarm",
        action="store_true",
        help="load the index into shared_buffers before measuring (steady state; needs"
        " --shared-buffers larger than the index to mean anything)",
    )
    parser.add_argument("--home", default="", help="work directory (default: new dir in /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument(
        "--reuse",
        default="",
        metavar="DIR",
        help="a directory kept by --keep: measure without reloading or rebuilding (kept)",
    )
    args = parser.parse_args()
    reuse = bool(args.reuse)
    if reuse:
        home = Path(args.reuse)
    elif args.home:
        home = Path(args.home)
    else:
        home = Path(tempfile.mkdtemp(prefix="novaberg-bench-memory-", dir="/tmp"))
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o755)  # the embedded server runs as its own user when started by root
    log(f"work directory {home}")
    try:
        return asyncio.run(run(args, home, reuse))
    finally:
        if not (args.keep or reuse):
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    sys.exit(main())
