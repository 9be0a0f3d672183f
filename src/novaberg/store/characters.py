"""The `characters` table: who a person can talk to, and what an imported card said.

A character belongs to the user who created it (`besitzer`); a built-in one (`besitzer`
'', e.g. nova) is shared read-only. Every read here takes the asking user and sees only
that user's own rows and the shared ones: another user's character does not exist for
them. Two users may own the same id (each imported the same card); if a user's own id is
also a shared one, their own row wins. Rows leave this module as dataclasses; the German
column names appear only in the SQL below.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from psycopg import AsyncConnection
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair
from novaberg.store.batch_read import Query

PREVIEW_CHARS: Final = 200
"""A list shows this much of a description (a card's may be megabytes)."""

_VISIBLE: Final = (
    "(c.besitzer = %(user)s OR (c.besitzer = '' AND NOT EXISTS (SELECT 1 FROM characters o"
    " WHERE o.besitzer = %(user)s AND o.character_id = c.character_id)))"
)
"""The user's own rows and the shared ones they do not shadow with an own row."""

_SUMMARY_COLUMNS: Final = (
    f"c.character_id, c.name, left(c.beschreibung, {PREVIEW_CHARS + 1}) AS vorschau,"
    " c.karten_hash IS NOT NULL AS aus_karte, c.avatar IS NOT NULL AS hat_avatar,"
    " c.besitzer <> '' AS eigen, c.erstellt_am"
)
"""A list row: the description's first characters only (one more tells it was cut)."""
_RECORD_COLUMNS: Final = (
    "c.character_id, c.name, c.beschreibung, c.persoenlichkeit, c.szenario, c.erste_nachricht,"
    " c.beispiel_dialog, c.system_prompt, c.karten_hash, c.avatar IS NOT NULL AS hat_avatar,"
    " c.besitzer <> '' AS eigen, c.erstellt_am, c.weitere_begruessungen"
)


class TooManyCharacters(Exception):
    """The user owns `limit` characters already; the message says how to make room."""

    def __init__(self, owner: str, limit: int) -> None:
        super().__init__(
            f"{owner} owns {limit} characters, the most allowed (NOVABERG_MAX_CHARACTERS); "
            "delete one of them (DELETE /characters/{id}) to make room for another"
        )
        self.limit = limit


@dataclass(frozen=True, slots=True)
class NewCharacter:
    character_id: str
    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""
    first_message: str = ""
    alternate_greetings: tuple[str, ...] = ()
    example_dialogue: str = ""
    system_prompt: str = ""
    card: dict[str, Any] | None = None
    card_hash: str | None = None
    avatar: bytes | None = None
    avatar_type: str | None = None


@dataclass(frozen=True, slots=True)
class CharacterSummary:
    """A character as a list shows it: no long field, the description cut short."""

    character_id: str
    name: str
    description_preview: str
    description_cut: bool
    from_card: bool
    has_avatar: bool
    own: bool
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Character:
    """The whole record of a character, without the stored card and picture."""

    character_id: str
    name: str
    description: str
    personality: str
    scenario: str
    first_message: str
    example_dialogue: str
    system_prompt: str
    card_hash: str | None
    has_avatar: bool
    own: bool
    created_at: datetime
    alternate_greetings: tuple[str, ...] = ()


def _summary(row: dict[str, Any]) -> CharacterSummary:
    return CharacterSummary(
        character_id=row["character_id"],
        name=row["name"],
        description_preview=row["vorschau"][:PREVIEW_CHARS],
        description_cut=len(row["vorschau"]) > PREVIEW_CHARS,
        from_card=bool(row["aus_karte"]),
        has_avatar=bool(row["hat_avatar"]),
        own=bool(row["eigen"]),
        created_at=row["erstellt_am"],
    )


def _record(row: dict[str, Any]) -> Character:
    return Character(
        character_id=row["character_id"],
        name=row["name"],
        description=row["beschreibung"],
        personality=row["persoenlichkeit"],
        scenario=row["szenario"],
        first_message=row["erste_nachricht"],
        example_dialogue=row["beispiel_dialog"],
        system_prompt=row["system_prompt"],
        card_hash=row["karten_hash"],
        has_avatar=bool(row["hat_avatar"]),
        own=bool(row["eigen"]),
        created_at=row["erstellt_am"],
        alternate_greetings=tuple(
            str(text) for text in row["weitere_begruessungen"] or () if isinstance(text, str)
        ),
    )


async def create(
    conn: AsyncConnection[Any], owner: str, new: NewCharacter, *, limit: int | None = None
) -> bool:
    """Insert the character as `owner`'s; False (nothing changed) if the owner has this id
    already or it is a shared one. Raise TooManyCharacters if the owner has `limit` already
    (None = no limit). Run it inside a transaction: the count and the insert hold a per-owner
    lock, so concurrent imports never pass the limit."""
    if not owner:
        raise ValueError("a created character needs its owner")
    if limit is not None:
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"characters:{owner}",))
        cur = await conn.execute(
            "SELECT count(*) FILTER (WHERE besitzer = %(owner)s) AS eigene,"
            " count(*) FILTER (WHERE character_id = %(id)s) AS vergeben"
            " FROM characters WHERE besitzer IN ('', %(owner)s)",
            {"owner": owner, "id": new.character_id},
        )
        row = await cur.fetchone()
        if row is not None and not row["vergeben"] and int(row["eigene"]) >= limit:
            raise TooManyCharacters(owner, limit)  # an id taken already changes nothing: no error
    cur = await conn.execute(
        "INSERT INTO characters (besitzer, character_id, name, beschreibung, persoenlichkeit,"
        " szenario, erste_nachricht, beispiel_dialog, system_prompt, karte, karten_hash, avatar,"
        " avatar_typ, weitere_begruessungen) SELECT %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s,"
        " %s, %s, %s"
        " WHERE NOT EXISTS (SELECT 1 FROM characters WHERE besitzer = '' AND character_id = %s)"
        " ON CONFLICT (besitzer, character_id) DO NOTHING",
        (
            owner,
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
            Jsonb(list(new.alternate_greetings)),
            new.character_id,
        ),
    )
    return cur.rowcount == 1


