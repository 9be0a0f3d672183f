"""Memory search speed and quality: long-term HNSW vs exact search, short-term brute force.

Long-term (LZG, PostgreSQL + pgvector): synthetic nodes of one pair (clustered 384-d
vectors: 1000 gaussian centroids + noise, so approximate search has something to get
wrong) are loaded with binary COPY, then the production HNSW index (m 16,
ef_construction 64) is built. Queries run the production query (`store.lzg.nearest`: pair
filter + aktiv, `ORDER BY embedding <=> q LIMIT 10`, hnsw.ef_search, iterative scan); the
exact baseline is the same query with index scans off, measured in the same run on the same
queries. Reported: p50/p99 latency of both, their ratio, recall@10 against exact.
Goal (issue #5): at 1 M nodes p99 ≤ 20 ms and recall@10 ≥ 0.95.

Short-term (KZG, Redis): one pair with 5 000 entries, `KzgStore.nearest` (exact cosine in
numpy over the pair) with a cold vector cache and a warm one.

    .venv/bin/python bench/memory.py [--sizes 100000,1000000] [--queries 100]
        [--ef 40,100,200] [--kzg-entries 5000] [--shared-buffers 128MB] [--keep]

Runs its own embedded PostgreSQL and Valkey under a fresh directory in /tmp (never the
user's data). On 2 cores the 1 M index build takes the longest part (tens of minutes);
progress is printed to stderr. Prints one JSON line per measurement, then a table.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

GOAL_P99_MS = 20.0
GOAL_RECALL = 0.95
"""Issue #5: long-term search at 1 M nodes, p99 ≤ 20 ms and recall@10 ≥ 0.95."""

DIM = 384
CENTROIDS = 1000
NOISE = 1.0
"""Per-vector noise norm relative to its unit centroid: cos(vector, centroid) ≈ 0.7."""

K = 10
COPY_BATCH = 50_000


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def emit(record: dict[str, Any]) -> None:
    print(json.dumps({"bench": "memory", **record}, ensure_ascii=False), flush=True)


class Clustered:
    """Deterministic clustered unit vectors (the same seed gives the same data)."""

    def __init__(self, dim: int, centroids: int, seed: int = 7) -> None:
        self.rng = np.random.default_rng(seed)
        c = self.rng.standard_normal((centroids, dim)).astype(np.float32)
        self.centroids = c / np.linalg.norm(c, axis=1, keepdims=True)
        self.dim = dim

    def sample(self, n: int) -> np.ndarray:
        which = self.rng.integers(0, len(self.centroids), n)
        noise = self.rng.standard_normal((n, self.dim)).astype(np.float32)
        noise *= NOISE / np.sqrt(self.dim)
        vectors = self.centroids[which] + noise
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


# --- long-term --------------------------------------------------------------------


def load_nodes(url: str, data: Clustered, start: int, count: int, user: str, char: str) -> float:
    """COPY `count` nodes (binary); returns seconds."""
    import psycopg
    from pgvector.psycopg import register_vector

    began = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("DROP INDEX IF EXISTS lzg_knoten_embedding")  # rebuilt after loading
        done = 0
        while done < count:
            n = min(COPY_BATCH, count - done)
            vectors = data.sample(n)
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
                            user,
                            char,
                            f"synthetischer Knoten {start + done + i}",
                            vectors[i],
                            1.0,
                            3.0,
                            3.0,
                        )
                    )
            done += n
            log(f"loaded {start + done:,} nodes ({time.perf_counter() - began:.0f} s)")
    return time.perf_counter() - began


def build_index(url: str, maintenance_work_mem: str, workers: int) -> float:
    """(Re)build the production HNSW index; returns seconds. Prints progress."""
    import psycopg

    stop = threading.Event()

    def progress() -> None:
        with psycopg.connect(url, autocommit=True) as watch:
            while not stop.wait(30):
                row = watch.execute(
                    "SELECT phase, tuples_done, tuples_total, blocks_done, blocks_total"
                    " FROM pg_stat_progress_create_index"
                ).fetchone()
                if row:
                    log(
                        f"index build: {row[0]} tuples {row[1]:,}/{row[2]:,} blocks {row[3]:,}/{row[4]:,}"
                    )

    watcher = threading.Thread(target=progress, daemon=True)
    began = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX IF EXISTS lzg_knoten_embedding")
        conn.execute(f"SET maintenance_work_mem = '{maintenance_work_mem}'")
        conn.execute(f"SET max_parallel_maintenance_workers = {int(workers)}")
        watcher.start()
        try:
            conn.execute(
                "CREATE INDEX lzg_knoten_embedding ON lzg_knoten"
                " USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)"
            )
        finally:
            stop.set()
        conn.execute("VACUUM ANALYZE lzg_knoten")
    return time.perf_counter() - began


