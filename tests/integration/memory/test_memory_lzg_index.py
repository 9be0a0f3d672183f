"""Migration 003 (the long-term HNSW index) against the real PostgreSQL + pgvector."""

from __future__ import annotations

import re

import numpy as np
from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair
from novaberg.store import long_term_search
from novaberg.store.migrate import MIGRATIONS_DIR

MIGRATION = MIGRATIONS_DIR / "003_lzg_index.sql"
PAIR = Pair("meister", "nova")


def _params() -> set[str]:
    found = re.search(r"WITH \(m = (\d+), ef_construction = (\d+)\)", MIGRATION.read_text())
    assert found, "003 must build lzg_knoten_embedding WITH (m = .., ef_construction = ..)"
    return {f"m={found[1]}", f"ef_construction={found[2]}"}


async def _reloptions(db: AsyncConnectionPool) -> set[str]:
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT c.reloptions, i.indisvalid FROM pg_class c"
            " JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = 'lzg_knoten_embedding'"
        )
        row = await cur.fetchone()
    assert row is not None and row["indisvalid"]
    return set(row["reloptions"])


async def test_migrated_schema_has_the_denser_index(db: AsyncConnectionPool) -> None:
    assert await _reloptions(db) == _params()
    assert _params() != {"m=16", "ef_construction=64"}  # stronger than 001's graph


async def test_rerunning_003_on_a_filled_table_rebuilds_an_index_that_answers(
    db: AsyncConnectionPool,
) -> None:
    sql = MIGRATION.read_text().replace("{{EMBED_DIM}}", "384")
    async with db.connection() as conn:
        async with conn.transaction():  # as store.migrate applies a file
            await conn.execute(sql)  # type: ignore[arg-type]
        rng = np.random.default_rng(3)
        vectors = rng.standard_normal((500, 384)).astype(np.float32)
        async with conn.cursor() as cur:
            await cur.executemany(
                "INSERT INTO lzg_knoten (user_id, character_id, inhalt, embedding, gewicht_roh,"
                " gewicht_absolut, gewicht_decay) VALUES (%s, %s, %s, %s, 1, 3, 3)",
                [(PAIR.user_id, PAIR.character_id, f"k{i}", v) for i, v in enumerate(vectors)],
            )
        async with conn.transaction():
            await conn.execute(sql)  # type: ignore[arg-type]
        async with conn.transaction():
            await conn.execute("SET LOCAL enable_seqscan = off")
            await long_term_search.set_search_params(conn)
            query = "SELECT id FROM lzg_knoten ORDER BY embedding <=> %s LIMIT 10"
            cur = await conn.execute(f"EXPLAIN {query}", (vectors[7],))
            plan = " ".join(r["QUERY PLAN"] for r in await cur.fetchall())
            cur = await conn.execute(query, (vectors[7],))
            approx = [r["id"] for r in await cur.fetchall()]
        exact = await long_term_search.nearest(conn, PAIR, vectors[7], 10, exact=True)
    assert "lzg_knoten_embedding" in plan
    assert exact[0].text == "k7"
    assert approx == [r.id for r in exact]
    assert await _reloptions(db) == _params()
