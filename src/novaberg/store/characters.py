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
    avatar: bytes | None = None
    avatar_type: str | None = None


async def create(conn: AsyncConnection[Any], new: NewCharacter) -> bool:
    """Insert the character; False (nothing changed) if the id exists already."""
    cur = await conn.execute(
        "INSERT INTO characters (character_id, name, beschreibung, persoenlichkeit, szenario,"
        " erste_nachricht, beispiel_dialog, system_prompt, karte, karten_hash, avatar,"
        " avatar_typ) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
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
            new.avatar,
            new.avatar_type if new.avatar is not None else None,
        ),
    )
    return cur.rowcount == 1


async def add_missing_avatar(
    conn: AsyncConnection[Any], character_id: str, avatar: bytes, avatar_type: str
) -> bool:
    """Give a character without an avatar this one (a card imported again); True if set."""
    cur = await conn.execute(
        "UPDATE characters SET avatar = %s, avatar_typ = %s"
        " WHERE character_id = %s AND avatar IS NULL",
        (avatar, avatar_type, character_id),
    )
    return cur.rowcount == 1


async def has_avatar(conn: AsyncConnection[Any], character_id: str) -> bool:
    cur = await conn.execute(
        "SELECT avatar IS NOT NULL AS da FROM characters WHERE character_id = %s", (character_id,)
    )
    row = await cur.fetchone()
    return bool(row and row["da"])


async def avatar(conn: AsyncConnection[Any], character_id: str) -> tuple[bytes, str] | None:
    """The character's picture and its media type, if it has one."""
    cur = await conn.execute(
        "SELECT avatar, avatar_typ FROM characters WHERE character_id = %s AND avatar IS NOT NULL",
        (character_id,),
    )
    row = await cur.fetchone()
    return (bytes(row["avatar"]), str(row["avatar_typ"])) if row else None


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
        " karten_hash IS NOT NULL AS aus_karte, avatar IS NOT NULL AS avatar"
        " FROM characters ORDER BY character_id"
    )
    return [dict(row) for row in await cur.fetchall()]
