"""The `entitaeten` table: persons, places and things named in a pair's memories
(docs/behaviour/memory.md#entity-magnets).

A salience score names entities as raw strings (`entitaeten_roh`). Each is resolved to
an id of the pair: the same normalised name is the same entity; a name that is a whole
word part of exactly one known name (or the other way round: "Anna" and "Anna Berg") is
that entity; a name that fits several known ones is **ambiguous and skipped**; any other
name becomes a new entity.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

from psycopg_pool import AsyncConnectionPool

from novaberg.store.keys import Pair

NAME_MAX_CHARS: Final = 80
_WORD = re.compile(r"\w+", re.UNICODE)

_SELECT_SQL: Final = "SELECT id, name_norm FROM entitaeten WHERE user_id = %s AND character_id = %s"
_INSERT_SQL: Final = (
    "INSERT INTO entitaeten (user_id, character_id, name, name_norm) VALUES (%s, %s, %s, %s)"
    " ON CONFLICT (user_id, character_id, name_norm) DO UPDATE SET name_norm = EXCLUDED.name_norm"
    " RETURNING id"
)


def normalise_name(name: str) -> str:
    """Lower case, words only, single spaces ("  Dr. Anna-Berg " → "dr anna berg")."""
    return " ".join(_WORD.findall(str(name).lower()))[:NAME_MAX_CHARS]


def _contains_words(longer: str, shorter: str) -> bool:
    return f" {shorter} " in f" {longer} "


def match_entity(name_norm: str, known: Mapping[str, int]) -> int | str | None:
    """The id `name_norm` refers to among `known` (normalised name → id): an id, None
    (new entity) or the string "mehrdeutig" (several fit: skip it). Pure."""
    if name_norm in known:
        return known[name_norm]
    fits = {
        entity_id
        for other, entity_id in known.items()
        if _contains_words(other, name_norm) or _contains_words(name_norm, other)
    }
    if len(fits) == 1:
        return next(iter(fits))
    return "mehrdeutig" if fits else None


@dataclass
class Resolution:
    ids: list[int] = field(default_factory=list)
    created: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)


async def resolve_entities(
    pool: AsyncConnectionPool, pair: Pair, raw_names: Iterable[str]
) -> Resolution:
    """Ids for the raw names (new entities created, ambiguous ones skipped), in the
    order first named, without duplicates."""
    names: list[tuple[str, str]] = []
    for raw in raw_names:
        norm = normalise_name(raw)
        if norm and norm not in (n for _, n in names):
            names.append((" ".join(str(raw).split())[:NAME_MAX_CHARS], norm))
    result = Resolution()
    if not names:
        return result
    async with pool.connection() as conn:
        cur = await conn.execute(_SELECT_SQL, (pair.user_id, pair.character_id))
        rows = cast(list[dict[str, Any]], await cur.fetchall())
        known = {str(row["name_norm"]): int(row["id"]) for row in rows}
        for display, norm in names:
            found = match_entity(norm, known)
            if found == "mehrdeutig":
                result.ambiguous.append(display)
                continue
            if found is None:
                cur = await conn.execute(
                    _INSERT_SQL, (pair.user_id, pair.character_id, display, norm)
                )
                row = cast(dict[str, Any] | None, await cur.fetchone())
                assert row is not None  # INSERT … ON CONFLICT DO UPDATE always returns
                found = int(row["id"])
                known[norm] = found
                result.created.append(display)
            if int(found) not in result.ids:
                result.ids.append(int(found))
    return result


def ids_field(ids: Sequence[int]) -> str:
    """The KZG hash field form of entity ids ("1,2")."""
    return ",".join(str(i) for i in ids)


def ids_of_field(value: object) -> set[int]:
    """Entity ids from a KZG hash field ("1,2", "" or missing → set())."""
    found: set[int] = set()
    for part in str(value or "").split(","):
        part = part.strip()
        if part.isdigit():
            found.add(int(part))
    return found
