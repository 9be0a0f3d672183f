"""Read access to active directives for the CharacterGraph (db_access, responder, jurist).

Active rules feed the responder's final `[DIREKTIVEN]` block (ethics >
directives > character) and the jurist's directives score.
"""

from __future__ import annotations

from typing import Any

from psycopg_pool import AsyncConnectionPool

from novaberg.agents import rule_store

TABLE: rule_store.Table = "direktiven"


async def active_directives(pool: AsyncConnectionPool, user_id: str) -> list[dict[str, Any]]:
    """Active rules `{id, anweisung, kontext, erstellt_am, ...}`, oldest first."""
    return await rule_store.active(pool, TABLE, user_id)


def directives_block(rows: list[dict[str, Any]]) -> str:
    """The body of a `[DIREKTIVEN]` prompt block: one "- text (kontext)" line per rule."""
    return "\n".join(
        f"- {r['anweisung']}" + (f" ({r['kontext']})" if r.get("kontext") else "") for r in rows
    )
