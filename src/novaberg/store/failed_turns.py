"""Failed turns of a pair, kept for the conversation history: a user's turn that ended in
`turn_gescheitert` is a `pipeline_log` row of `art = 'turn_gescheitert'` with its reason, the
ids it named and the texts the person wrote, so a page loaded later shows the failure and
can send the texts again. Kept, like the answered turns, when older log rows are purged.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Final

from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from novaberg.store.pipeline_log import ART_FAILED_TURN

log = logging.getLogger(__name__)

SOURCE: Final = "character"
NODE: Final = "ergebnis"
"""`quelle` and `node` of the row: the outcome of the run, not one node's."""


class FailedTurnLog:
    """Writes one row per failed user turn (the outcome was sent; ids were named)."""

    def __init__(self, pool: AsyncConnectionPool) -> None:
        self.pool = pool

    async def record(
        self,
        user_id: str,
        character_id: str,
        turn_id: str,
        message_ids: Sequence[str],
        reason: str,
        prompts: Sequence[str],
    ) -> None:
        """Store the failure; a storage error is logged, never raised (the outcome has left)."""
        inhalt = {
            "grund": reason,
            "nachrichten_ids": list(message_ids),
            "eingaben": [p for p in prompts if p],
            "user_prompt": "\n".join(p for p in prompts if p),
        }
        try:
            async with self.pool.connection() as conn:
                await conn.execute(
                    "INSERT INTO pipeline_log (turn_id, quelle, node, art, ergebnis, inhalt,"
                    " user_id, character_id) VALUES (%s, %s, %s, %s, 'fehler', %s, %s, %s)",
                    (turn_id, SOURCE, NODE, ART_FAILED_TURN, Jsonb(inhalt), user_id, character_id),
                )
        except Exception:
            log.exception("failed turn %s of %s:%s not recorded", turn_id, user_id, character_id)
