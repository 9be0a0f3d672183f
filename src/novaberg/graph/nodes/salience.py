"""Salience ("Salienz", docs/behaviour/nodes.md#salience): how worth remembering a text is.

Role by `graph_role`:

| role      | scored text | background ([LAGEBILD]) |
|-----------|-------------|-------------------------|
| human     | stimulus    | response (empty on path 1) |
| character | response    | stimulus                |
| agent     | stimulus    | none                    |

Texts shorter than 60 chars or without "." are one segment; longer ones are split by one
structured call (failure, or segments repeating our prompt's instructions — `prompts/leak.py`
— → the whole text is one segment). Each segment gets one structured
scoring call. An unreadable answer (non-numeric salienz, bad JSON → `ModelOutputError`, or a
failed call) is a **logged failure that writes nothing** for that segment and is named in
`salienz_ausfall` — never a 0.

Scoring: human → `salienz = round(min(1, raw + gravitationsterm), 2)` when the term is
> 0, `salienz_human = max(raw)` (None if nothing was readable), `user_intentionen` = the
ordered union. character/agent → `effektiv = min(1, max(pflicht, eigen))` with
`eigen = max(raw, gravitationsterm) × (1 + 0.3 × nova_arousal)` and
`pflicht = salienz_human × nutzer_gewichtung` (None if either is missing; always in the
AgentGraph). Every readable segment emits one `kzg` PendingWrite.

**Goal pull on Nova's answer.** In the CharacterGraph the raw score of Nova's answer is
first pulled up by the turn's ungated goal pull (`zielsog_roh`, the enricher's strongest
`cos × motivation` before the activation threshold): `raw + zielsog × (1 − raw)`, a share of
the headroom left. It is kept apart from `gravitationsterm` because the term is made of the
*activated* goals, which are also what Nova thinks about in the conversation vector: a
threshold lowered for salience would change her thoughts too. So a goal below the
threshold still makes what Nova says about it more memorable.

A segment whose `zeitausdruck_roh` names a day also emits a `timeline` write: the day anchor
its memory is linked to (memory/day_anchors.py; the dispatcher finds or makes the row).
**Guard:** when a task agent carried out a task this turn (an `abgeschlossen` result), the
agent has stored the turn's structured data itself — its row is the `timeline_id` the
memories link to — so salience plans no `timeline` (and no `fakten`) writes; `kzg` writes
stay. The node's log row says so (`waechter`).
"""

from __future__ import annotations

import asyncio
import logging
from datetime import datetime
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from novaberg.agents.base import AgentResult
from novaberg.agents.deps import GraphDeps
from novaberg.agents.stimulus import stimulus_text
from novaberg.config import Role
from novaberg.ei.canon import clamp01, parse_number
from novaberg.ei.labels import INTENT_CANON
from novaberg.graph.personality import InternalPersonality, Personality
from novaberg.graph.state import ConversationState, PendingWrite
from novaberg.llm.errors import ModelError, ModelOutputError
from novaberg.memory.day_anchors import anchor_day
from novaberg.prompts import render, user_message
from novaberg.prompts.leak import MAX_LOGGED_PHRASES, PROMPT_LEAK, leaked_phrases
from novaberg.wire import (
    FIELD_HUMAN_SALIENCE,
    GRAPH_AGENT,
    GRAPH_CHARACTER,
    GRAPH_HUMAN,
    TIMELINE_MEMORY_ANCHOR,
)

log = logging.getLogger(__name__)

SALIENCE_TEMPERATURE: Final = 0.05
"""Near-deterministic: the same text should be scored the same way."""

SEGMENT_MIN_CHARS: Final = 60
"""Texts shorter than this (or without ".") are one segment."""

AROUSAL_BOOST: Final = 0.3
"""eigen = max(raw, gravitationsterm) × (1 + 0.3 × nova_arousal)."""

USER_WEIGHT_MIN: Final = 0.5
USER_WEIGHT_MAX: Final = 1.5
"""nutzer_gewichtung is clamped to [0.5, 1.5]."""


def _all_required(schema: dict[str, Any]) -> None:
    schema["required"] = list(schema.get("properties", {}))


LIST_LIMITS: Final = {
    "themen": (3, 40),
    "explizit": (2, 20),
    "implizit": (2, 20),
    "intentionen": (3, 30),
    "entitaeten_roh": (4, 40),
}
"""(max items, max chars per item) advertised to constrained decoding. A small local model
otherwise fills lists until max_tokens and the JSON is cut off. Longer answers of other
backends are clipped, never rejected."""

TEXT_LIMITS: Final = {"begruendung": 160, "zeitausdruck_roh": 60, "thema_kurz": 40}
"""Max chars of free-text fields (same reason as LIST_LIMITS)."""

