"""`offene_fragen_aufgriff`: one row per answered turn, whether the answer took up an open
question it was offered (docs/behaviour/nodes.md#uptake).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from psycopg import AsyncConnection

_INSERT_SQL: Final = (
    "INSERT INTO offene_fragen_aufgriff (turn_id, user_id, character_id, angeboten,"
    " aufgegriffen, frage_id, frage, cosinus, ausfall) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


@dataclass(frozen=True, slots=True)
class UptakeRow:
    """One turn's row (English fields; the columns keep their names)."""

    turn_id: str
    user_id: str
    character_id: str
    offered: int
    taken_up: bool | None
    question_id: str | None
    question: str | None
    cosine: float | None
    failure: str | None


async def insert(conn: AsyncConnection[Any], row: UptakeRow) -> None:
    """Write the row on `conn` (the caller's connection, which may have read the offers)."""
    await conn.execute(
        _INSERT_SQL,
        (
            row.turn_id,
            row.user_id,
            row.character_id,
            row.offered,
            row.taken_up,
            row.question_id,
            row.question,
            row.cosine,
            row.failure,
        ),
    )