async def delete(conn: AsyncConnection[Any], owner: str, character_id: str) -> bool:
    """Delete `owner`'s own character; False if they own none of this id (a shared one is
    never deleted here). The pair's memory and archive stay."""
    cur = await conn.execute(
        "DELETE FROM characters WHERE besitzer = %s AND character_id = %s AND besitzer <> ''",
        (owner, character_id),
    )
    return cur.rowcount == 1


EDITABLE: Final = {
    "name": "name",
    "description": "beschreibung",
    "personality": "persoenlichkeit",
    "scenario": "szenario",
    "first_message": "erste_nachricht",
}
"""The fields the page's editor changes (attribute -> column); the rest of a card stays."""


async def update(
    conn: AsyncConnection[Any], owner: str, character_id: str, changes: Mapping[str, str]
) -> bool:
    """Set `changes` (keys of `EDITABLE`) on `owner`'s own character; False if they own
    none of this id (a shared one is never changed here). The persona the prompts use is read
    from this row every turn, so a change counts from the next turn on."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise ValueError(f"not editable: {sorted(unknown)}")
    if not changes:
        return await owns(conn, owner, character_id)
    assignments = ", ".join(f"{EDITABLE[name]} = %({name})s" for name in changes)
    cur = await conn.execute(
        f"UPDATE characters SET {assignments}"
        " WHERE besitzer = %(owner)s AND character_id = %(id)s AND besitzer <> ''",
        {**changes, "owner": owner, "id": character_id},
    )
    return cur.rowcount == 1


async def owns(conn: AsyncConnection[Any], owner: str, character_id: str) -> bool:
    """Whether `owner` has an own (not shared) character of this id."""
    cur = await conn.execute(
        "SELECT 1 FROM characters WHERE besitzer = %s AND character_id = %s AND besitzer <> ''",
        (owner, character_id),
    )
    return await cur.fetchone() is not None


async def set_avatar(
    conn: AsyncConnection[Any], owner: str, character_id: str, avatar: bytes, avatar_type: str
) -> bool:
    """Replace the picture of `owner`'s own character; False if they own none of this id."""
    cur = await conn.execute(
        "UPDATE characters SET avatar = %s, avatar_typ = %s"
        " WHERE besitzer = %s AND character_id = %s AND besitzer <> ''",
        (avatar, avatar_type, owner, character_id),
    )
    return cur.rowcount == 1


async def add_missing_avatar(
    conn: AsyncConnection[Any], owner: str, character_id: str, avatar: bytes, avatar_type: str
) -> bool:
    """Give the owner's character without an avatar this one (a card imported again); True
    if set. A shared character is not changed."""
    cur = await conn.execute(
        "UPDATE characters SET avatar = %s, avatar_typ = %s"
        " WHERE besitzer = %s AND character_id = %s AND besitzer <> '' AND avatar IS NULL",
        (avatar, avatar_type, owner, character_id),
    )
    return cur.rowcount == 1


async def visible(conn: AsyncConnection[Any], user_id: str, character_id: str) -> Character | None:
    """The character `user_id` may talk to under this id (their own, else a shared one)."""
    cur = await conn.execute(
        f"SELECT {_RECORD_COLUMNS} FROM characters c WHERE c.character_id = %(id)s AND {_VISIBLE}",
        {"id": character_id, "user": user_id},
    )
    row = await cur.fetchone()
    return _record(row) if row else None


