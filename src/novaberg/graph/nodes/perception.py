"""Perception ("Perzeption", docs/behaviour/nodes.md#perception): one structured call that
reads an utterance's intent, tone, topic, emotion, arousal, mode, style and relationship.

`perception_role == "user"` reads the stimulus and writes `external.emotion`;
`"assistant"` reads `state["response"]` (Nova's released answer) and writes
`internal.emotion`. The Personality is copied, never mutated in place. `emotions_vector`
is never touched (ei_calc sets it). Intentions are not a perception output (salience).

Fallbacks (docs/behaviour/emotion.md#perception-labels): a missing field takes its
default; an unreadable answer after the model layer's retry (`ModelOutputError`) or a
timed-out call takes all defaults — logged, and the node's pipeline_log row carries
`ausfall`. A model that cannot be used at all (`ModelUnavailable`) ends the user's turn
instead; for Nova's released answer (`assistant`) the defaults are taken, since the answer
exists.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from novaberg.agents.deps import GraphDeps
from novaberg.agents.stimulus import stimulus_text
from novaberg.config import Role
from novaberg.ei.canon import CANON, clamp01, parse_number
from novaberg.ei.labels import (
    DEFAULT_AROUSAL_LEVEL,
    DEFAULT_EMOTION,
    DEFAULT_INTENT,
    DEFAULT_LANGUAGE_STYLE,
    DEFAULT_MODE,
    DEFAULT_PROMPT_TOPIC,
    DEFAULT_RELATIONSHIP_DYNAMIC,
    DEFAULT_TONE,
    INTENTS,
    LANGUAGE_STYLES,
    MODES,
    RELATIONSHIP_DYNAMICS,
    TONES,
)
from novaberg.graph.copying import emotion_copy
from novaberg.graph.personality import InternalPersonality, Personality
from novaberg.graph.state import ConversationState
from novaberg.graph.turn_head import head_of, with_head
from novaberg.llm.errors import ModelError, ModelOutputError, ModelUnavailable
from novaberg.memory import session_turns
from novaberg.pair import Pair
from novaberg.prompts import render
from novaberg.wire import PERCEIVE_ASSISTANT, PERCEIVE_USER

log = logging.getLogger(__name__)

PERCEPTION_TEMPERATURE: Final = 0.05
"""Near-deterministic: the same utterance should be read the same way."""

TOPIC_MAX_CHARS: Final = 60
"""The topic is 2–5 words; the bound keeps a small local model from running on."""


def _enum(values: frozenset[str] | tuple[str, ...]) -> dict[str, Any]:
    """Advertise the allowed values to constrained decoding without enforcing them
    (perception never enum-checks; consumers tolerate other strings)."""
    return {"enum": sorted(values)}


def _all_required(schema: dict[str, Any]) -> None:
    schema["required"] = list(schema.get("properties", {}))


class Rational(BaseModel):
    model_config = ConfigDict(json_schema_extra=_all_required)

    intent: str = Field(default=DEFAULT_INTENT, json_schema_extra=_enum(INTENTS))
    tone: str = Field(default=DEFAULT_TONE, json_schema_extra=_enum(TONES))
    thema: str = Field(
        default=DEFAULT_PROMPT_TOPIC, json_schema_extra={"maxLength": TOPIC_MAX_CHARS}
    )

    @field_validator("thema", mode="before")
    @classmethod
    def _clip(cls, value: object) -> object:
        """Advertised as ≤ 60 chars to constrained decoding; longer answers are clipped."""
        return value[:TOPIC_MAX_CHARS] if isinstance(value, str) else value


class Emotional(BaseModel):
    model_config = ConfigDict(json_schema_extra=_all_required)

    emotion: str = Field(default=DEFAULT_EMOTION, json_schema_extra=_enum(CANON))
    arousal: float = Field(default=DEFAULT_AROUSAL_LEVEL, ge=0.0, le=1.0)

    @field_validator("arousal", mode="before")
    @classmethod
    def _arousal(cls, value: object) -> float:
        """Clamped to [0, 1]; non-numeric → 0.5."""
        number = parse_number(value)
        return DEFAULT_AROUSAL_LEVEL if number is None else clamp01(number)


class Psychological(BaseModel):
    model_config = ConfigDict(json_schema_extra=_all_required)

    modus: str = Field(default=DEFAULT_MODE, json_schema_extra=_enum(MODES))
    sprach_stil: str = Field(
        default=DEFAULT_LANGUAGE_STYLE, json_schema_extra=_enum(LANGUAGE_STYLES)
    )
    beziehungs_dynamik: str = Field(
        default=DEFAULT_RELATIONSHIP_DYNAMIC, json_schema_extra=_enum(RELATIONSHIP_DYNAMICS)
    )


class PerceptionResult(BaseModel):
    """The perception JSON; every part defaults to its fallbacks."""

    model_config = ConfigDict(json_schema_extra=_all_required)

    rational: Rational = Field(default_factory=lambda: Rational())
    emotional: Emotional = Field(default_factory=lambda: Emotional())
    psychologisch: Psychological = Field(default_factory=lambda: Psychological())


def _label(value: str, default: str) -> str:
    text = (value or "").strip().lower()
    return text or default


def apply_perception(target: Personality, result: PerceptionResult) -> Personality:
    """A copy of `target` with the 8 perceived fields set (emotions_vector untouched)."""
    updated = emotion_copy(target)
    emotion = updated.emotion
    emotion.intent = _label(result.rational.intent, DEFAULT_INTENT)
    emotion.tone = _label(result.rational.tone, DEFAULT_TONE)
    emotion.prompt_topic = (result.rational.thema or "").strip()
    emotion.emotion = _label(result.emotional.emotion, DEFAULT_EMOTION)
    emotion.arousal = result.emotional.arousal
    emotion.mode = _label(result.psychologisch.modus, DEFAULT_MODE)
    emotion.language_style = _label(result.psychologisch.sprach_stil, DEFAULT_LANGUAGE_STYLE)
    emotion.relationship_dynamic = _label(
        result.psychologisch.beziehungs_dynamik, DEFAULT_RELATIONSHIP_DYNAMIC
    )
    return updated


async def _turns(state: ConversationState, deps: GraphDeps) -> tuple[list[dict], bool]:
    """The run's session turns and whether they were read here (then they are handed on
    as `raw_turns`, so the enricher does not read the same list again)."""
    turns = state.get("raw_turns")
    if turns is not None:
        return list(turns), False
    pair = Pair(state["user_id"], state["character_id"])
    return await session_turns.read(deps.redis, pair), True


async def perception(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Perceive the stimulus (role user) or Nova's answer (role assistant)."""
    role = state.get("perception_role", PERCEIVE_USER)
    if role == PERCEIVE_ASSISTANT:
        text = state.get("response") or ""
        target: Personality = state.get("internal") or InternalPersonality()
        channel = "internal"
    elif role == PERCEIVE_USER:
        text = stimulus_text(state)
        target = state.get("external") or Personality()
        channel = "external"
    else:
        raise ValueError(f"unknown perception_role {role!r}")

    summary: dict[str, Any] = {"rolle": role, "zeichen": len(text)}
    # which answer text this perception is of: the release rule compares it with the
    # text about to leave (graph/contract.py release_ready)
    perceived = {"perceived_response": text} if role == PERCEIVE_ASSISTANT else {}
    if not text.strip():
        log.warning("perception(%s): empty text; fallbacks used", role)
        summary["ausfall"] = "leerer_text"
        return {
            channel: apply_perception(target, PerceptionResult()),
            **perceived,
            "_log": summary,
        }

    turns, loaded = await _turns(state, deps)
    handed_on = {"raw_turns": turns} if loaded else {}
    prompt = render(
        "perception",
        variant=role,
        charakter=state.get("character_id", "nova").capitalize(),
        text=text,
    )
    try:
        result = await deps.model.structured(
            Role.ANALYSIS,
            with_head(head_of(state, deps, turns), prompt),
            PerceptionResult,
            temperature=PERCEPTION_TEMPERATURE,
        )
    except ModelOutputError as exc:
        log.warning("perception(%s): unreadable model output, all fallbacks: %s", role, exc)
        result = PerceptionResult()
        summary["ausfall"] = "unlesbar"
        summary["fallback"] = True
    except ModelUnavailable:
        if role == PERCEIVE_USER:
            raise  # the model cannot be used: the turn fails instead of running on defaults
        log.error("perception(assistant): model unavailable; all fallbacks, answer kept")
        result = PerceptionResult()
        summary["ausfall"] = "modell_nicht_erreichbar"
        summary["fallback"] = True
    except ModelError as exc:
        log.warning("perception(%s): model failed (%s), all fallbacks", role, exc)
        result = PerceptionResult()
        summary["ausfall"] = f"modell_fehler: {type(exc).__name__}"
        summary["fallback"] = True
    updated = apply_perception(target, result)
    summary.update(
        emotion=updated.emotion.emotion,
        arousal=updated.emotion.arousal,
        intent=updated.emotion.intent,
        modus=updated.emotion.mode,
    )
    return {channel: updated, **handed_on, **perceived, "_log": summary}
