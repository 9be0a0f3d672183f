"""The situation's objects in PostgreSQL: `sachlage_objekt`, `sachlage_objekt_turn`,
`sachlage_eigenschaft` (docs/behaviour/memory.md#situation-objects).

The bubble in Redis (`store/situation.py`) lasts 4 h; these rows last. A computed turn's
objects are saved in one transaction: the object rows (by normalised name), the turn's link
to each, and the property values — a new value supersedes the current one (kept as
history), the same value again changes nothing. Rows leave this module as dataclasses with
English fields; the German columns appear only in the SQL here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, cast

from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair
from novaberg.store.entities import normalise_name


@dataclass(frozen=True, slots=True)
class ObjectSeen:
    """One object as a turn understood it (input of `save_turn`)."""

    name: str
    properties: Mapping[str, str] = field(default_factory=dict)
    open: tuple[str, ...] = ()
    reference: bool = False
    acute: bool = False


@dataclass(frozen=True, slots=True)
class StoredObject:
    """An object row with its current property values and its bound entity (if any)."""

    id: int
    name: str
    entity_id: int | None = None
    entity_name: str = ""
    properties: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SavedTurn:
    """What `save_turn` wrote: the objects (bound entity as stored before this call), the
    values that are new, and the ones they superseded ("objekt.eigenschaft")."""

    objects: tuple[StoredObject, ...] = ()
    new_values: tuple[str, ...] = ()
    superseded: tuple[str, ...] = ()


_UPSERT_OBJECTS_SQL: Final = """
INSERT INTO sachlage_objekt (user_id, character_id, name, name_norm, zuletzt_turn_id)
SELECT %(u)s, %(c)s, n.name, n.name_norm, %(turn)s
FROM unnest(%(names)s::text[], %(norms)s::text[]) AS n(name, name_norm)
ON CONFLICT (user_id, character_id, name_norm) DO UPDATE
    SET name = EXCLUDED.name, zuletzt_am = now(), zuletzt_turn_id = EXCLUDED.zuletzt_turn_id
RETURNING id, name, name_norm, entitaet_id
"""

_LINK_TURN_SQL: Final = """
INSERT INTO sachlage_objekt_turn (objekt_id, turn_id, bezug, akut, offen)
SELECT o.id, %(turn)s, o.bezug, o.akut, ARRAY(SELECT jsonb_array_elements_text(o.offen))
FROM unnest(%(ids)s::bigint[], %(refs)s::boolean[], %(acute)s::boolean[], %(open)s::jsonb[])
    AS o(id, bezug, akut, offen)
ON CONFLICT (objekt_id, turn_id) DO UPDATE
    SET bezug = EXCLUDED.bezug, akut = EXCLUDED.akut, offen = EXCLUDED.offen
"""

_CHANGED: Final = """
WITH incoming AS (
    SELECT * FROM unnest(%(ids)s::bigint[], %(props)s::text[], %(values)s::text[])
        AS i(objekt_id, eigenschaft, wert)
), changed AS (
    SELECT i.* FROM incoming i
    WHERE NOT EXISTS (
        SELECT 1 FROM sachlage_eigenschaft e
        WHERE e.objekt_id = i.objekt_id AND e.eigenschaft = i.eigenschaft
          AND e.abgeloest_am IS NULL AND e.wert = i.wert
    )
)
"""
"""The incoming values that differ from the current one (or have none)."""

_SUPERSEDE_SQL: Final = (
    _CHANGED
    + """
UPDATE sachlage_eigenschaft e SET abgeloest_am = now(), abgeloest_von_turn = %(turn)s
FROM changed c
WHERE e.objekt_id = c.objekt_id AND e.eigenschaft = c.eigenschaft AND e.abgeloest_am IS NULL
RETURNING e.objekt_id, e.eigenschaft
"""
)
"""Step one: a changed value's current row becomes history."""

_INSERT_VALUES_SQL: Final = (
    _CHANGED
    + """
INSERT INTO sachlage_eigenschaft (objekt_id, eigenschaft, wert, turn_id)
SELECT c.objekt_id, c.eigenschaft, c.wert, %(turn)s FROM changed c
RETURNING objekt_id, eigenschaft
"""
)
"""Step two, same transaction: the changed values become current. (Two statements: within
one, the INSERT would still meet the superseded row in the unique index of current values.)
After step one the same `changed` set is found again — a superseded row no longer counts."""

_OBJECTS_SQL: Final = """
SELECT o.id, o.name, o.entitaet_id, COALESCE(en.name, '') AS entitaet_name,
       COALESCE(
           (SELECT jsonb_object_agg(e.eigenschaft, e.wert ORDER BY e.id)
              FROM sachlage_eigenschaft e
             WHERE e.objekt_id = o.id AND e.abgeloest_am IS NULL),
           '{}'::jsonb) AS werte
FROM sachlage_objekt o
LEFT JOIN entitaeten en ON en.id = o.entitaet_id
WHERE o.user_id = %(u)s AND o.character_id = %(c)s
  AND (%(norms)s::text[] IS NULL OR o.name_norm = ANY(%(norms)s::text[]))
ORDER BY o.zuletzt_am DESC, o.id DESC
LIMIT %(limit)s
"""