async def is_visible(conn: AsyncConnection[Any], user_id: str, character_id: str) -> bool:
    """Whether `user_id` may talk to this character (reads no field of it)."""
    cur = await conn.execute(
        "SELECT 1 FROM characters WHERE character_id = %s AND besitzer IN ('', %s)",
        (character_id, user_id),
    )
    return await cur.fetchone() is not None


async def list_visible(
    conn: AsyncConnection[Any], user_id: str, *, limit: int | None, after: str | None = None
) -> list[CharacterSummary]:
    """The characters `user_id` may talk to, by id, those after `after` (a page's last id),
    at most `limit` (None: all; the user's own are bounded by NOVABERG_MAX_CHARACTERS)."""
    cur = await conn.execute(
        f"SELECT {_SUMMARY_COLUMNS} FROM characters c WHERE {_VISIBLE}"
        " AND (%(after)s::text IS NULL OR c.character_id > %(after)s)"
        " ORDER BY c.character_id LIMIT %(limit)s",
        {"user": user_id, "after": after, "limit": limit},
    )
    return [_summary(row) for row in await cur.fetchall()]


async def visible_ids(conn: AsyncConnection[Any], user_id: str) -> frozenset[str]:
    """The ids `user_id` may talk to (the intake's cache of them: events/intake.py)."""
    cur = await conn.execute(
        "SELECT character_id FROM characters WHERE besitzer IN ('', %s)", (user_id,)
    )
    return frozenset(str(row["character_id"]) for row in await cur.fetchall())


async def load_visible_ids(pool: AsyncConnectionPool, user_id: str) -> frozenset[str]:
    async with pool.connection() as conn:
        return await visible_ids(conn, user_id)


async def has_avatar(conn: AsyncConnection[Any], user_id: str, character_id: str) -> bool:
    cur = await conn.execute(
        f"SELECT c.avatar IS NOT NULL AS da FROM characters c"
        f" WHERE c.character_id = %(id)s AND {_VISIBLE}",
        {"id": character_id, "user": user_id},
    )
    row = await cur.fetchone()
    return bool(row and row["da"])


async def avatar(
    conn: AsyncConnection[Any], user_id: str, character_id: str
) -> tuple[bytes, str] | None:
    """The picture (and its media type) of the character `user_id` sees under this id."""
    cur = await conn.execute(
        f"SELECT c.avatar, c.avatar_typ FROM characters c"
        f" WHERE c.character_id = %(id)s AND {_VISIBLE} AND c.avatar IS NOT NULL",
        {"id": character_id, "user": user_id},
    )
    row = await cur.fetchone()
    return (bytes(row["avatar"]), str(row["avatar_typ"])) if row else None


# --- the CharacterGraph's reads (agents/turn_context.py), batched with its other reads ----

_PAIR_ROW: Final = (
    "SELECT {columns} FROM characters WHERE character_id = %s AND besitzer IN ('', %s)"
    " ORDER BY besitzer DESC LIMIT 1"
)
"""The row of the pair: the user's own, else the shared one ('' sorts last descending)."""


def name_query(pair: Pair) -> Query:
    """The display name of the pair's character (column `name`)."""
    return (_PAIR_ROW.format(columns="name"), (pair.character_id, pair.user_id))


def persona_query(pair: Pair) -> Query:
    """The card fields of the pair's character if it came from a card or is the user's own
    (written in the page's editor); no row for a built-in one, whose persona is the prompts'
    own: columns name, beschreibung, persoenlichkeit, szenario, beispiel_dialog, system_prompt."""
    inner = _PAIR_ROW.format(
        columns="name, beschreibung, persoenlichkeit, szenario, beispiel_dialog, system_prompt,"
        " karten_hash, besitzer"
    )
    return (
        "SELECT name, beschreibung, persoenlichkeit, szenario, beispiel_dialog, system_prompt"
        f" FROM ({inner}) r WHERE karten_hash IS NOT NULL OR besitzer <> ''",
        (pair.character_id, pair.user_id),
    )


@dataclass(frozen=True, slots=True)
class CardFields:
    """A card character's fields as its `persona_query` row holds them."""

    name: str
    system_prompt: str
    description: str
    personality: str
    scenario: str
    example_dialogue: str


def card_from_rows(rows: Sequence[Mapping[str, Any]]) -> CardFields | None:
    """The `persona_query` row; None for a character that came from no card."""
    if not rows:
        return None
    row = rows[0]
    return CardFields(
        name=str(row["name"] or ""),
        system_prompt=str(row["system_prompt"] or ""),
        description=str(row["beschreibung"] or ""),
        personality=str(row["persoenlichkeit"] or ""),
        scenario=str(row["szenario"] or ""),
        example_dialogue=str(row["beispiel_dialog"] or ""),
    )


def name_from_rows(rows: Sequence[Mapping[str, Any]]) -> str:
    """The `name_query` row's display name, "" without a row or a name."""
    return str(rows[0]["name"] or "").strip() if rows else ""
