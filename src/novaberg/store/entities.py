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

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair

NAME_MAX_CHARS: Final = 80
_WORD = re.compile(r"\w+", re.UNICODE)

_SELECT_SQL: Final = "SELECT id, name_norm FROM entitaeten WHERE user_id = %s AND character_id = %s"
_INSERT_SQL: Final = (
    "INSERT INTO entitaeten (user_id, character_id, name, name_norm) VALUES (%s, %s, %s, %s)"
    " ON CONFLICT (user_id, character_id, name_norm) DO UPDATE SET name_norm = EXCLUDED.name_norm"
    " RETURNING id"
)
_RESOLVE_SQL: Final = """
WITH known AS (
    SELECT id, name_norm FROM entitaeten WHERE user_id = %(u)s AND character_id = %(c)s
), created AS (
    INSERT INTO entitaeten (user_id, character_id, name, name_norm)
    SELECT %(u)s, %(c)s, n.name, n.name_norm
    FROM unnest(%(names)s::text[], %(norms)s::text[]) WITH ORDINALITY AS n(name, name_norm, nr)
    WHERE NOT EXISTS (
        SELECT 1 FROM known k
        WHERE strpos(' ' || k.name_norm || ' ', ' ' || n.name_norm || ' ') > 0
           OR strpos(' ' || n.name_norm || ' ', ' ' || k.name_norm || ' ') > 0
    )
    ORDER BY n.nr
    ON CONFLICT (user_id, character_id, name_norm) DO UPDATE SET name_norm = EXCLUDED.name_norm
    RETURNING id, name_norm
)
SELECT id, name_norm, FALSE AS neu FROM known
UNION ALL
SELECT id, name_norm, TRUE AS neu FROM created
"""
"""The pair's entities and, created in the order named, the names (normalised: `norms`)
that none of them fits as a whole-word part either way (`match_entity` gives None) —
with their ids and `neu`. Every part of one statement sees the table as it was before
it, so `known` holds none of the rows it creates."""


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


def _unrelated(norms: Sequence[str]) -> bool:
    """Whether no name of the call fits another: then none of them is resolved by one
    created before it in the same call, and all can be resolved at once."""
    return not any(
        _contains_words(a, b) or _contains_words(b, a)
        for i, a in enumerate(norms)
        for b in norms[i + 1 :]
    )


async def resolve_entities(
    pool: AsyncConnectionPool, pair: Pair, raw_names: Iterable[str]
) -> Resolution:
    """Ids for the raw names (new entities created, ambiguous ones skipped), in the
    order first named, without duplicates.

    One statement (`_RESOLVE_SQL`) when no name of the call fits another — the usual
    case; otherwise the names are matched one after the other, each seeing the ones
    created before it ("Anna Berg", then "Anna")."""
    names: list[tuple[str, str]] = []
    for raw in raw_names:
        norm = normalise_name(raw)
        if norm and norm not in (n for _, n in names):
            names.append((" ".join(str(raw).split())[:NAME_MAX_CHARS], norm))
    if not names:
        return Resolution()
    async with pool.connection() as conn:
        if _unrelated([norm for _, norm in names]):
            return await _resolve_at_once(conn, pair, names)
        return await _resolve_in_order(conn, pair, names)


async def _resolve_at_once(
    conn: AsyncConnection[Any], pair: Pair, names: Sequence[tuple[str, str]]
) -> Resolution:
    """Read the pair's entities and create the names none of them fits, in one
    statement; then match as `_resolve_in_order` would (no name fits another, so the
    ones created cannot change another's match)."""
    cur = await conn.execute(
        _RESOLVE_SQL,
        {
            "u": pair.user_id,
            "c": pair.character_id,
            "names": [display for display, _ in names],
            "norms": [norm for _, norm in names],
        },
    )
    rows = cast(list[dict[str, Any]], await cur.fetchall())
    known = {str(row["name_norm"]): int(row["id"]) for row in rows}
    created = {str(row["name_norm"]) for row in rows if row["neu"]}
    result = Resolution()
    for display, norm in names:
        found = match_entity(norm, known)
        if found == "mehrdeutig":
            result.ambiguous.append(display)
            continue
        assert found is not None  # every name no known one fitted was created
        if norm in created:
            result.created.append(display)
        if int(found) not in result.ids:
            result.ids.append(int(found))
    return result


async def _resolve_in_order(
    conn: AsyncConnection[Any], pair: Pair, names: Sequence[tuple[str, str]]
) -> Resolution:
    """Read the pair's entities, then match and create the names one after the other."""
    result = Resolution()
    cur = await conn.execute(_SELECT_SQL, (pair.user_id, pair.character_id))
    rows = cast(list[dict[str, Any]], await cur.fetchall())
    known = {str(row["name_norm"]): int(row["id"]) for row in rows}
    for display, norm in names:
        found = match_entity(norm, known)
        if found == "mehrdeutig":
            result.ambiguous.append(display)
            continue
        if found is None:
            cur = await conn.execute(_INSERT_SQL, (pair.user_id, pair.character_id, display, norm))
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
