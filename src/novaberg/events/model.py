"""Events, queue entries and WebSocket messages at the boundary
(docs/behaviour/events.md#event-model).

The wire keeps its German names; Python attributes are English and
mapped by alias. Everything that crosses Redis or the WebSocket is built or
read through these models, so a malformed payload is rejected (and logged by
the caller) at the border instead of travelling on as a plausible default.
"""

from __future__ import annotations

import os
import time
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from novaberg.wire import (
    COMMITMENTS,
    FIELD_COMMITMENT,
    FIELD_INTENT,
    FIELD_ORIGIN,
    FIELD_OWN_THOUGHT,
    FIELD_THINKER_RETRY,
    FIELD_THOUGHT_AROUSAL,
    FIELD_TRIGGER_TURN_ID,
    INTENT_FOLLOW_UP,
    KIND_CONTINUE,
    KIND_MESSAGE,
    MSG_FAILED,
    MSG_RESPONSE,
    MSG_STAGE,
    MSG_UTTERANCE,
    ORIGIN_OWN_THOUGHT,
    SOURCE_CHARACTER,
    SOURCE_USER,
    EventKind,
    EventSource,
)

# --- constants (one place, each naming its source) ------------------------------------

INTAKE_WINDOW_SECONDS = 30.0
"""EINGANG_FENSTER: max gap to the previous utterance inside one block
(docs/behaviour/events.md#block)."""

MAX_SELF_TRIGGERS = 3
"""Loop guard: a run with trigger_count 3 may not create another event
(docs/behaviour/events.md#self-trigger)."""

MAX_PROMPT_BYTES = 16 * 1024
"""Largest accepted utterance, UTF-8 encoded (docs/behaviour/events.md#intake)."""

MAX_SUPERSEDES = 3
"""Runs in a row that may be abandoned for newer utterances. A user who keeps writing
while a turn runs still gets an answer — at the latest from the run after this many —
instead of every run being given up for the next message (a real model takes minutes)."""

Source = EventSource


SUPERSEDED_STAGE: Final = "superseded"
"""`character_stage` node of a run abandoned because the user wrote on before its answer
left (events/event_consumer.py); its ids are answered by the next turn."""

STAGE_LABELS: dict[str, str] = {
    # HumanGraph
    "perception": "nimmt wahr",
    "situation_reader": "versteht die Lage",
    "enricher": "liest mit",
    "ei_calc": "fühlt nach",
    "session_turn": "hat gehört",
    "salience": "gewichtet",
    "dispatcher": "merkt sich",
    # CharacterGraph
    "db_access": "erinnert sich",
    "emotional_gravitation": "spürt nach",
    "reducer": "sortiert",
    "situation_node": "ordnet die Lage",
    "memory_anchor": "knüpft an",
    "landscape": "überblickt das Gespräch",
    "router": "überlegt",
    "appointments": "schaut in den Kalender",
    "planner": "plant",
    "agent_dispatch": "erledigt",
    "conversation_vector": "sucht die Richtung",
    "stance_space": "findet Haltung",
    "composer": "sammelt Inhalt",
    "responder": "schreibt",
    "thinker": "prüft",
    "tribunal": "wägt ab",
    "evaluate": "entscheidet",
    "corrector": "korrigiert",
    "perception_assistant": "liest nach",
    "ei_calc_persist": "hält fest",
    "imprint": "prägt sich ein",
    "uptake": "greift auf",
    SUPERSEDED_STAGE: "liest weiter",
}
"""Short words for the live stage line of the chat page; unknown nodes show their name."""


def stage_label(node: str) -> str:
    return STAGE_LABELS.get(node, node.replace("_", " "))


def new_id() -> str:
    """128 random bits as 32 hex digits. Not `uuid4().hex`: building the UUID object costs
    several times more, on the intake's hot path, and nothing parses an id."""
    return os.urandom(16).hex()


class EventRejected(ValueError):
    """An event (or payload) that violates the payload rules; never repaired."""


# --- prompt queue entry ---------------------------------------------------------------


class QueuedUtterance(BaseModel):
    """One accepted utterance in `prompt_queue:{u}:{c}`."""

    model_config = ConfigDict(populate_by_name=True, frozen=True)

    message_id: str = Field(alias="nachrichten_id")
    text: str = Field(alias="prompt")
    received_at: float = Field(alias="empfangen_am")
    client_id: str | None = None

    def wire(self) -> str:
        return self.model_dump_json(by_alias=True)


# --- payloads ---------------------------------------------------------------------------


def _check_arousal(value: Any) -> float | None:
    """`gedanke_arousal`: a number in [0, 1] or null; bool and strings are rejected,
    out-of-range values are rejected, never clamped (docs/behaviour/events.md#payload-rules)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"gedanke_arousal must be a number in [0,1] or null, got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"gedanke_arousal {value!r} is outside [0,1] (not clamped)")
    return float(value)


class UserMessagePayload(BaseModel):
    """Payload of a `message` event from the prompt consumer. Graph fields pass through."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    turn_id: str = Field(min_length=1)
    message_ids: list[str] = Field(alias="nachrichten_ids", min_length=1)
    user_prompt: str
    received_at: float | None = Field(default=None, alias="empfangen_am")
    last_received_at: float | None = Field(default=None, alias="letztes_empfangen_am")


