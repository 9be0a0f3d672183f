"""Read access to Nova's active user-given identity for the CharacterGraph.

Active rows go into the responder's `[IDENTITAET]` block after "Du bist Nova"
(docs/behaviour/agents.md#identity); the target is at most three active instructions.
"""

from __future__ import annotations

from typing import Any

from psycopg_pool import AsyncConnectionPool

from novaberg.agents import rule_store

TABLE: rule_store.Table = "charakter_anweisungen"

MAX_ACTIVE = 3
"""More active identities than this asks for consolidation."""


async def active_identities(pool: AsyncConnectionPool, user_id: str) -> list[dict[str, Any]]:
    """Active instructions `{id, anweisung, erstellt_am, ...}`, oldest first."""
    return await rule_store.active(pool, TABLE, user_id)


def identity_block(rows: list[dict[str, Any]]) -> str:
    """The body lines of an `[IDENTITAET]` prompt block, one "- text" per instruction."""
    return "\n".join(f"- {r['anweisung']}" for r in rows)
