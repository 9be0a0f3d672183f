"""Distilled personality profiles in `charakter_hash` (docs/behaviour/memory.md#profiles).

Row (user, character) is the person as the character sees them (→ `external.character`);
row (character, user) is the character's own profile toward that person, with
`nutzer_gewichtung` (→ `internal.character`). Each row has five text layers; English keys
in code, the table's column names on the wire.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from psycopg import AsyncConnection
from psycopg.types.json import Jsonb

from novaberg.pair import Pair
from novaberg.store.batch_read import Query

LAYER_COLUMNS: Final[Mapping[str, str]] = {
    "core": "kern_hash",
    "adaptive": "adaptive_hash",
    "relationship": "beziehungsprofil",
    "intentions": "intentions_profil",
    "emotions": "emotions_profil",
}
"""The five layers (English key → column; each has a `<column>_aktualisiert_am`)."""

_SELECT: Final = (
    "SELECT user_id, character_id, "
    + ", ".join(f"{col}, {col}_aktualisiert_am" for col in LAYER_COLUMNS.values())
    + ", nutzer_gewichtung, nutzer_gewichtung_quelle, nutzer_gewichtung_rad, nutzer_gewichtung_am"
    " FROM charakter_hash WHERE user_id = %s AND character_id = %s"
)


def _as_profile(row: Mapping[str, Any]) -> dict[str, Any]:
    profile: dict[str, Any] = {key: row[col] for key, col in LAYER_COLUMNS.items()}
    profile["updated"] = {key: row[f"{col}_aktualisiert_am"] for key, col in LAYER_COLUMNS.items()}
    profile["nutzer_gewichtung"] = row["nutzer_gewichtung"]
    profile["nutzer_gewichtung_quelle"] = row["nutzer_gewichtung_quelle"]
    profile["nutzer_gewichtung_rad"] = row["nutzer_gewichtung_rad"]
    profile["nutzer_gewichtung_am"] = row["nutzer_gewichtung_am"]
    return profile


async def read_profile(
    conn: AsyncConnection[Any], user_id: str, character_id: str
) -> dict[str, Any] | None:
    """Row (user_id, character_id) as {core, adaptive, relationship, intentions, emotions,
    updated{...}, nutzer_gewichtung, ...}; None when the row does not exist."""
    cur = await conn.execute(_SELECT, (user_id, character_id))
    row = await cur.fetchone()
    return None if row is None else _as_profile(row)


async def read_pair_profiles(
    conn: AsyncConnection[Any], pair: Pair
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the user's profile = row (u, c), the character's profile = row (c, u))."""
    return (
        await read_profile(conn, pair.user_id, pair.character_id),
        await read_profile(conn, pair.character_id, pair.user_id),
    )


async def upsert_layers(
    conn: AsyncConnection[Any],
    user_id: str,
    character_id: str,
    layers: Mapping[str, str],
    now: datetime,
) -> list[str]:
    """Write the non-empty layers given (keys of LAYER_COLUMNS); returns the keys written.

    An empty layer leaves the stored one untouched: a distillation without evidence for a
    layer does not erase what earlier evidence established.
    """
    written = {k: v.strip() for k, v in layers.items() if k in LAYER_COLUMNS and v and v.strip()}
    await conn.execute(
        "INSERT INTO charakter_hash (user_id, character_id) VALUES (%s, %s)"
        " ON CONFLICT (user_id, character_id) DO NOTHING",
        (user_id, character_id),
    )
    if not written:
        return []
    assignments = ", ".join(
        f"{LAYER_COLUMNS[k]} = %s, {LAYER_COLUMNS[k]}_aktualisiert_am = %s" for k in written
    )
    params: list[Any] = []
    for value in written.values():
        params += [value, now]
    await conn.execute(
        f"UPDATE charakter_hash SET {assignments} WHERE user_id = %s AND character_id = %s",
        (*params, user_id, character_id),
    )
    return list(written)


async def set_user_weight(
    conn: AsyncConnection[Any],
    pair: Pair,
    *,
    weight: float,
    wheel: Mapping[str, float],
    source: str,
    now: datetime,
) -> None:
    """Store the character's weight of a user in row (character, user), with the wheel it
    came from (`nutzer_gewichtung_rad`) and where it came from.

    Row (character, user) is the one salience reads for `pflicht`.
    """
    await conn.execute(
        "INSERT INTO charakter_hash (user_id, character_id, nutzer_gewichtung,"
        " nutzer_gewichtung_quelle, nutzer_gewichtung_rad, nutzer_gewichtung_am)"
        " VALUES (%s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (user_id, character_id) DO UPDATE SET"
        " nutzer_gewichtung = EXCLUDED.nutzer_gewichtung,"
        " nutzer_gewichtung_quelle = EXCLUDED.nutzer_gewichtung_quelle,"
        " nutzer_gewichtung_rad = EXCLUDED.nutzer_gewichtung_rad,"
        " nutzer_gewichtung_am = EXCLUDED.nutzer_gewichtung_am",
        (pair.character_id, pair.user_id, weight, source, Jsonb(dict(wheel)), now),
    )


# --- the CharacterGraph's reads (agents/turn_context.py), batched with its other reads ----


@dataclass(frozen=True, slots=True)
class ProfileLayers:
    """The five text layers of one row, and its `nutzer_gewichtung` as stored."""

    core: str | None = None
    adaptive: str | None = None
    relationship: str | None = None
    intentions: str | None = None
    emotions: str | None = None
    user_weight: Any = None


_LAYERS_SQL: Final = (
    f"SELECT {', '.join(LAYER_COLUMNS.values())}, nutzer_gewichtung FROM charakter_hash"
    " WHERE user_id = %s AND character_id = %s"
)


def layers_query(user_id: str, character_id: str) -> Query:
    """Row (user_id, character_id)'s layers and weight."""
    return _LAYERS_SQL, (user_id, character_id)


def layers_from_rows(rows: Sequence[Mapping[str, Any]]) -> ProfileLayers | None:
    """The `layers_query` row; None when the row does not exist."""
    if not rows:
        return None
    row = rows[0]
    return ProfileLayers(
        **{key: row[column] for key, column in LAYER_COLUMNS.items()},
        user_weight=row["nutzer_gewichtung"],
    )


@dataclass(frozen=True, slots=True)
class WheelRow:
    """The character's wheel toward the user and her initiative offset, as stored."""

    wheel: Any
    initiative_offset: Any


_WHEEL_SQL: Final = (
    "SELECT nutzer_gewichtung_rad, initiative_versatz FROM charakter_hash"
    " WHERE user_id = %s AND character_id = %s"
)


def wheel_query(pair: Pair) -> Query:
    """Row (character, user): the stance's wheel."""
    return _WHEEL_SQL, (pair.character_id, pair.user_id)


def wheel_from_rows(rows: Sequence[Mapping[str, Any]]) -> WheelRow | None:
    """The `wheel_query` row; None when the row does not exist."""
    if not rows:
        return None
    return WheelRow(
        wheel=rows[0]["nutzer_gewichtung_rad"], initiative_offset=rows[0]["initiative_versatz"]
    )