GUARDED_TARGETS: Final = ("fakten", "timeline")
"""Write targets salience leaves to a task agent that acted this turn (the salience
guard); `kzg` is never guarded."""

DONE: Final = "abgeschlossen"

SEGMENT_MAX_CHARS: Final = 400
SEGMENTS_MAX: Final = 8


def _list_schema(name: str, enum: list[str] | None = None) -> dict[str, Any]:
    items_max, chars_max = LIST_LIMITS[name]
    items: dict[str, Any] = {"type": "string", "maxLength": chars_max}
    if enum is not None:
        items = {"type": "string", "enum": enum}
    return {"maxItems": items_max, "items": items}


def _clip_list(name: str, value: object) -> object:
    if not isinstance(value, list):
        return value
    items_max, chars_max = LIST_LIMITS[name]
    return [str(item)[:chars_max] for item in value[:items_max]]


def _clip_text(name: str, value: object) -> object:
    return value[: TEXT_LIMITS[name]] if isinstance(value, str) else value


class Segment(BaseModel):
    model_config = ConfigDict(json_schema_extra=_all_required)

    segment: str = Field(json_schema_extra={"maxLength": SEGMENT_MAX_CHARS})
    thema_kurz: str = Field(default="", json_schema_extra={"maxLength": TEXT_LIMITS["thema_kurz"]})

    @field_validator("thema_kurz", mode="before")
    @classmethod
    def _clip(cls, value: object, info: Any) -> object:
        return _clip_text(info.field_name, value)


class Segmentation(BaseModel):
    """Answer of the segmentation call: `[{segment, thema_kurz}]`."""

    model_config = ConfigDict(json_schema_extra=_all_required)

    segmente: list[Segment] = Field(min_length=1, json_schema_extra={"maxItems": SEGMENTS_MAX})

    @field_validator("segmente", mode="before")
    @classmethod
    def _clip(cls, value: object) -> object:
        return value[:SEGMENTS_MAX] if isinstance(value, list) else value


class Emotions(BaseModel):
    model_config = ConfigDict(json_schema_extra=_all_required)

    explizit: list[str] = Field(default_factory=list, json_schema_extra=_list_schema("explizit"))
    implizit: list[str] = Field(default_factory=list, json_schema_extra=_list_schema("implizit"))
    valenz: Literal["positiv", "negativ", "neutral"] = "neutral"

    @field_validator("explizit", "implizit", mode="before")
    @classmethod
    def _clip(cls, value: object, info: Any) -> object:
        return _clip_list(info.field_name, value)


class SalienceScore(BaseModel):
    """Answer of one scoring call. `salienz` must be a number in [0, 1]:
    anything else fails validation and, after the model layer's retry, drops the segment."""

    model_config = ConfigDict(json_schema_extra=_all_required)

    salienz: float = Field(ge=0.0, le=1.0)
    themen: list[str] = Field(default_factory=list, json_schema_extra=_list_schema("themen"))
    emotionen: Emotions = Field(default_factory=Emotions)
    gedaechtnistyp: Literal["kurz", "lang"] = "kurz"
    dimension: Literal[
        "kognition", "emotion", "werte", "interessen", "kommunikation", "kontext"
    ] = "kontext"
    intentionen: list[str] = Field(
        default_factory=list,
        json_schema_extra=_list_schema("intentionen", list(INTENT_CANON)),
    )
    entitaeten_roh: list[str] = Field(
        default_factory=list, json_schema_extra=_list_schema("entitaeten_roh")
    )
    zeitausdruck_roh: str = Field(
        default="", json_schema_extra={"maxLength": TEXT_LIMITS["zeitausdruck_roh"]}
    )
    begruendung: str = Field(
        default="", json_schema_extra={"maxLength": TEXT_LIMITS["begruendung"]}
    )

    @field_validator("salienz", mode="before")
    @classmethod
    def _numeric(cls, value: object) -> float:
        """A non-numeric salienz is unreadable, not 0; bools too."""
        number = parse_number(value) if isinstance(value, int | float) else None
        if number is None:
            raise ValueError(f"salienz {value!r} is not a number")
        return number

    @field_validator("themen", "intentionen", "entitaeten_roh", mode="before")
    @classmethod
    def _clip_lists(cls, value: object, info: Any) -> object:
        return _clip_list(info.field_name, value)

    @field_validator("zeitausdruck_roh", "begruendung", mode="before")
    @classmethod
    def _clip_texts(cls, value: object, info: Any) -> object:
        return _clip_text(info.field_name, value)


def needs_segmentation(text: str) -> bool:
    """Only texts of ≥ 60 chars that contain "." are split."""
    return len(text) >= SEGMENT_MIN_CHARS and "." in text


