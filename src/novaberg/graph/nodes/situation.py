"""Situation node (Sachlage, docs/behaviour/nodes.md#situation): the running understanding
of the conversation. One structured model call on a user turn, none on an impulse.

The model gets the understanding as the last turn left it (`sachlage:{u}:{c}`, 4 h; read
with the turn context, stored by `memory/pair_state.py`) and writes it forward: the matter
(`gegenstand`), the presumed user goal (`nutzerziel`), the reference objects with known and
open properties, the object this utterance is about (`objekt_bezug`), what Nova offered
that is still open (`angebot`) and whether this utterance takes it up, and the open
questions. A form check (`clean_situation`) holds
every field to its shape and size, also for the stored bubble it loads.

Derived without a model:

- `objekt_urteil`: per *acute* object (the referenced one and any object named in the
  utterance) how many properties are still open — the distance to the user's
  short-term goal — and whether it is clear (`geklaert`) or open;
- on an impulse turn, `sachlage_bruecke`: the understanding as the triggering turn
  (`ausloeser_turn_id`) left it, from the per-turn record `sachlage_verlauf:{u}:{c}`,
  and whether the matter is still the same.

The objects of every computed turn, with their values, are also stored for good and bound
to an entity (`situation_memory.py`): `objekt_entitaeten` names the acute objects' entities
for the memory anchor, and when the bubble is gone the model is offered the stored values.

A failed or unreadable answer keeps the stored understanding (`stand` "ausfall"), never a
made-up one; a model that cannot be used (`ModelUnavailable`) ends the turn.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic import BaseModel, Field

from novaberg.agents.deps import GraphDeps
from novaberg.agents.stimulus import stimulus_is_own_thought, stimulus_text
from novaberg.config import Role
from novaberg.graph.nodes.situation_memory import bound_entities, offered_values, persist_objects
from novaberg.graph.state import ConversationState, turn_context
from novaberg.llm.errors import ModelError, ModelUnavailable
from novaberg.memory.pair_state import store_situation
from novaberg.memory.session_view import numbered_view
from novaberg.pair import Pair
from novaberg.prompts import render, user_message

log = logging.getLogger(__name__)

SITUATION_TEMPERATURE: Final = 0.1
MAX_OBJECTS: Final = 5
MAX_PROPERTIES: Final = 6
MAX_OPEN: Final = 5
TEXT_CHARS: Final = 200
NAME_CHARS: Final = 60
"""Form limits: the bubble travels in prompts of a model with a 2048-token context."""

STAND_NEW: Final = "neu"
STAND_KEPT: Final = "uebernommen"
STAND_FAILED: Final = "ausfall"
"""`sachlage["stand"]`: written forward this turn, carried over (impulse), or the call
failed and the stored one was kept."""

TRIGGER_FIELD: Final = "ausloeser_turn_id"


class SituationObject(BaseModel):
    name: str = ""
    eigenschaften: dict[str, Any] = Field(default_factory=dict)
    offen: list[Any] = Field(default_factory=list)


class SituationReading(BaseModel):
    """The model's answer (wire names)."""

    gegenstand: str = ""
    nutzerziel: str = ""
    objekte: list[SituationObject] = Field(default_factory=list)
    objekt_bezug: str = ""
    angebot: str = ""
    angebot_angenommen: bool = False
    offen: list[Any] = Field(default_factory=list)


# --- pure parts ------------------------------------------------------------------------------


def _text(value: Any, limit: int = TEXT_CHARS) -> str:
    if value is None or isinstance(value, (dict, list)):
        return ""
    return " ".join(str(value).split())[:limit]


def _texts(values: Any, limit: int) -> list[str]:
    if not isinstance(values, list):
        return []
    out: list[str] = []
    for value in values:
        text = _text(value)
        if text and text not in out:
            out.append(text)
    return out[:limit]


