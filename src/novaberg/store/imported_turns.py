"""The turns of chats imported for a pair (`gespraechsarchiv` rows of `herkunft = 'import'`),
in the order the page shows them: before the pair's live turns, each export in its own
order. Read newest first by row id (an import stores a file's turns in ascending ids), so a
client pages backwards with the smallest id it holds, as for the live history
(store/conversation_history.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair
from novaberg.store.archive import ORIGIN_IMPORT
from novaberg.store.conversation_history import NO_CURSOR

_SQL: Final = (
    "SELECT id, sprecher, sprecher_name, inhalt, zeit, quelle FROM gespraechsarchiv"
    f" WHERE user_id = %s AND character_id = %s AND herkunft = '{ORIGIN_IMPORT}' AND id < %s"
    " ORDER BY id DESC LIMIT %s"
)


@dataclass(frozen=True, slots=True)
class ImportedTurn:
    """One imported turn: who said it (`speaker` user|character, and the export's name for
    them if it gave one), what, when, and from which format."""

    row_id: int
    speaker: str
    name: str | None
    text: str
    time: datetime
    source: str


def _turn(row: dict[str, Any]) -> ImportedTurn:
    return ImportedTurn(
        row_id=int(row["id"]),
        speaker=str(row["sprecher"]),
        name=row["sprecher_name"] or None,
        text=str(row["inhalt"]),
        time=row["zeit"],
        source=str(row["quelle"]),
    )


async def read_imported(
    pool: AsyncConnectionPool, pair: Pair, *, before_id: int | None, limit: int
) -> list[ImportedTurn]:
    """Up to `limit` imported turns of `pair` below `before_id`, newest first."""
    cursor = NO_CURSOR if before_id is None else before_id
    async with pool.connection() as conn:
        cur = await conn.execute(_SQL, (pair.user_id, pair.character_id, cursor, limit))
        return [_turn(dict(row)) for row in await cur.fetchall()]
