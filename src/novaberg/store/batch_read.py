"""Several independent reads in one PostgreSQL round trip (psycopg pipeline mode).

A node that needs four small lookups should not pay four pool checkouts and four round
trips. The queries are sent together on one connection; if any of them fails the batch is
re-run query by query, so a failure stays attached to the query that caused it and the
others still answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from novaberg.store.pipelined import pipeline

Query = tuple[str, Sequence[Any]]
Rows = list[dict[str, Any]]


async def fetch_batch(
    pool: AsyncConnectionPool, queries: Sequence[Query]
) -> list[Rows | psycopg.Error]:
    """Rows of each query in order; a failed query gives its `psycopg.Error` instead."""
    if not queries:
        return []
    async with pool.connection() as conn:
        try:
            cursors = []
            async with pipeline(conn):
                for sql, params in queries:
                    cur = conn.cursor(row_factory=dict_row)
                    await cur.execute(sql, params)
                    cursors.append(cur)
            return [list(await cur.fetchall()) for cur in cursors]
        except psycopg.Error:
            pass
    return [await _one(pool, sql, params) for sql, params in queries]


async def _one(pool: AsyncConnectionPool, sql: str, params: Sequence[Any]) -> Rows | psycopg.Error:
    try:
        async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(sql, params)
            return list(await cur.fetchall())
    except psycopg.Error as exc:
        return exc
