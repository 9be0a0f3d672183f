"""Failed turns of a pair, kept for the conversation history: a user's turn that ended in
`turn_gescheitert` is a `pipeline_log` row of `art = 'turn_gescheitert'` with its reason, the
ids it named and the texts the person wrote, so a page loaded later shows the failure and
can send the texts again. Kept, like the answered turns, when older log rows are purged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Final

from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from novaberg.store.pipeline_log import KIND_FAILED_TURN, RESULT_FAILED

log = logging.getLogger(__name__)

SOURCE: Final = "character"
NODE: Final = "ergebnis"
"""`quelle` and `node` of the row: the outcome of the run, not one node's."""

RECORD_TIMEOUT_S: Final = 5.0
"""How long the worker waits for the row (PostgreSQL away): the failure has been sent, and
the run's queue entry should not wait on the history."""


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
        content: dict[str, object] = {
            "grund": reason,
            "nachrichten_ids": list(message_ids),
            "eingaben": [p for p in prompts if p],
            "user_prompt": "\n".join(p for p in prompts if p),
        }
        try:
            await asyncio.wait_for(
                self._insert(turn_id, user_id, character_id, content), RECORD_TIMEOUT_S
            )
        except Exception:
            log.exception("failed turn %s of %s:%s not recorded", turn_id, user_id, character_id)

    async def _insert(
        self, turn_id: str, user_id: str, character_id: str, content: dict[str, object]
    ) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(
                "INSERT INTO pipeline_log (turn_id, quelle, node, art, ergebnis, inhalt,"
                " user_id, character_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    turn_id,
                    SOURCE,
                    NODE,
                    KIND_FAILED_TURN,
                    RESULT_FAILED,
                    Jsonb(content),
                    user_id,
                    character_id,
                ),
            )
