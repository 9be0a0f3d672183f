"""PostgreSQL access: one async connection pool with pgvector types registered.

A PostgreSQL restart ends every pooled connection, and the pool learns that only when a
query fails on one — one failed turn per stale connection. So a connection is checked
as it leaves the pool (`_check`): the server speaks to an idle connection only to say it
is ending it, so an idle connection with something to read is dead, and the pool
replaces it. That costs one non-blocking poll of the socket, not a round trip.

Commits wait for the WAL flush (PostgreSQL's default): a write the caller was told is
stored survives a crash of the database host. `async_commit=True` (the
`NOVABERG_POSTGRES_ASYNC_COMMIT` setting) sets `synchronous_commit = off` on every pooled
connection: a commit then returns once its WAL record is written, not flushed, which saves
a flush per write, and a host crash can lose the last ~600 ms of acknowledged commits (at
most three `wal_writer_delay`s of 200 ms) — never a torn or inconsistent state.
"""

from __future__ import annotations

import select
from typing import Final

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

ASYNC_COMMIT_SQL: Final = "SET synchronous_commit = off"
"""Run once on each pooled connection when asked to (see the module docstring)."""


async def _configure(conn: AsyncConnection) -> None:
    from pgvector.psycopg import register_vector_async

    await register_vector_async(conn)
    await conn.set_autocommit(True)


async def _configure_async_commit(conn: AsyncConnection) -> None:
    await _configure(conn)
    await conn.execute(ASYNC_COMMIT_SQL)


async def _check(conn: AsyncConnection) -> None:
    """Raise if the server has closed (or is closing) this idle connection."""
    if conn.closed or conn.broken:
        raise psycopg.OperationalError("the connection is closed")
    readable, _, _ = select.select([conn.fileno()], [], [], 0)
    if readable:
        await conn.close()  # closed, the pool drops it and opens a new one
        raise psycopg.OperationalError("the server ended this idle connection")


async def create_pool(
    database_url: str,
    *,
    min_size: int = 4,
    max_size: int = 8,
    async_commit: bool = False,
    wait: float = 30.0,
) -> AsyncConnectionPool:
    """Open a pool whose connections return rows as dicts and know `vector`; with
    `async_commit` they commit without waiting for the WAL flush (module docstring).

    Nodes read several tables at once (asyncio.gather), so a few connections are kept open
    from the start instead of being grown while a turn waits. `wait` bounds how long
    opening waits for the first connections (a start-up waits for PostgreSQL first, in
    store/postgres_wait.py; this covers a restart between that wait and the pool).
    """
    pool = AsyncConnectionPool(
        database_url,
        min_size=min(min_size, max_size),
        max_size=max_size,
        kwargs={"row_factory": dict_row},
        configure=_configure_async_commit if async_commit else _configure,
        check=_check,
        open=False,
    )
    await pool.open(wait=True, timeout=wait)
    return pool
