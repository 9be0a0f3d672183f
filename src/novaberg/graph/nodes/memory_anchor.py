"""Memory anchor node (Erinnerungsanker, docs/behaviour/nodes.md#memory-anchor). No model.

Ties the turn to what memory knows about the things it is about. For every *acute*
object the situation node bound to an entity (`objekt_entitaeten`), it gathers

- the object's known properties from the running understanding (the facts of this
  conversation), and
- the pair's active long-term nodes of that entity (their `entitaet_ids` hold it, whatever
  words they use), strongest `gewicht_decay` first,

and puts them as a group "Fakten zu <Name>" **in front of** the turn's memory entries,
appends up to three long-term memories the spreading read had not found to
`lzg_resonanz["erinnerungen"]`, and renders `memory_context` and
`memory_context_verfasser` again. Without an acute object, or with nothing new, every
channel stays as the reducer left it; so does an acute object without a bound entity.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

import psycopg

from novaberg.agents.deps import GraphDeps
from novaberg.graph.nodes.reducer import character_display_name, render_contexts
from novaberg.graph.state import ConversationState
from novaberg.memory.named_nodes import NamedNode, nodes_of_entities
from novaberg.pair import Pair

log = logging.getLogger(__name__)

NEW_MEMORIES_MAX: Final = 3
"""At most this many long-term memories are appended to lzg_resonanz."""

NODES_PER_OBJECT: Final = 3
ANCHOR_WEIGHT: Final = 1.0
ANCHOR_SOURCE: Final = "anker"


def fact_lines(obj: Mapping[str, Any]) -> list[str]:
    """The object's known properties as "name: eigenschaft = wert" lines."""
    return [
        f"{obj['name']}: {key} = {value}" for key, value in (obj.get("eigenschaften") or {}).items()
    ]


def anchor_entries(
    groups: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """ContextEntry dicts of the groups, in group order (facts first, then memories)."""
    entries: list[dict[str, Any]] = []
    for group in groups:
        source = f"Fakten zu {group['name']}"
        for line in [*group["fakten"], *(m["inhalt"] for m in group["erinnerungen"])]:
            entries.append(
                {
                    "quelle": source,
                    "subtyp": ANCHOR_SOURCE,
                    "inhalt": line,
                    "gewicht": ANCHOR_WEIGHT,
                    "meta": {},
                }
            )
    return entries


def new_memories(
    found: Sequence[NamedNode], known_ids: set[int], limit: int = NEW_MEMORIES_MAX
) -> list[dict[str, Any]]:
    """Found nodes not already in the resonance, as lzg_resonanz memories (≤ limit; the
    resonance channel's wire fields)."""
    out: list[dict[str, Any]] = []
    for node in found:
        if node.id in known_ids or len(out) == limit:
            continue
        known_ids.add(node.id)
        out.append(
            {
                "knoten_id": node.id,
                "inhalt": node.text,
                "dimension": node.dimension,
                "themen": list(node.topics),
                "emotion": node.emotion,
                "gewicht_decay": node.decayed_weight,
                "schale": 0,
                "sortier_gewicht": node.decayed_weight,
                "pfad": [],
                "erstellt_am": None,
                "beobachter": node.observer,
                "cosine": None,
                "anker": True,
            }
        )
    return out


async def memory_anchor(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Put the acute objects' facts in front of memory (see the module docstring)."""
    situation = state.get("situation") or {}
    objects = {obj["name"]: obj for obj in situation.get("objekte") or []}
    bound = [b for b in state.get("object_entities") or [] if b.get("objekt") in objects]
    if not bound:
        acute = len(state.get("object_judgement") or [])
        return {"_log": {"akut": acute, "gebunden": 0}}
    pair = Pair(state.get("user_id", ""), state.get("character_id", ""))
    resonance = dict(state.get("long_term_resonance") or {})
    memories = list(resonance.get("erinnerungen") or [])
    known_ids = {int(m["knoten_id"]) for m in memories if m.get("knoten_id") is not None}
    entity_ids = [int(b["entitaet_id"]) for b in bound]
    failures: list[str] = []
    try:
        found = await nodes_of_entities(deps.pool, pair, entity_ids, NODES_PER_OBJECT)
    except psycopg.Error as exc:
        log.error("memory_anchor: long-term read for entities %s failed: %s", entity_ids, exc)
        failures = [b["objekt"] for b in bound]
        found = {}
    appended: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    for binding in bound:
        obj = objects[binding["objekt"]]
        fresh = new_memories(
            found.get(int(binding["entitaet_id"]), []),
            known_ids,
            NEW_MEMORIES_MAX - len(appended),
        )
        appended.extend(fresh)
        facts = fact_lines(obj)
        if facts or fresh:
            groups.append({"name": obj["name"], "fakten": facts, "erinnerungen": fresh})
    summary = {
        "akut": len(state.get("object_judgement") or []),
        "entitaeten": {b["objekt"]: int(b["entitaet_id"]) for b in bound},
        "ausfall": failures,
    }
    if not groups:
        return {"_log": {**summary, "neu": 0}}
    entries = [*anchor_entries(groups), *(state.get("memory_entries") or [])]
    name = character_display_name(state.get("character_id", ""))
    third, composer = render_contexts(entries, name)
    update: dict[str, Any] = {
        "memory_entries": entries,
        "memory_context": third,
        "memory_context_composer": composer,
        "_log": {**summary, "gruppen": [g["name"] for g in groups], "neu": len(appended)},
    }
    if appended:
        resonance["erinnerungen"] = [*memories, *appended]
        update["long_term_resonance"] = resonance
    return update
