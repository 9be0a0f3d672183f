"""The situation node's objects that last (Sachlage memory,
docs/behaviour/nodes.md#situation and docs/behaviour/memory.md#situation-objects).

The bubble `sachlage:{u}:{c}` lasts 4 h. What a computed turn understood about its objects
is also stored for good (`memory/situation_objects.py`): the objects, the turn's link to
each, their values (a new value supersedes the old one). Each object is bound to an entity
of the pair, so `objekt_entitaeten` — the entities of the *acute* objects — tells the memory
anchor which memories belong to them by id.

When the bubble is gone (expired, or never written for this pair), the situation's model
call is offered the stored values of the pair's most recent objects (`[GESPEICHERTE WERTE]`);
with the bubble there it holds those values already, and nothing is added to the prompt.

A database failure here never fails the turn: it is logged, and the turn goes on without
the stored values or the binding (named in the node's pipeline-log row).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

import psycopg

from novaberg.agents.deps import GraphDeps
from novaberg.memory.situation_objects import ObjectSeen, StoredObject, bound, remember, stored
from novaberg.pair import Pair

log = logging.getLogger(__name__)

OFFERED_OBJECTS: Final = 5
"""At most this many stored objects are offered (the bubble's own limit)."""

OFFERED_PROPERTIES: Final = 6


def objects_seen(situation: Mapping[str, Any], acute: Sequence[str]) -> list[ObjectSeen]:
    """The understanding's objects as the store takes them (English fields)."""
    reference = str(situation.get("objekt_bezug") or "").lower()
    acute_names = {name.lower() for name in acute}
    return [
        ObjectSeen(
            name=obj["name"],
            properties=dict(obj.get("eigenschaften") or {}),
            open=tuple(obj.get("offen") or ()),
            reference=obj["name"].lower() == reference,
            acute=obj["name"].lower() in acute_names,
        )
        for obj in situation.get("objekte") or []
    ]


def entity_channel(objects: Sequence[StoredObject], acute: Sequence[str]) -> list[dict[str, Any]]:
    """`objekt_entitaeten`: the bound entity of every acute object, in the acute order
    (an unbound acute object has no entry)."""
    by_name = {obj.name.lower(): obj for obj in objects}
    out: list[dict[str, Any]] = []
    for name in acute:
        obj = by_name.get(name.lower())
        if obj is not None and obj.entity_id is not None:
            out.append({"objekt": name, "entitaet_id": obj.entity_id})
    return out


def offered_text(objects: Sequence[StoredObject]) -> str:
    """Lines for `[GESPEICHERTE WERTE]`: "Objekt X: k=v, …"; "" without any value."""
    lines = []
    for obj in objects:
        values = list(obj.properties.items())[:OFFERED_PROPERTIES]
        if values:
            lines.append(f"Objekt {obj.name}: " + ", ".join(f"{k}={v}" for k, v in values))
    return "\n".join(lines)


async def offered_values(deps: GraphDeps, pair: Pair) -> tuple[str, dict[str, Any]]:
    """The stored values to offer the model (when the bubble is gone) and the log part."""
    try:
        objects = await stored(deps.pool, pair, OFFERED_OBJECTS)
    except psycopg.Error as exc:
        log.error("situation %s: stored objects unreadable: %s", pair, exc)
        return "", {"angeboten_ausfall": type(exc).__name__}
    text = offered_text(objects)
    return text, {"angeboten": [obj.name for obj in objects if obj.properties]}


async def persist_objects(
    deps: GraphDeps,
    pair: Pair,
    turn_id: str,
    situation: Mapping[str, Any],
    acute: Sequence[str],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Store a computed turn's objects and bind them; (`objekt_entitaeten`, log part)."""
    try:
        result = await remember(deps.pool, pair, turn_id, objects_seen(situation, acute))
    except psycopg.Error as exc:
        log.error("situation %s: objects of turn %s not stored: %s", pair, turn_id, exc)
        return [], {"gespeichert_ausfall": type(exc).__name__}
    return entity_channel(result.objects, acute), {
        "gespeichert": len(result.objects),
        "neue_werte": list(result.new_values),
        "abgeloest": list(result.superseded),
        "gebunden": list(result.newly_bound),
        **({"mehrdeutig": list(result.ambiguous)} if result.ambiguous else {}),
    }


async def bound_entities(
    deps: GraphDeps, pair: Pair, acute: Sequence[str]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """`objekt_entitaeten` from the stored bindings, on a turn that computed nothing
    (impulse, failed call); (channel, log part)."""
    if not acute:
        return [], {}
    try:
        objects = await bound(deps.pool, pair, acute)
    except psycopg.Error as exc:
        log.error("situation %s: bound entities unreadable: %s", pair, exc)
        return [], {"gebunden_ausfall": type(exc).__name__}
    channel = entity_channel(objects, acute)
    return channel, {"entitaeten": [e["objekt"] for e in channel]}