async def measure_long_term(
    url: str, queries: np.ndarray, ef_values: list[int], nodes: int, extra: dict[str, Any]
) -> list[dict[str, Any]]:
    from novaberg.store import lzg
    from novaberg.store.keys import Pair
    from novaberg.store.postgres import create_pool

    pair = Pair("bench", "nova")
    pool = await create_pool(url, max_size=2)
    results: list[dict[str, Any]] = []
    try:
        async with pool.connection() as conn:
            async with conn.transaction():
                await lzg.set_search_params(conn)
                cur = await conn.execute(
                    "EXPLAIN SELECT id FROM lzg_knoten k WHERE k.user_id = %s AND k.character_id = %s"
                    " AND k.aktiv ORDER BY k.embedding <=> %s LIMIT 10",
                    ("bench", "nova", lzg.as_vector(queries[0])),
                )
                plan = " | ".join(r["QUERY PLAN"] for r in await cur.fetchall())
            uses_hnsw = "lzg_knoten_embedding" in plan
            if not uses_hnsw:
                log(f"WARNING: the production query does not use the HNSW index: {plan}")
            exact_ids: list[list[int]] = []
            exact_ms: list[float] = []
            log(f"exact search: {len(queries)} queries over {nodes:,} nodes")
            for q in queries:
                t = time.perf_counter()
                rows = await lzg.nearest(conn, pair, q, K, exact=True)
                exact_ms.append((time.perf_counter() - t) * 1000)
                exact_ids.append([r["id"] for r in rows])
            for ef in ef_values:
                for q in queries[: min(20, len(queries))]:  # warm-up
                    await lzg.nearest(conn, pair, q, K, ef_search=ef)
                ann_ms: list[float] = []
                recalls: list[float] = []
                for q, truth in zip(queries, exact_ids, strict=True):
                    t = time.perf_counter()
                    rows = await lzg.nearest(conn, pair, q, K, ef_search=ef)
                    ann_ms.append((time.perf_counter() - t) * 1000)
                    recalls.append(len({r["id"] for r in rows} & set(truth)) / K)
                p99 = percentile(ann_ms, 99)
                recall = statistics.fmean(recalls)
                record = {
                    "store": "lzg",
                    "nodes": nodes,
                    "queries": len(queries),
                    "ef_search": ef,
                    "production_ef": ef == lzg.EF_SEARCH,
                    "hnsw_p50_ms": round(percentile(ann_ms, 50), 3),
                    "hnsw_p99_ms": round(p99, 3),
                    "exact_p50_ms": round(percentile(exact_ms, 50), 3),
                    "exact_p99_ms": round(percentile(exact_ms, 99), 3),
                    "speedup_p50": round(percentile(exact_ms, 50) / percentile(ann_ms, 50), 1),
                    "recall_at_10": round(recall, 4),
                    "uses_hnsw": uses_hnsw,
                    "goal_met": p99 <= GOAL_P99_MS and recall >= GOAL_RECALL,
                    "load_avg_1m": round(os.getloadavg()[0], 2),
                    **extra,
                }
                emit(record)
                results.append(record)
    finally:
        await pool.close()
    return results


# --- short-term -------------------------------------------------------------------