_BIND_SQL: Final = """
UPDATE sachlage_objekt o SET entitaet_id = b.entitaet_id
FROM unnest(%(ids)s::bigint[], %(entities)s::bigint[]) AS b(id, entitaet_id)
WHERE o.id = b.id AND o.user_id = %(u)s AND o.character_id = %(c)s AND o.entitaet_id IS NULL
"""


def property_name(name: str) -> str:
    """A property's stored name: trimmed, lower case ("Farbe " and "farbe" are one)."""
    return " ".join(str(name).split()).lower()


def _stored(row: Mapping[str, Any]) -> StoredObject:
    entity = row.get("entitaet_id")
    values = row.get("werte") or {}
    return StoredObject(
        id=int(row["id"]),
        name=str(row["name"]),
        entity_id=int(entity) if entity is not None else None,
        entity_name=str(row.get("entitaet_name") or ""),
        properties={str(k): str(v) for k, v in values.items()},
    )


def _unique(objects: Sequence[ObjectSeen]) -> list[tuple[str, ObjectSeen]]:
    """(normalised name, object) once per normalised name, first wins; nameless dropped."""
    seen: dict[str, ObjectSeen] = {}
    for obj in objects:
        norm = normalise_name(obj.name)
        if norm and norm not in seen:
            seen[norm] = obj
    return list(seen.items())


async def save_turn(
    pool: AsyncConnectionPool, pair: Pair, turn_id: str, objects: Sequence[ObjectSeen]
) -> SavedTurn:
    """Store the turn's objects, their link to `turn_id` and their values, in one
    transaction (see the module docstring)."""
    unique = _unique(objects)
    if not unique:
        return SavedTurn()
    async with pool.connection() as conn, conn.transaction():
        cur = conn.cursor(row_factory=dict_row)
        await cur.execute(
            _UPSERT_OBJECTS_SQL,
            {
                "u": pair.user_id,
                "c": pair.character_id,
                "turn": turn_id,
                "names": [obj.name for _, obj in unique],
                "norms": [norm for norm, _ in unique],
            },
        )
        rows = {str(r["name_norm"]): r for r in await cur.fetchall()}
        ids = [int(rows[norm]["id"]) for norm, _ in unique]
        await cur.execute(
            _LINK_TURN_SQL,
            {
                "turn": turn_id,
                "ids": ids,
                "refs": [obj.reference for _, obj in unique],
                "acute": [obj.acute for _, obj in unique],
                "open": [json.dumps(list(obj.open), ensure_ascii=False) for _, obj in unique],
            },
        )
        triples = [
            (object_id, property_name(prop), str(value))
            for object_id, (_, obj) in zip(ids, unique, strict=True)
            for prop, value in obj.properties.items()
            if property_name(prop) and str(value).strip()
        ]
        superseded: list[dict[str, Any]] = []
        inserted: list[dict[str, Any]] = []
        if triples:
            params = {
                "turn": turn_id,
                "ids": [t[0] for t in triples],
                "props": [t[1] for t in triples],
                "values": [t[2] for t in triples],
            }
            await cur.execute(_SUPERSEDE_SQL, params)
            superseded = cast(list[dict[str, Any]], await cur.fetchall())
            await cur.execute(_INSERT_VALUES_SQL, params)
            inserted = cast(list[dict[str, Any]], await cur.fetchall())
    names = {int(rows[norm]["id"]): obj.name for norm, obj in unique}
    stored = tuple(
        StoredObject(
            id=int(rows[norm]["id"]),
            name=obj.name,
            entity_id=(
                int(rows[norm]["entitaet_id"]) if rows[norm]["entitaet_id"] is not None else None
            ),
            properties=dict(obj.properties),
        )
        for norm, obj in unique
    )

    def labels(changes: list[dict[str, Any]]) -> tuple[str, ...]:
        return tuple(f"{names[int(c['objekt_id'])]}.{c['eigenschaft']}" for c in changes)

    return SavedTurn(objects=stored, new_values=labels(inserted), superseded=labels(superseded))


async def bind_entities(pool: AsyncConnectionPool, pair: Pair, bindings: Mapping[int, int]) -> None:
    """Bind objects (id → entity id) that are not bound yet; a bound one keeps its entity."""
    if not bindings:
        return
    async with pool.connection() as conn:
        await conn.execute(
            _BIND_SQL,
            {
                "u": pair.user_id,
                "c": pair.character_id,
                "ids": list(bindings),
                "entities": list(bindings.values()),
            },
        )


async def objects(
    pool: AsyncConnectionPool, pair: Pair, *, names: Sequence[str] | None = None, limit: int
) -> list[StoredObject]:
    """The pair's objects with their current values and bound entity, most recently seen
    first (only the ones named `names`, when given), at most `limit`."""
    norms = None if names is None else [n for n in map(normalise_name, names) if n]
    if norms == []:
        return []
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(
            _OBJECTS_SQL,
            {"u": pair.user_id, "c": pair.character_id, "norms": norms, "limit": limit},
        )
        return [_stored(row) for row in await cur.fetchall()]