def clean_object(raw: Any) -> dict[str, Any] | None:
    """One object held to its form; None without a name."""
    if not isinstance(raw, Mapping):
        return None
    name = _text(raw.get("name"), NAME_CHARS)
    if not name:
        return None
    properties: dict[str, str] = {}
    raw_properties = raw.get("eigenschaften")
    if isinstance(raw_properties, Mapping):
        for key, value in raw_properties.items():
            prop, text = _text(key, NAME_CHARS), _text(value)
            if prop and text and len(properties) < MAX_PROPERTIES:
                properties[prop] = text
    open_props = [p for p in _texts(raw.get("offen"), MAX_PROPERTIES) if p not in properties]
    return {"name": name, "eigenschaften": properties, "offen": open_props}


def clean_situation(raw: Any) -> dict[str, Any]:
    """The understanding held to its form (also for a loaded bubble): every key present,
    strings trimmed and capped, at most five objects with unique names."""
    data = raw if isinstance(raw, Mapping) else {}
    objects: list[dict[str, Any]] = []
    seen: set[str] = set()
    raw_objects = data.get("objekte")
    for item in raw_objects if isinstance(raw_objects, list) else []:
        cleaned = clean_object(item)
        if cleaned is None or cleaned["name"].lower() in seen:
            continue
        seen.add(cleaned["name"].lower())
        objects.append(cleaned)
        if len(objects) == MAX_OBJECTS:
            break
    return {
        "gegenstand": _text(data.get("gegenstand")),
        "nutzerziel": _text(data.get("nutzerziel")),
        "objekte": objects,
        "objekt_bezug": _text(data.get("objekt_bezug"), NAME_CHARS),
        "angebot": _text(data.get("angebot")),
        "angebot_angenommen": data.get("angebot_angenommen") is True,
        "offen": _texts(data.get("offen"), MAX_OPEN),
    }


def acute_objects(situation: Mapping[str, Any], utterance: str) -> list[dict[str, Any]]:
    """The referenced object and every object named in the utterance (in object order)."""
    reference = str(situation.get("objekt_bezug") or "").lower()
    lowered = utterance.lower()
    return [
        obj
        for obj in situation.get("objekte") or []
        if obj["name"].lower() == reference or obj["name"].lower() in lowered
    ]


