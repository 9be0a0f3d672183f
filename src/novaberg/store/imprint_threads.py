"""`praegung_faden`: the topics that moved the character, each with its strength and how
many turns strengthened it (docs/behaviour/nodes.md#imprint).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, cast

from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair

_UPSERT_SQL: Final = (
    "INSERT INTO praegung_faden (user_id, character_id, thema, staerke, letzter_turn)"
    " VALUES (%s, %s, %s, LEAST(%s, %s), %s)"
    " ON CONFLICT (user_id, character_id, thema) DO UPDATE SET"
    " staerke = LEAST(praegung_faden.staerke + EXCLUDED.staerke, %s),"
    " anzahl = praegung_faden.anzahl + 1, zuletzt_am = now(),"
    " letzter_turn = EXCLUDED.letzter_turn"
    " RETURNING staerke, anzahl"
)


@dataclass(frozen=True, slots=True)
class Thread:
    """A thread after it was strengthened."""

    strength: float
    count: int


async def strengthen(
    pool: AsyncConnectionPool,
    pair: Pair,
    topic: str,
    increment: float,
    max_strength: float,
    turn_id: str | None,
) -> Thread | None:
    """Add `increment` to the topic's thread (capped at `max_strength`) and count the turn."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            _UPSERT_SQL,
            (
                pair.user_id,
                pair.character_id,
                topic,
                increment,
                max_strength,
                turn_id,
                max_strength,
            ),
        )
        row = cast(dict[str, Any] | None, await cur.fetchone())
    if row is None:
        return None
    return Thread(strength=float(row["staerke"]), count=int(row["anzahl"]))
