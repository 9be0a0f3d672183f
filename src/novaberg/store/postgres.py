"""PostgreSQL access: one async connection pool with pgvector types registered."""

from __future__ import annotations

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool


async def _configure(conn: AsyncConnection) -> None:
    from pgvector.psycopg import register_vector_async

    await register_vector_async(conn)
    await conn.set_autocommit(True)


async def create_pool(
    database_url: str, *, min_size: int = 4, max_size: int = 8
) -> AsyncConnectionPool:
    """Open a pool whose connections return rows as dicts and know `vector`.

    Nodes read several tables at once (asyncio.gather), so a few connections are kept open
    from the start instead of being grown while a turn waits.
    """
    pool = AsyncConnectionPool(
        database_url,
        min_size=min(min_size, max_size),
        max_size=max_size,
        kwargs={"row_factory": dict_row},
        configure=_configure,
        open=False,
    )
    await pool.open(wait=True, timeout=30)
    return pool
