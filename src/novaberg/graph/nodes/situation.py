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
  and whether the matter is still the same. When the impulse names no turn or its entry
  expired, the person's archived utterance most like the thought is taken instead and
  the bridge says so (`gefunden_durch` "aehnlichkeit", memory/trigger_turn.py); the
  composer says the impulse in that context (`[SACHLAGE-BRUECKE]`).

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
from dataclasses import replace
from datetime import datetime
from typing import Any, Final
from zoneinfo import ZoneInfo

from pydantic import BaseModel, Field, JsonValue

from novaberg.agents.deps import GraphDeps
from novaberg.agents.stimulus import stimulus_is_own_thought, stimulus_text
from novaberg.config import Role
from novaberg.graph.nodes.situation_memory import bound_entities, offered_values, persist_objects
from novaberg.graph.state import ConversationState, turn_context
from novaberg.graph.turn_head import head_of, with_head
from novaberg.llm.base import Message
from novaberg.llm.errors import ModelError, ModelUnavailable
from novaberg.memory.pair_state import store_situation
from novaberg.memory.trigger_turn import SimilarTurn, similar_trigger_turn
from novaberg.pair import Pair
from novaberg.prompts import render
from novaberg.wire import FIELD_SITUATION_READING, FIELD_TRIGGER_TURN_ID

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

TRIGGER_FIELD: Final = FIELD_TRIGGER_TURN_ID
FOUND_BY_ID: Final = "ausloeser_turn_id"
FOUND_BY_SIMILARITY: Final = "aehnlichkeit"
"""`gefunden_durch` of a bridge: the id the impulse named, or the archive's vector search."""

READING_KEY: Final = "lesung"
READING_FAILED: Final = "ausfall"
"""Keys of Path 1's `sachlage_lesung`: the form-checked reading, or why it failed."""
SOURCE_PATH1: Final = "pfad1"
SOURCE_OWN_CALL: Final = "eigener_aufruf"
"""`quelle` in the node's row: Path 1's reading, or this node's own call."""


def _advertised_text(limit: int) -> Any:
    return Field(default="", json_schema_extra={"maxLength": limit})


def _advertised_texts(items: int) -> Any:
    """A list of short texts: what the node keeps of `offen` (`_texts`)."""
    text: dict[str, JsonValue] = {"type": "string", "maxLength": TEXT_CHARS}
    return Field(default_factory=list, json_schema_extra={"items": text, "maxItems": items})


# One object of the reading. The schema advertises the form limits to constrained decoding
# (a small local model otherwise writes nested values and long lists until its token budget
# ends); the classes do not enforce them: another backend's longer answer is clipped by
# `clean_object`, never rejected. (Comments, not docstrings: a docstring would travel in
# the schema of every call.)
class SituationObject(BaseModel):
    name: str = _advertised_text(NAME_CHARS)
    eigenschaften: dict[str, Any] = Field(
        default_factory=dict,
        json_schema_extra={"additionalProperties": {"type": "string", "maxLength": TEXT_CHARS}},
    )
    offen: list[Any] = _advertised_texts(MAX_PROPERTIES)


# The model's answer (wire names); limits advertised as for `SituationObject`.
class SituationReading(BaseModel):
    gegenstand: str = _advertised_text(TEXT_CHARS)
    nutzerziel: str = _advertised_text(TEXT_CHARS)
    objekte: list[SituationObject] = Field(
        default_factory=list, json_schema_extra={"maxItems": MAX_OBJECTS}
    )
    objekt_bezug: str = _advertised_text(NAME_CHARS)
    angebot: str = _advertised_text(TEXT_CHARS)
    angebot_angenommen: bool = False
    offen: list[Any] = _advertised_texts(MAX_OPEN)


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
    """sachlage_bruecke of an impulse: the understanding at the triggering turn
    (`gefunden_durch` "ausloeser_turn_id"), or not found (then the node looks by similarity,
    `similar_bridge`)."""
    if not trigger_turn_id or then is None:
        return {
            TRIGGER_FIELD: trigger_turn_id,
            "gefunden": False,
            "gefunden_durch": None,
            "gegenstand_damals": "",
            "objekte_damals": [],
            "gleicher_gegenstand": None,
        }
    then_topic = str(then.get("gegenstand") or "")
    now_topic = str(now.get("gegenstand") or "")
    return {
        TRIGGER_FIELD: trigger_turn_id,
        "gefunden": True,
        "gefunden_durch": FOUND_BY_ID,
        "gegenstand_damals": then_topic,
        "objekte_damals": [obj["name"] for obj in then.get("objekte") or []],
        "gleicher_gegenstand": bool(then_topic) and then_topic.lower() == now_topic.lower(),
    }


