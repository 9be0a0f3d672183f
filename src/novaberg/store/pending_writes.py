"""`pending_writes_log` (every PendingWrite of a run, with what became of it) and
`verbindung` (turn → the short-term entries it stored) (docs/behaviour/nodes.md#dispatcher).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from novaberg.store.pipelined import pipeline

_PENDING_SQL: Final = (
    "INSERT INTO pending_writes_log (turn_id, user_id, character_id, quelle, ziel, aktion,"
    " daten, beschreibung, ergebnis) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)
_LINK_SQL: Final = "INSERT INTO verbindung (turn_id, kzg_id) VALUES (%s, %s)"


@dataclass(frozen=True, slots=True)
class LoggedWrite:
    """One `pending_writes_log` row (English fields; the columns keep their names)."""

    turn_id: str | None
    user_id: str
    character_id: str
    source: str
    target: str
    action: str
    data: Mapping[str, Any]
    description: str
    result: str

    def params(self) -> tuple[Any, ...]:
        return (
            self.turn_id,
            self.user_id,
            self.character_id,
            self.source,
            self.target,
            self.action,
            Jsonb(dict(self.data)),
            self.description,
            self.result,
        )


async def insert(
    pool: AsyncConnectionPool,
    writes: Sequence[LoggedWrite] = (),
    links: Sequence[tuple[str | None, str]] = (),
) -> None:
    """Every write row and every (turn id, short-term key) link in one pipelined round
    trip. The statements of one pipeline run in one implicit transaction (PostgreSQL
    pipeline mode): all or none. (An explicit BEGIN/COMMIT around them costs more client
    CPU and buys nothing.)"""
    async with pool.connection() as conn, pipeline(conn), conn.cursor() as cur:
        for write in writes:
            await cur.execute(_PENDING_SQL, write.params())
        for link in links:
            await cur.execute(_LINK_SQL, link)
