"""Migration 004: per-pair active node counts, and exact ranking for a small pair."""

from __future__ import annotations

import numpy as np
from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair
from novaberg.store import long_term_search

BIG = Pair("gross", "nova")
SMALL = Pair("klein", "nova")


async def _insert(db: AsyncConnectionPool, pair: Pair, vectors: np.ndarray, tag: str) -> None:
    async with db.connection() as conn, conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO lzg_knoten (user_id, character_id, inhalt, embedding, gewicht_roh,"
            " gewicht_absolut, gewicht_decay) VALUES (%s, %s, %s, %s, 1, 3, 3)",
            [(pair.user_id, pair.character_id, f"{tag}{i}", v) for i, v in enumerate(vectors)],
        )


async def _size(db: AsyncConnectionPool, pair: Pair) -> int:
    async with db.connection() as conn:
        return await long_term_search.pair_size(conn, pair)


async def test_pair_sizes_follow_inserts_deactivation_and_deletes(
    db: AsyncConnectionPool,
) -> None:
    rng = np.random.default_rng(5)
    await _insert(db, BIG, rng.standard_normal((30, 384)).astype(np.float32), "g")
    await _insert(db, SMALL, rng.standard_normal((4, 384)).astype(np.float32), "k")
    assert (await _size(db, BIG), await _size(db, SMALL)) == (30, 4)
    async with db.connection() as conn:
        await conn.execute(
            "UPDATE lzg_knoten SET aktiv = false WHERE user_id = %s AND inhalt IN ('g1', 'g2')",
            (BIG.user_id,),
        )
        await conn.execute("UPDATE lzg_knoten SET abrufe = abrufe + 1")  # no aktiv change
        await conn.execute("DELETE FROM lzg_knoten WHERE inhalt = 'k0'")
        await conn.execute("UPDATE lzg_knoten SET aktiv = true WHERE inhalt = 'g1'")
    assert (await _size(db, BIG), await _size(db, SMALL)) == (29, 3)
    assert await _size(db, Pair("niemand", "nova")) == 0


async def _uses_hnsw(db: AsyncConnectionPool, sql: str, vector: np.ndarray) -> bool:
    async with db.connection() as conn, conn.transaction():
        # neither a table scan nor a sort may win on the cheap: HNSW wherever it can serve
        await conn.execute("SET LOCAL enable_seqscan = off")
        await conn.execute("SET LOCAL enable_sort = off")
        params = {"v": vector, "u": SMALL.user_id, "c": SMALL.character_id, "k": 10}
        cur = await conn.execute(f"EXPLAIN {sql}", params)  # type: ignore[arg-type]
        plan = " ".join(r["QUERY PLAN"] for r in await cur.fetchall())
    return "lzg_knoten_embedding" in plan


async def test_small_pair_is_ranked_exactly_and_both_paths_agree(
    db: AsyncConnectionPool,
) -> None:
    rng = np.random.default_rng(9)
    await _insert(db, BIG, rng.standard_normal((300, 384)).astype(np.float32), "g")
    small = rng.standard_normal((40, 384)).astype(np.float32)
    await _insert(db, SMALL, small, "k")
    query = small[11] + 0.05 * rng.standard_normal(384).astype(np.float32)
    async with db.connection() as conn:
        truth = await long_term_search.nearest(conn, SMALL, query, 10, exact=True)
        ranked = await long_term_search.nearest(conn, SMALL, query, 10)  # 40 ≤ EXACT_PAIR_LIMIT
        via_index = await long_term_search.nearest(conn, SMALL, query, 10, exact_below=0)
    assert truth[0].text == "k11"
    assert [r.id for r in ranked] == [r.id for r in truth]
    assert via_index[0].text == "k11"
    assert {r.user_id for r in via_index} == {SMALL.user_id}
    assert not await _uses_hnsw(
        db, long_term_search.nearest_sql(active_only=True, index_order=False), query
    )
    assert await _uses_hnsw(
        db, long_term_search.nearest_sql(active_only=True, index_order=True), query
    )


async def test_nearest_rereads_a_pair_size_only_after_it_went_stale(
    db: AsyncConnectionPool,
) -> None:
    now = [1000.0]
    rng = np.random.default_rng(6)
    await _insert(db, SMALL, rng.standard_normal((5, 384)).astype(np.float32), "k")
    async with db.connection() as conn:
        assert await long_term_search.recent_pair_size(conn, SMALL, clock=lambda: now[0]) == 5
    await _insert(db, SMALL, rng.standard_normal((3, 384)).astype(np.float32), "n")
    async with db.connection() as conn:
        now[0] += long_term_search.PAIR_SIZE_SECONDS - 1
        assert await long_term_search.recent_pair_size(conn, SMALL, clock=lambda: now[0]) == 5
        now[0] += 2
        assert await long_term_search.recent_pair_size(conn, SMALL, clock=lambda: now[0]) == 8
    long_term_search.forget_pair_sizes()
    await _insert(db, SMALL, rng.standard_normal((1, 384)).astype(np.float32), "m")
    async with db.connection() as conn:
        assert await long_term_search.recent_pair_size(conn, SMALL, clock=lambda: now[0]) == 9
