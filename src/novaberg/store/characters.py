"""The `characters` table: who a person can talk to, and what an imported card said."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from psycopg import AsyncConnection
from psycopg.types.json import Jsonb

PERSONA_COLUMNS: Final = (
    "name",
    "beschreibung",
    "persoenlichkeit",
    "szenario",
    "erste_nachricht",
    "beispiel_dialog",
    "system_prompt",
)
"""What the responder's system prompt is built from (graph/nodes/db_access.py)."""


@dataclass(frozen=True, slots=True)
class NewCharacter:
    character_id: str
    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_message: str = ""
    example_dialogue: str = ""
    system_prompt: str = ""
    card: dict[str, Any] | None = None
    card_hash: str | None = None


async def create(conn: AsyncConnection[Any], new: NewCharacter) -> bool:
    """Insert the character; False (nothing changed) if the id exists already."""
    cur = await conn.execute(
        "INSERT INTO characters (character_id, name, beschreibung, persoenlichkeit, szenario,"
        " erste_nachricht, beispiel_dialog, system_prompt, karte, karten_hash)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (character_id) DO NOTHING",
        (
            new.character_id,
            new.name,
            new.description,
            new.personality,
            new.scenario,
            new.first_message,
            new.example_dialogue,
            new.system_prompt,
            Jsonb(new.card) if new.card is not None else None,
            new.card_hash,
        ),
    )
    return cur.rowcount == 1


async def get(conn: AsyncConnection[Any], character_id: str) -> dict[str, Any] | None:
    """The character's row without the stored card."""
    cur = await conn.execute(
        f"SELECT character_id, {', '.join(PERSONA_COLUMNS)}, karten_hash, erstellt_am"
        " FROM characters WHERE character_id = %s",
        (character_id,),
    )
    row = await cur.fetchone()
    return dict(row) if row else None


async def list_all(conn: AsyncConnection[Any]) -> list[dict[str, Any]]:
    cur = await conn.execute(
        "SELECT character_id, name, beschreibung, erste_nachricht, erstellt_am,"
        " karten_hash IS NOT NULL AS aus_karte FROM characters ORDER BY character_id"
    )
    return [dict(row) for row in await cur.fetchall()]
