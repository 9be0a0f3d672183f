"""Statements queued in one psycopg pipeline and read once it has synced.

A round trip to PostgreSQL costs this CPU-bound process far more than one more statement
in a round trip that goes out anyway. A caller that needs several independent reads (the
hybrid memory search's lists) queues them all inside `conn.pipeline()` and reads the
results after the block: the block's end is the one round trip. Reading a cursor inside
the block would sync the pipeline there, one round trip per read.

Every pipeline of the project is opened with `pipeline(conn)`, which prepares no
statement inside it: psycopg records a statement it sends for preparation as prepared
before the server has answered, so when an earlier statement of the same pipeline fails
the server never prepares it, and that pooled connection then fails every later run of
the statement with "prepared statement … does not exist" until it is closed (one failed
write poisoned an impulse's next deliveries that way).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any, Generic, TypeVar

from psycopg import AsyncConnection, AsyncCursor

T = TypeVar("T")
U = TypeVar("U")
Rows = list[dict[str, Any]]


class Reply(Generic[T]):
    """What queued statements give, parsed: `read()` after the pipeline block."""

    __slots__ = ("_cursors", "_parse")

    def __init__(
        self,
        cursors: Sequence[AsyncCursor[Any]],
        parse: Callable[[list[Rows]], T],
    ) -> None:
        self._cursors = cursors
        self._parse = parse

    @classmethod
    def of(cls, cursor: AsyncCursor[Any], parse: Callable[[Rows], T]) -> Reply[T]:
        """The reply of one statement."""
        return cls([cursor], lambda results: parse(results[0]))

    @classmethod
    def ready(cls, value: T) -> Reply[T]:
        """A reply that needed no statement (nothing to look up)."""
        return cls([], lambda _results: value)

    def then(self, parse: Callable[[T], U]) -> Reply[U]:
        """This reply with `parse` applied to its result when it is read."""
        first = self._parse
        return Reply(self._cursors, lambda results: parse(first(results)))

    async def read(self) -> T:
        return self._parse([list(await cursor.fetchall()) for cursor in self._cursors])


@asynccontextmanager
async def pipeline(conn: AsyncConnection[Any]) -> AsyncIterator[None]:
    """`conn.pipeline()` with automatic statement preparation off inside it (see the module
    docstring); statements outside pipelines are still prepared after a few runs."""
    threshold = conn.prepare_threshold
    conn.prepare_threshold = None
    try:
        async with conn.pipeline():
            yield
    finally:
        conn.prepare_threshold = threshold


@asynccontextmanager
async def local_settings(conn: AsyncConnection[Any]) -> AsyncIterator[None]:
    """Keep `set_config(..., true)` local to the statements queued inside: BEGIN and
    COMMIT are queued as statements of the pipeline around it. `conn.transaction()`
    would sync the pipeline at its start and end (two more round trips); in a pipeline,
    statements before a Sync share one implicit transaction, so without a block of their
    own the settings would reach every other statement of the round trip. For an
    autocommit connection (the pool's) in pipeline mode only."""
    await conn.execute("BEGIN")
    yield
    await conn.execute("COMMIT")