def object_judgements(acute: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """objekt_urteil: per acute object the distance (open properties) to the goal."""
    return [
        {
            "objekt": obj["name"],
            "bekannt": len(obj.get("eigenschaften") or {}),
            "strecke": len(obj.get("offen") or []),
            "status": "offen" if obj.get("offen") else "geklaert",
        }
        for obj in acute
    ]


def bridge(
    trigger_turn_id: str | None, then: Mapping[str, Any] | None, now: Mapping[str, Any]
) -> dict[str, Any]:
    """sachlage_bruecke of an impulse: the understanding at the triggering turn."""
    if not trigger_turn_id or then is None:
        return {
            TRIGGER_FIELD: trigger_turn_id,
            "gefunden": False,
            "gegenstand_damals": "",
            "objekte_damals": [],
            "gleicher_gegenstand": None,
        }
    then_topic = str(then.get("gegenstand") or "")
    now_topic = str(now.get("gegenstand") or "")
    return {
        TRIGGER_FIELD: trigger_turn_id,
        "gefunden": True,
        "gegenstand_damals": then_topic,
        "objekte_damals": [obj["name"] for obj in then.get("objekte") or []],
        "gleicher_gegenstand": bool(then_topic) and then_topic.lower() == now_topic.lower(),
    }


def situation_text(situation: Mapping[str, Any] | None) -> str:
    """Compact lines for a prompt; "" when nothing is understood yet."""
    if not situation:
        return ""
    lines = []
    if situation.get("gegenstand"):
        lines.append(f"Gegenstand: {situation['gegenstand']}")
    if situation.get("nutzerziel"):
        lines.append(f"Ziel des Nutzers: {situation['nutzerziel']}")
    for obj in situation.get("objekte") or []:
        known = ", ".join(f"{k}={v}" for k, v in (obj.get("eigenschaften") or {}).items())
        open_props = ", ".join(obj.get("offen") or [])
        lines.append(
            f"Objekt {obj['name']}: {known or '-'}"
            + (f"; offen: {open_props}" if open_props else "")
        )
    if situation.get("angebot"):
        lines.append(f"Angebot: {situation['angebot']}")
    if situation.get("offen"):
        lines.append("Offen: " + "; ".join(situation["offen"]))
    return "\n".join(lines)


# --- node ------------------------------------------------------------------------------------


def _decode(raw: Any) -> dict[str, Any] | None:
    if not raw:
        return None
    try:
        return clean_situation(json.loads(raw))
    except (TypeError, ValueError) as exc:
        log.error("situation: stored bubble unreadable (%s); starting empty", exc)
        return None


def _channels(situation: dict[str, Any], utterance: str) -> dict[str, Any]:
    acute = acute_objects(situation, utterance)
    return {
        "situation": situation,
        "object_judgement": object_judgements(acute),
        "object_reference": situation.get("objekt_bezug") or "",
    }


def _acute_names(channels: Mapping[str, Any]) -> list[str]:
    return [j["objekt"] for j in channels["object_judgement"]]


async def situation_node(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Write the situation channels (see the module docstring)."""
    pair = Pair(state.get("user_id", ""), state.get("character_id", ""))
    turn_id = state.get("turn_id") or ""
    impulse = stimulus_is_own_thought(state)
    payload = state.get("event_payload") or {}
    trigger = payload.get(TRIGGER_FIELD) if impulse else None
    trigger = str(trigger) if trigger else None
    read = turn_context(state).situation  # the trigger db_access read is this payload's
    stored = _decode(read.current)
    then = _decode(read.at_trigger) if trigger else None
    previous = stored or clean_situation({})
    utterance = stimulus_text(state)

    if impulse:
        kept = {**previous, "stand": STAND_KEPT, "turn_id": turn_id}
        link = bridge(trigger, then, previous)
        channels = _channels(kept, utterance)
        entities, entity_log = await bound_entities(deps, pair, _acute_names(channels))
        return {
            **channels,
            "situation_bridge": link,
            "object_entities": entities,
            "_log": {"stand": STAND_KEPT, "bruecke": link["gefunden"], **entity_log},
        }

    offered, offered_log = await offered_values(deps, pair) if stored is None else ("", {})
    prompt = render(
        "situation",
        stand=json.dumps(stored, ensure_ascii=False) if stored else "",
        gespeichert=offered,
        verlauf=numbered_view(list(state.get("session_turns") or state.get("raw_turns") or [])),
        reiz=utterance,
    )
    try:
        reading = await deps.model.structured(
            Role.ANALYSIS, user_message(prompt), SituationReading, temperature=SITUATION_TEMPERATURE
        )
    except ModelUnavailable:
        raise  # the model cannot be used: the turn fails (events.outcomes)
    except ModelError as exc:
        reason = f"{type(exc).__name__}: {exc}"[:300]
        log.warning("situation: unreadable (%s); stored understanding kept", reason)
        kept = {**previous, "stand": STAND_FAILED, "turn_id": turn_id}
        channels = _channels(kept, utterance)
        entities, entity_log = await bound_entities(deps, pair, _acute_names(channels))
        return {
            **channels,
            "object_entities": entities,
            "_log": {"stand": STAND_FAILED, "ausfall": reason, **offered_log, **entity_log},
        }

    current = clean_situation(reading.model_dump())
    written = {**current, "stand": STAND_NEW, "turn_id": turn_id}
    channels = _channels(written, utterance)
    acute = _acute_names(channels)
    # the bubble (Redis) and the lasting objects (PostgreSQL) are independent writes
    _, (entities, objects_log) = await asyncio.gather(
        store_situation(deps.redis, pair, turn_id, current),
        persist_objects(deps, pair, turn_id, current, acute),
    )
    return {
        **channels,
        "object_entities": entities,
        "_log": {
            "stand": STAND_NEW,
            "objekte": [obj["name"] for obj in current["objekte"]],
            "bezug": current["objekt_bezug"],
            "akut": acute,
            "objekt_entitaeten": entities,
            **offered_log,
            **objects_log,
        },
    }
