"""A person's persona: the name and short description the characters know them by
(docs/behaviour/web.md#your-persona), one row per user in `nutzer_persona`.

Unset is no row, and an emptied persona deletes its row: the turn context then carries
None and the prompts stay exactly as they were without one (no tokens spent on it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from psycopg_pool import AsyncConnectionPool

from novaberg.store.batch_read import Query

NAME_MAX: Final = 80
"""A name, not a biography: it is said in every answer's prompt."""
DESCRIPTION_MAX: Final = 500
"""A few sentences; the bundled model's context is 2048 tokens."""


@dataclass(frozen=True, slots=True)
class UserPersona:
    """Who the person says they are: `name` (may be "") and `description` (may be "")."""

    name: str
    description: str

    @property
    def empty(self) -> bool:
        return not self.name.strip() and not self.description.strip()


_SELECT: Final = "SELECT name, beschreibung FROM nutzer_persona WHERE user_id = %s"


def persona_query(user_id: str) -> Query:
    """The user's persona row (columns name, beschreibung; no row while unset)."""
    return (_SELECT, (user_id,))


def persona_from_rows(rows: Sequence[Mapping[str, Any]]) -> UserPersona | None:
    """The `persona_query` row as a UserPersona; None without a row or with an empty one."""
    if not rows:
        return None
    found = UserPersona(
        str(rows[0]["name"] or "").strip(), str(rows[0]["beschreibung"] or "").strip()
    )
    return None if found.empty else found


async def load_persona(pool: AsyncConnectionPool, user_id: str) -> UserPersona | None:
    async with pool.connection() as conn:
        cur = await conn.execute(*persona_query(user_id))
        rows: list[Any] = await cur.fetchall()
    return persona_from_rows(rows)


async def save_persona(
    pool: AsyncConnectionPool, user_id: str, persona: UserPersona
) -> UserPersona | None:
    """Store the persona (trimmed); an empty one removes the row. Returns what is stored."""
    persona = UserPersona(persona.name.strip(), persona.description.strip())
    async with pool.connection() as conn:
        if persona.empty:
            await conn.execute("DELETE FROM nutzer_persona WHERE user_id = %s", (user_id,))
            return None
        await conn.execute(
            "INSERT INTO nutzer_persona (user_id, name, beschreibung) VALUES (%s, %s, %s) "
            "ON CONFLICT (user_id) DO UPDATE SET name = EXCLUDED.name, "
            "beschreibung = EXCLUDED.beschreibung, geaendert_am = now()",
            (user_id, persona.name, persona.description),
        )
    return persona
