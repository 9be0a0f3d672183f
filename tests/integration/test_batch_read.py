"""fetch_batch: several reads in one round trip, a failure stays with its own query."""

from __future__ import annotations

import psycopg
from psycopg_pool import AsyncConnectionPool

from novaberg.store.batch_read import fetch_batch


async def test_batch_returns_each_querys_rows_in_order(db: AsyncConnectionPool) -> None:
    results = await fetch_batch(
        db,
        [
            ("SELECT %s::int AS n", (1,)),
            ("SELECT generate_series(1, %s) AS n", (3,)),
            ("SELECT 1 AS n WHERE false", ()),
        ],
    )
    assert results == [[{"n": 1}], [{"n": 1}, {"n": 2}, {"n": 3}], []]


async def test_a_failing_query_does_not_take_the_others_down(db: AsyncConnectionPool) -> None:
    results = await fetch_batch(
        db,
        [
            ("SELECT 'a' AS x", ()),
            ("SELECT * FROM no_such_table_here", ()),
            ("SELECT 'c' AS x", ()),
        ],
    )
    assert results[0] == [{"x": "a"}]
    assert isinstance(results[1], psycopg.errors.UndefinedTable)
    assert results[2] == [{"x": "c"}]
    # the pool's connections are still usable afterwards
    assert await fetch_batch(db, [("SELECT 2 AS n", ())]) == [[{"n": 2}]]


async def test_empty_batch_touches_nothing(db: AsyncConnectionPool) -> None:
    assert await fetch_batch(db, []) == []