class ImpulsePayload(BaseModel):
    """A Pixie impulse: Nova's own thought, never a `user_prompt`.

    `gedanke_arousal` and `ausloeser_turn_id` must be present, possibly null:
    presence distinguishes "no level" from an entry of the old kind.
    """

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    turn_id: str = Field(min_length=1)
    own_thought: str = Field(alias="eigener_gedanke", min_length=1)
    stimulus_origin: Literal["eigener_impuls"] = Field(alias="reiz_herkunft")
    thought_arousal: float | None = Field(alias="gedanke_arousal")
    trigger_turn_id: str | None = Field(alias="ausloeser_turn_id")

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data: Any) -> Any:
        if isinstance(data, dict):
            if "user_prompt" in data:
                raise ValueError("an impulse payload must not carry a user_prompt key")
            for key in ("gedanke_arousal", "ausloeser_turn_id"):
                if key not in data:
                    raise ValueError(f"an impulse payload must carry {key} (null allowed)")
        return data

    @field_validator("thought_arousal", mode="before")
    @classmethod
    def _arousal(cls, value: Any) -> float | None:
        return _check_arousal(value)


def is_self_event(payload: dict[str, Any]) -> bool:
    """A `continue` payload the character started after her answer (`absicht` or
    `commitment`), as opposed to the thinker's retry of the same turn."""
    return FIELD_INTENT in payload or FIELD_COMMITMENT in payload


def _check_self_event(data: dict[str, Any]) -> None:
    """A self-event is a new turn of Nova's own: her thought, its arousal, the turn it
    follows — never the turn itself, never a user_prompt, never a retry's flag."""
    if data.get(FIELD_ORIGIN) != ORIGIN_OWN_THOUGHT:
        raise ValueError("a self-event must carry reiz_herkunft eigener_impuls")
    thought = data.get(FIELD_OWN_THOUGHT)
    if not isinstance(thought, str) or not thought.strip():
        raise ValueError("a self-event must carry its eigener_gedanke")
    if "user_prompt" in data:
        raise ValueError("a self-event must not carry a user_prompt key")
    if FIELD_THOUGHT_AROUSAL not in data:
        raise ValueError("a self-event must carry gedanke_arousal (null allowed)")
    _check_arousal(data[FIELD_THOUGHT_AROUSAL])
    trigger = data.get(FIELD_TRIGGER_TURN_ID)
    if not isinstance(trigger, str) or not trigger:
        raise ValueError("a self-event must name the turn it follows (ausloeser_turn_id)")
    if trigger == data.get("turn_id"):
        raise ValueError("a self-event starts a turn of its own: turn_id is not inherited")
    if data.get(FIELD_THINKER_RETRY):
        raise ValueError("a self-event is not the thinker's retry")
    intent, commitment = data.get(FIELD_INTENT), data.get(FIELD_COMMITMENT)
    if intent is not None and intent != INTENT_FOLLOW_UP:
        raise ValueError(f"unknown absicht {intent!r}")
    if commitment is not None and commitment not in COMMITMENTS:
        raise ValueError(f"unknown commitment {commitment!r}")
    if intent is None and commitment is None:
        raise ValueError("a self-event needs an absicht or a commitment")