async def measure_short_term(
    redis_url: str, entries: int, queries: np.ndarray, data: Clustered
) -> list[dict[str, Any]]:
    from novaberg.store.keys import Pair
    from novaberg.store.kzg import KzgStore
    from novaberg.store.redis_client import create_redis

    redis = create_redis(redis_url)
    pair = Pair("bench", "nova")
    results: list[dict[str, Any]] = []
    try:
        await redis.flushdb()
        writer = KzgStore(redis)
        vectors = data.sample(entries)
        began = time.perf_counter()
        for i, vec in enumerate(vectors):
            fields = {
                "user_id": "bench",
                "character_id": "nova",
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
            ("cold", KzgStore(redis, cache_vectors=False)),
            ("warm", KzgStore(redis)),
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


def table(lzg_rows: list[dict[str, Any]], kzg_rows: list[dict[str, Any]]) -> str:
    lines = [
        "",
        f"{'long-term nodes':>16} {'ef':>4} {'hnsw p50':>9} {'hnsw p99':>9} {'exact p50':>10}"
        f" {'exact p99':>10} {'recall@10':>9} {'build s':>8} {'goal':>5}",
    ]
    for r in lzg_rows:
        goal = ("ok" if r["goal_met"] else "MISS") if r["production_ef"] else ""
        lines.append(
            f"{r['nodes']:>16,} {r['ef_search']:>4} {r['hnsw_p50_ms']:>9.2f} {r['hnsw_p99_ms']:>9.2f}"
            f" {r['exact_p50_ms']:>10.1f} {r['exact_p99_ms']:>10.1f} {r['recall_at_10']:>9.3f}"
            f" {r['index_build_s']:>8.0f} {goal:>5}"
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
        f"(goal at 1,000,000 nodes with the production ef: p99 ≤ {GOAL_P99_MS:.0f} ms,"
        f" recall@10 ≥ {GOAL_RECALL})"
    )
    return "\n".join(lines)


async def run(args: argparse.Namespace, home: Path) -> int:
    from novaberg.runtime.embedded_postgres import EmbeddedPostgres
    from novaberg.runtime.embedded_redis import EmbeddedRedis
    from novaberg.store import lzg
    from novaberg.store.migrate import migrate

    sizes = sorted(int(s) for s in args.sizes.split(",") if s.strip())
    ef_values = sorted({int(e) for e in args.ef.split(",")} | {lzg.EF_SEARCH})
    data = Clustered(DIM, CENTROIDS)
    queries = data.sample(args.queries)

    postgres = EmbeddedPostgres(home / "postgres")
    url = await asyncio.to_thread(postgres.start)
    redis_server = EmbeddedRedis(home / "redis")
    lzg_rows: list[dict[str, Any]] = []
    kzg_rows: list[dict[str, Any]] = []
    try:
        migrate(url, DIM)
        if args.shared_buffers:
            import psycopg

            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"ALTER SYSTEM SET shared_buffers = '{args.shared_buffers}'")
            await asyncio.to_thread(postgres.stop)
            url = await asyncio.to_thread(postgres.start)
        log(f"PostgreSQL under {home} (shared_buffers {args.shared_buffers or 'default'})")
        if args.kzg_entries:
            redis_url = await asyncio.to_thread(redis_server.start)
            kzg_rows = await measure_short_term(redis_url, args.kzg_entries, queries, data)
        loaded = 0
        for size in sizes:
            load_s = await asyncio.to_thread(
                load_nodes, url, data, loaded, size - loaded, "bench", "nova"
            )
            loaded = size
            log(f"building the HNSW index over {size:,} nodes (2 cores: this takes a while)")
            build_s = await asyncio.to_thread(
                build_index, url, args.maintenance_work_mem, args.build_workers
            )
            log(f"index built in {build_s:.0f} s")
            lzg_rows += await measure_long_term(
                url,
                queries,
                ef_values,
                size,
                {"index_build_s": round(build_s, 1), "load_s": round(load_s, 1)},
            )
    finally:
        await asyncio.to_thread(redis_server.stop)
        await asyncio.to_thread(postgres.stop)
    print(table(lzg_rows, kzg_rows), flush=True)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000", help="long-term node counts")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--ef", default="40,100,200,400", help="hnsw.ef_search values to compare")
    parser.add_argument("--kzg-entries", type=int, default=5000)
    parser.add_argument(
        "--maintenance-work-mem",
        default="2GB",
        help="for the index build; the 1 M graph needs ~2 GB to be built in memory",
    )
    parser.add_argument(
        "--build-workers",
        type=int,
        default=1,
        help="parallel maintenance workers (2 cores: leader + 1)",
    )
    parser.add_argument(
        "--shared-buffers",
        default="",
        help="e.g. 2GB; default: the embedded server's own setting (128MB)",
    )
    parser.add_argument("--home", default="", help="work directory (default: new dir in /tmp)")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args()
    home = (
        Path(args.home)
        if args.home
        else Path(tempfile.mkdtemp(prefix="novaberg-bench-memory-", dir="/tmp"))
    )
    home.mkdir(parents=True, exist_ok=True)
    home.chmod(0o755)  # the embedded server runs as its own user when started by root
    try:
        return asyncio.run(run(args, home))
    finally:
        if not args.keep:
            shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
    sys.exit(main())