def ordered_union(lists: list[list[str]]) -> list[str]:
    """Canonical intentions in first-seen order; unknown names are dropped."""
    seen: list[str] = []
    for items in lists:
        for item in items:
            name = str(item).strip().lower()
            if name in INTENT_CANON and name not in seen:
                seen.append(name)
    return seen


def human_salience(raw: float, gravitation_term: float) -> float:
    """Boosted salience of one user segment."""
    if gravitation_term > 0:
        return round(min(1.0, raw + gravitation_term), 2)
    return raw


def goal_pulled(raw: float, goal_pull: float) -> float:
    """The raw score pulled up by the ungated goal pull: `raw + pull × (1 − raw)` (module
    docstring). A pull of 0 leaves it as it is; it never lowers a score."""
    pull = clamp01(goal_pull)
    return raw + pull * max(0.0, 1.0 - raw)


def character_salience(
    raw: float,
    gravitation_term: float,
    nova_arousal: float,
    human: float | None,
    user_weight: float | None,
    goal_pull: float = 0.0,
) -> tuple[float, float, float | None]:
    """(effektiv, eigen, pflicht) of one of Nova's segments: the effective salience, her
    own (the raw score pulled by `goal_pull` first), and the duty `human × user weight`
    (None without either)."""
    own = max(goal_pulled(raw, goal_pull), gravitation_term) * (1 + AROUSAL_BOOST * nova_arousal)
    duty = None
    if human is not None and user_weight is not None:
        weight = min(USER_WEIGHT_MAX, max(USER_WEIGHT_MIN, user_weight))
        duty = human * weight
    effective = min(1.0, max(own, duty if duty is not None else own))
    return effective, own, duty


def agent_acted(state: ConversationState) -> list[str]:
    """The task agents that carried out a task this turn (their results `abgeschlossen`)."""
    results = (AgentResult.coerce(r) for r in state.get("agent_results") or [])
    return [r.agent_name for r in results if r.status == DONE]


def anchor_write(
    score: SalienceScore, segment: Segment, index: int, now: datetime, deps: GraphDeps
) -> PendingWrite | None:
    """The segment's day anchor (`timeline` write), or None when it names no day."""
    expression = score.zeitausdruck_roh.strip()
    day = anchor_day(expression, segment.segment, now, deps.settings.tz) if expression else None
    if day is None:
        return None
    return PendingWrite(
        target="timeline",
        action="upsert",
        data={
            "art": TIMELINE_MEMORY_ANCHOR,
            "tag": day.isoformat(),
            "zeitausdruck_roh": expression,
            "segment_index": index,
        },
        description=f"timeline {TIMELINE_MEMORY_ANCHOR} {day.isoformat()} ({expression})",
    )


def _texts(state: ConversationState, role: str) -> tuple[str, str]:
    """(scored text, background) for the role."""
    if role == GRAPH_HUMAN:
        return stimulus_text(state), state.get("response") or ""
    if role == GRAPH_CHARACTER:
        return state.get("response") or "", stimulus_text(state)
    if role == GRAPH_AGENT:
        return stimulus_text(state), ""
    raise ValueError(f"unknown graph_role {role!r}")


async def _segments(deps: GraphDeps, text: str, summary: dict[str, Any]) -> list[Segment]:
    if not needs_segmentation(text):
        return [Segment(segment=text)]
    try:
        result = await deps.model.structured(
            Role.ANALYSIS,
            user_message(render("salience_segment", text=text)),
            Segmentation,
            temperature=SALIENCE_TEMPERATURE,
        )
    except ModelError as exc:
        log.warning("salience: segmentation failed (%s); whole text is one segment", exc)
        summary["segmentierung"] = f"ausfall: {type(exc).__name__}"
        return [Segment(segment=text)]
    segments = [s for s in result.segmente if s.segment.strip()]
    if not segments:
        summary["segmentierung"] = "leer"
        return [Segment(segment=text)]
    leaked = leaked_phrases(" ".join(s.segment for s in segments), [text])
    if leaked:  # instruction text as a segment would become a memory: the whole text instead
        log.warning("salience: segmentation repeats prompt text %s; whole text is one", leaked)
        summary["segmentierung"] = PROMPT_LEAK
        summary[PROMPT_LEAK] = leaked[:MAX_LOGGED_PHRASES]
        return [Segment(segment=text)]
    summary["segmentierung"] = "llm"
    return segments


async def _score(
    deps: GraphDeps, role: str, segment: Segment, background: str, character: str
) -> SalienceScore | str:
    """The segment's score, or the reason it is unreadable."""
    prompt = render(
        "salience_score",
        variant=role,
        charakter=character,
        lagebild=background,
        text=segment.segment,
    )
    try:
        return await deps.model.structured(
            Role.ANALYSIS, user_message(prompt), SalienceScore, temperature=SALIENCE_TEMPERATURE
        )
    except ModelOutputError:
        return "unlesbar"
    except ModelError as exc:
        return f"modell_fehler: {type(exc).__name__}"


