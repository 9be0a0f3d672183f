"""`verb_mappings`: the phrasings a person uses for an agent's actions, with how often
(`konfidenz`) and when last (`zuletzt_am`) — docs/behaviour/agents.md#learnt-phrasings.

`record_uses` counts one carried-out task's phrasings and keeps the user's rows bounded in
the same transaction (expired rows out, then the least recently used beyond the cap);
`learnt` reads the ones used often enough and recently enough to count. Every function
takes an open connection; the rules (which words, how many uses) live in
`agents/verb_mappings.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from psycopg import AsyncConnection

_UPSERT: Final = (
    "INSERT INTO verb_mappings (user_id, agent, ausdruck, aktion, erstellt_am, zuletzt_am)"
    " VALUES (%s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (user_id, agent, ausdruck, aktion)"
    " DO UPDATE SET konfidenz = verb_mappings.konfidenz + 1, zuletzt_am = EXCLUDED.zuletzt_am"
)
_EXPIRE: Final = "DELETE FROM verb_mappings WHERE user_id = %s AND zuletzt_am < %s"
_OVER_CAP: Final = (
    "DELETE FROM verb_mappings WHERE id IN (SELECT id FROM verb_mappings WHERE user_id = %s"
    " ORDER BY zuletzt_am DESC, konfidenz DESC, id DESC OFFSET %s)"
)


@dataclass(frozen=True, slots=True)
class Mapping:
    """A learnt phrasing: `expression` (`ausdruck`) stands for `action` (`aktion`) of
    `agent`, used `uses` (`konfidenz`) times."""

    expression: str
    action: str
    uses: int


async def record_uses(
    conn: AsyncConnection[Any],
    user_id: str,
    agent: str,
    action: str,
    expressions: Sequence[str],
    *,
    now: datetime,
    unused_since: datetime,
    cap: int,
) -> int:
    """Count one use of each expression for `action`; drop the user's rows unused since
    `unused_since`, then all but the `cap` most recently used. Returns the rows dropped."""
    async with conn.transaction():
        # one writer per user at a time: the cap counts what the others wrote
        await conn.execute(
            "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"verb_mappings:{user_id}",)
        )
        expired = await conn.execute(_EXPIRE, (user_id, unused_since))
        dropped = expired.rowcount or 0
        for expression in expressions:
            await conn.execute(_UPSERT, (user_id, agent, expression, action, now, now))
        over = await conn.execute(_OVER_CAP, (user_id, cap))
        return dropped + (over.rowcount or 0)


async def learnt(
    conn: AsyncConnection[Any],
    user_id: str,
    agent: str,
    *,
    min_uses: int,
    unused_since: datetime,
) -> list[Mapping]:
    """The user's phrasings for `agent` used at least `min_uses` times and since
    `unused_since`, most used first."""
    cur = await conn.execute(
        "SELECT ausdruck, aktion, konfidenz FROM verb_mappings"
        " WHERE user_id = %s AND agent = %s AND konfidenz >= %s AND zuletzt_am >= %s"
        " ORDER BY konfidenz DESC, ausdruck",
        (user_id, agent, min_uses, unused_since),
    )
    return [
        Mapping(str(row["ausdruck"]), str(row["aktion"]), int(row["konfidenz"]))
        for row in await cur.fetchall()
    ]
