"""The situation's objects that last (docs/behaviour/memory.md#situation-objects): the
situation node's door to `store/situation_objects.py`.

`remember` stores a computed turn's objects and values and binds every object not bound
yet to an entity of the pair — resolved by the same rules as the entity magnets of the
short-term memory (`store/entities.py`: the same normalised name, or a whole-word part of
exactly one known name; a new entity otherwise; an ambiguous name stays unbound). So an
object and the memories that name it share one entity id, and the memory anchor finds those
memories by the id, not by their wording. `stored` gives the values to offer when the 4 h
bubble is gone; `bound` the bindings of named objects on a turn that computed nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair
from novaberg.store import situation_objects
from novaberg.store.entities import resolve_entities
from novaberg.store.situation_objects import ObjectSeen, StoredObject

__all__ = ["ObjectSeen", "Remembered", "StoredObject", "bound", "remember", "stored"]


@dataclass(frozen=True, slots=True)
class Remembered:
    """The turn's objects as stored, each with its entity after binding; the values that
    are new or superseded ("objekt.eigenschaft"), the names bound this turn and the ones
    left unbound because they fit several entities."""

    objects: tuple[StoredObject, ...] = ()
    new_values: tuple[str, ...] = ()
    superseded: tuple[str, ...] = ()
    newly_bound: tuple[str, ...] = ()
    ambiguous: tuple[str, ...] = ()


async def remember(
    pool: AsyncConnectionPool, pair: Pair, turn_id: str, seen: Sequence[ObjectSeen]
) -> Remembered:
    """Store the turn's objects and bind the unbound ones (raises `psycopg.Error`)."""
    saved = await situation_objects.save_turn(pool, pair, turn_id, seen)
    bindings: dict[int, int] = {}
    ambiguous: list[str] = []
    for obj in saved.objects:
        if obj.entity_id is not None:
            continue
        resolution = await resolve_entities(pool, pair, [obj.name])
        if resolution.ids:
            bindings[obj.id] = resolution.ids[0]
        else:
            ambiguous.extend(resolution.ambiguous)
    await situation_objects.bind_entities(pool, pair, bindings)
    objects = tuple(
        StoredObject(
            id=obj.id,
            name=obj.name,
            entity_id=bindings.get(obj.id, obj.entity_id),
            entity_name=obj.entity_name,
            properties=obj.properties,
        )
        for obj in saved.objects
    )
    return Remembered(
        objects=objects,
        new_values=saved.new_values,
        superseded=saved.superseded,
        newly_bound=tuple(obj.name for obj in saved.objects if obj.id in bindings),
        ambiguous=tuple(ambiguous),
    )


async def stored(pool: AsyncConnectionPool, pair: Pair, limit: int) -> list[StoredObject]:
    """The pair's most recently seen objects with their current values (raises
    `psycopg.Error`)."""
    return await situation_objects.objects(pool, pair, limit=limit)


async def bound(pool: AsyncConnectionPool, pair: Pair, names: Sequence[str]) -> list[StoredObject]:
    """The stored objects of these names (with their entity, if bound)."""
    return await situation_objects.objects(pool, pair, names=names, limit=max(len(names), 1))