def _perceived(state: ConversationState, role: str) -> Personality:
    if role == GRAPH_HUMAN:
        return state.get("external") or Personality()
    return state.get("internal") or InternalPersonality()


async def salience(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Score the role's text segment by segment and plan one kzg write per readable one."""
    role = state.get("graph_role", GRAPH_HUMAN)
    text, background = _texts(state, role)
    summary: dict[str, Any] = {"rolle": role, "zeichen": len(text)}
    is_human = role == GRAPH_HUMAN
    if not text.strip():
        log.warning("salience(%s): empty scored text; nothing written", role)
        summary["ausfall"] = "leerer_text"
        update: dict[str, Any] = {"salience_failure": "leerer_text", "_log": summary}
        if is_human:
            update["human_salience"] = None
        return update

    character = state.get("character_id", "nova").capitalize()
    segments = await _segments(deps, text, summary)
    scores = await asyncio.gather(
        *(_score(deps, role, segment, background, character) for segment in segments)
    )

    gravitation = float(state.get("gravitation_term") or 0.0)
    perceived = _perceived(state, role).emotion
    human = state.get("human_salience")
    if human is None and not is_human:
        human = parse_number((state.get("event_payload") or {}).get(FIELD_HUMAN_SALIENCE))
    # read by db_access with the character's profile row (for pflicht)
    user_weight = state.get("user_weight") if role == GRAPH_CHARACTER else None
    # the ungated goal pull lifts only Nova's answer (module docstring)
    goal_pull = float(state.get("raw_goal_pull") or 0.0) if role == GRAPH_CHARACTER else 0.0
    acted = agent_acted(state)
    now = datetime.fromtimestamp(deps.clock(), tz=deps.settings.tz)
    guarded: list[str] = []

    writes: list[PendingWrite] = []
    failures: list[str] = []
    raws: list[float] = []
    intentions: list[list[str]] = []
    total = len(segments)
    for index, (segment, score) in enumerate(zip(segments, scores, strict=True)):
        if isinstance(score, str):
            log.warning("salience(%s): segment %d/%d %s; dropped", role, index + 1, total, score)
            failures.append(f"segment {index + 1}: {score}")
            continue
        raw = score.salienz
        raws.append(raw)
        intentions.append(score.intentionen)
        obj = score.model_dump()
        obj["salienz_roh"] = raw
        obj["intentionen"] = ordered_union([score.intentionen])
        if is_human:
            obj["salienz"] = human_salience(raw, gravitation)
        else:
            effective, own, duty = character_salience(
                raw, gravitation, perceived.arousal, human, user_weight, goal_pull
            )
            obj.update(salienz=clamp01(effective), eigen=own, pflicht=duty, zielsog=goal_pull)
        obj.update(
            emotion=perceived.emotion,
            modus=perceived.mode,
            arousal=perceived.arousal,
            emotions_vektor=perceived.emotions_vector,
            sprach_stil=perceived.language_style,
            beziehungs_dynamik=perceived.relationship_dynamic,
            tone=perceived.tone,
            gravitationsterm=gravitation,
            thema_kurz=segment.thema_kurz,
        )
        writes.append(
            PendingWrite(
                target="kzg",
                action="create",
                data={
                    "salienz_obj": obj,
                    "segment": segment.segment,
                    "segment_index": index,
                    "segment_gesamt": total,
                },
                description=(
                    f"kzg create ({role}) {index + 1}/{total}: salienz {obj['salienz']:.2f} "
                    f"- {segment.segment[:60]}"
                ),
            )
        )
        day = anchor_write(score, segment, index, now, deps)
        if day is not None and acted and day["target"] in GUARDED_TARGETS:
            guarded.append(day["target"])
        elif day is not None:
            writes.append(day)

    failure = "; ".join(failures) if failures else None
    if role == GRAPH_CHARACTER:
        summary["zielsog"] = round(goal_pull, 4)
    summary.update(
        segmente=total,
        lesbar=len(raws),
        salienzen=[
            round(w["data"]["salienz_obj"]["salienz"], 3) for w in writes if w["target"] == "kzg"
        ],
        ausfall=failure,
    )
    anchored = [w["data"]["tag"] for w in writes if w["target"] == "timeline"]
    if anchored:
        summary["anker"] = anchored
    if acted:
        summary["waechter"] = {"agenten": acted, "unterdrueckt": guarded}
    update = {"pending_writes": writes, "salience_failure": failure, "_log": summary}
    if is_human:
        update["human_salience"] = max(raws) if raws else None
        if raws:  # nothing readable: keep the enricher's intentions of the last user turn
            update["user_intentions"] = ordered_union(intentions)
    return update