def similar_bridge(unfound: Mapping[str, Any], turn: SimilarTurn | None) -> dict[str, Any]:
    """The bridge to the archived utterance most like the impulse (`gefunden_durch`
    "aehnlichkeit"), keeping the id the event named (`gemeldete_ausloeser_turn_id`, null
    when it named none); unchanged when nothing resembled it enough."""
    if turn is None:
        return dict(unfound)
    return {
        **unfound,
        TRIGGER_FIELD: turn.turn_id,
        "gemeldete_ausloeser_turn_id": unfound.get(TRIGGER_FIELD),
        "gefunden": True,
        "gefunden_durch": FOUND_BY_SIMILARITY,
        "aehnlichkeit": round(turn.cosine, 3),
        "ausloeser_text": _text(turn.text),
        "ausloeser_zeit": turn.time.isoformat() if turn.time else None,
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


async def _bridge_by_similarity(
    deps: GraphDeps, pair: Pair, unfound: dict[str, Any], thought: str, turn_id: str
) -> dict[str, Any]:
    """`similar_bridge` over the archive search; a failed search is named in the bridge
    (`suche_ausfall`), never taken for "nothing similar"."""
    zone = ZoneInfo(deps.settings.timezone)
    try:
        found = await similar_trigger_turn(
            deps.redis, deps.pool, deps.model, pair, thought,
            now=datetime.fromtimestamp(deps.clock(), zone), tz=zone, exclude_turn=turn_id or None,
        )  # fmt: skip
    except Exception as exc:  # the bridge is context, never worth the turn
        log.exception("situation: the trigger search failed; no bridge")
        return {**unfound, "suche_ausfall": f"{type(exc).__name__}: {exc}"[:300]}
    if found is not None and found.time is not None:  # said in the person's local time
        found = replace(found, time=found.time.astimezone(zone))
    return similar_bridge(unfound, found)


async def read_situation(
    deps: GraphDeps,
    stored: Mapping[str, Any] | None,
    head: Message,
    offered: str = "",
) -> tuple[dict[str, Any] | None, str | None]:
    """The model's reading of the situation, form-checked, or (None, why it failed). The one
    call of the situation, wherever it runs (Path 1's `situation_reader`, or this node when
    Path 1 left no reading); `offered` is the stored values of the pair's objects, given
    when the bubble is gone (situation_memory.py); `head` is the turn's head (turn_head.py:
    the conversation and the utterance). A model that cannot be used raises
    `ModelUnavailable`."""
    prompt = render(
        "situation",
        stand=json.dumps(stored, ensure_ascii=False) if stored else "",
        gespeichert=offered,
    )
    try:
        reading = await deps.model.structured(
            Role.ANALYSIS,
            with_head(head, prompt),
            SituationReading,
            temperature=SITUATION_TEMPERATURE,
        )
    except ModelUnavailable:
        raise  # the model cannot be used: the turn fails (events.outcomes)
    except ModelError as exc:
        return None, f"{type(exc).__name__}: {exc}"[:300]
    return clean_situation(reading.model_dump()), None


async def _reading(
    state: ConversationState,
    deps: GraphDeps,
    pair: Pair,
    stored: dict[str, Any] | None,
    utterance: str,
) -> tuple[dict[str, Any] | None, str | None, str, dict[str, Any]]:
    """(reading, failure, where it came from, the offered values' log part): Path 1's, when
    its event carries one, else this node's own call (Path 1 failed before it, or the run
    had no Path 1)."""
    handed = (state.get("event_payload") or {}).get(FIELD_SITUATION_READING)
    if isinstance(handed, Mapping):
        if isinstance(handed.get(READING_KEY), Mapping):
            return clean_situation(handed[READING_KEY]), None, SOURCE_PATH1, {}
        return None, str(handed.get(READING_FAILED) or "leer")[:300], SOURCE_PATH1, {}
    offered, offered_log = await offered_values(deps, pair) if stored is None else ("", {})
    current, failure = await read_situation(deps, stored, head_of(state, deps), offered)
    return current, failure, SOURCE_OWN_CALL, offered_log


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
        if not link["gefunden"]:  # no id, or its entry expired: look by meaning
            link = await _bridge_by_similarity(deps, pair, link, utterance, turn_id)
        channels = _channels(kept, utterance)
        entities, entity_log = await bound_entities(deps, pair, _acute_names(channels))
        return {
            **channels,
            "situation_bridge": link,
            "object_entities": entities,
            "_log": {
                "stand": STAND_KEPT,
                "bruecke": link["gefunden"],
                "bruecke_durch": link.get("gefunden_durch"),
                TRIGGER_FIELD: link.get(TRIGGER_FIELD),
                **({"suche_ausfall": link["suche_ausfall"]} if link.get("suche_ausfall") else {}),
                **entity_log,
            },
        }

    current, failure, source, offered_log = await _reading(state, deps, pair, stored, utterance)
    if current is None:
        log.warning("situation: unreadable (%s); stored understanding kept", failure)
        kept = {**previous, "stand": STAND_FAILED, "turn_id": turn_id}
        channels = _channels(kept, utterance)
        entities, entity_log = await bound_entities(deps, pair, _acute_names(channels))
        return {
            **channels,
            "object_entities": entities,
            "_log": {
                "stand": STAND_FAILED,
                "ausfall": failure,
                "quelle": source,
                **offered_log,
                **entity_log,
            },
        }

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
            "quelle": source,
            "objekte": [obj["name"] for obj in current["objekte"]],
            "bezug": current["objekt_bezug"],
            "akut": acute,
            "objekt_entitaeten": entities,
            **offered_log,
            **objects_log,
        },
    }