class ContinuePayload(BaseModel):
    """A `continue`: the thinker's retry inherits the turn_id, and if it retries an impulse
    it must carry `gedanke_arousal` on (the retry is its second producer); a self-event
    (`absicht`/`commitment`) is a new turn with rules of its own (`_check_self_event`)."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    turn_id: str = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, data: Any) -> Any:
        if isinstance(data, dict) and is_self_event(data):
            _check_self_event(data)
        elif isinstance(data, dict) and data.get("reiz_herkunft") == ORIGIN_OWN_THOUGHT:
            if "gedanke_arousal" not in data:
                raise ValueError("a retried impulse must carry gedanke_arousal on (null allowed)")
            _check_arousal(data["gedanke_arousal"])
            if "user_prompt" in data:
                raise ValueError("a retried impulse must not carry a user_prompt key")
        return data


# --- the event ---------------------------------------------------------------------------


class Event(BaseModel):
    """One entry of `event_queue:{u}:{c}`."""

    model_config = ConfigDict(populate_by_name=True)

    event_id: str = Field(default_factory=new_id, min_length=1)
    user_id: str = Field(min_length=1)
    character_id: str = Field(min_length=1)
    source: Source
    kind: EventKind = Field(alias="typ")
    payload: dict[str, Any] = Field(default_factory=dict)
    trigger_count: int = Field(default=0, ge=0)
    created_at: float = Field(default_factory=time.time, alias="erstellt_am")

    @field_validator("trigger_count", mode="before")
    @classmethod
    def _int_not_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError("trigger_count must be an integer")
        return value

    @model_validator(mode="after")
    def _payload_rules(self) -> Event:
        self.validated_payload()
        return self

    @property
    def is_impulse(self) -> bool:
        return self.payload.get("reiz_herkunft") == ORIGIN_OWN_THOUGHT and self.kind == KIND_MESSAGE

    def validated_payload(self) -> BaseModel:
        """The payload checked against the rule for this kind of event."""
        model: type[BaseModel]
        if self.source == SOURCE_USER:
            if self.kind != KIND_MESSAGE:
                raise ValueError(f"a user event must be typ=message, got {self.kind!r}")
            model = UserMessagePayload
        elif self.kind == KIND_MESSAGE:
            model = ImpulsePayload
        else:
            model = ContinuePayload
        return model.model_validate(self.payload)

    @property
    def is_self_event(self) -> bool:
        """A `continue` Nova started after her answer (a second message of her own)."""
        return self.kind == KIND_CONTINUE and is_self_event(self.payload)

    @property
    def turn_id(self) -> str:
        return str(self.payload["turn_id"])

    @property
    def message_ids(self) -> list[str]:
        """The utterances this event answers; only a user's message names any."""
        if self.source != SOURCE_USER:
            return []
        return [str(i) for i in self.payload.get("nachrichten_ids", [])]

    def wire(self) -> str:
        return self.model_dump_json(by_alias=True)


def parse_event(raw: str | bytes) -> Event:
    """Read an event from the queue; raise `EventRejected` naming the violated rule."""
    try:
        return Event.model_validate_json(raw)
    except ValidationError as exc:
        raise EventRejected(_first_error(exc)) from None


def build_event(**fields: Any) -> Event:
    """Build an event from wire or attribute names; raise `EventRejected` on a rule."""
    try:
        return Event.model_validate(fields)
    except ValidationError as exc:
        raise EventRejected(_first_error(exc)) from None


def impulse_event(
    user_id: str,
    character_id: str,
    thought: str,
    *,
    thought_arousal: Any,
    trigger_turn_id: str | None,
    extra: dict[str, Any] | None = None,
    event_id: str | None = None,
    turn_id: str | None = None,
) -> Event:
    """The event a Pixie impulse creates: a new turn, no user_prompt.
    `event_id` (and `turn_id`) are given where a retry must count as a duplicate
    (reminders, stack entries)."""
    payload = dict(extra or {})
    payload.update(
        turn_id=turn_id or new_id(),
        eigener_gedanke=thought,
        reiz_herkunft=ORIGIN_OWN_THOUGHT,
        gedanke_arousal=thought_arousal,
        ausloeser_turn_id=trigger_turn_id,
    )
    return build_event(
        **({"event_id": event_id} if event_id else {}),
        user_id=user_id,
        character_id=character_id,
        source=SOURCE_CHARACTER,
        typ=KIND_MESSAGE,
        payload=payload,
    )


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ()))
    msg = str(err.get("msg", "invalid"))
    return f"{where}: {msg}" if where else msg


# --- WebSocket messages (server -> client) ------------------------------------------------


class WireMessage(BaseModel):
    """Base of every message the hub delivers; `seq` is added by the hub."""

    model_config = ConfigDict(populate_by_name=True, extra="allow")

    kind: str = Field(alias="typ")
    character_id: str

    def wire_dict(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json")


class StageMessage(WireMessage):
    kind: Literal["character_stage"] = Field(default=MSG_STAGE, alias="typ")
    turn_id: str
    node: str
    label: str
    graph: Literal["human", "character"]


class ResponseMessage(WireMessage):
    """`character_response`; the graph's payload fields travel as extras."""

    kind: Literal["character_response"] = Field(default=MSG_RESPONSE, alias="typ")
    text: str = Field(alias="nachricht")
    turn_id: str
    message_ids: list[str] = Field(alias="nachrichten_ids")
    stimulus_origin: str | None = Field(default=None, alias="reiz_herkunft")


class FailedMessage(WireMessage):
    kind: Literal["turn_gescheitert"] = Field(default=MSG_FAILED, alias="typ")
    turn_id: str
    message_ids: list[str] = Field(alias="nachrichten_ids")
    reason: str = Field(alias="grund")


class UtteranceMessage(WireMessage):
    """The user's block as their other clients see it. The text travels once, in
    `aeusserungen` (one entry per utterance, as queued): a block may be a hundred 16 KiB
    texts, and every byte is sent to each of the user's connections."""

    kind: Literal["user_utterance"] = Field(default=MSG_UTTERANCE, alias="typ")
    turn_id: str
    message_ids: list[str] = Field(alias="nachrichten_ids")
    utterances: list[dict[str, Any]] = Field(alias="aeusserungen")
    client_ids: list[str] = Field(default_factory=list)
