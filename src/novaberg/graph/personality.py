"""Personality data classes: one actor's profiles, current emotion and register
(docs/behaviour/graphs.md#personalities).

`external` in the graph state is the counterpart (the user), `internal` is Nova, who also
carries identities, directives and her register space. Everything round-trips through plain dicts so
it can travel as JSON through graph state and events.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Self

from novaberg.ei.canon import clamp01, parse_number
from novaberg.ei.labels import (
    DEFAULT_AROUSAL_LEVEL,
    DEFAULT_EMOTION,
    DEFAULT_EMOTIONS_VECTOR,
    DEFAULT_EMOTIONS_VECTOR_QUELLE,
    DEFAULT_INTENT,
    DEFAULT_LANGUAGE_STYLE,
    DEFAULT_MODE,
    DEFAULT_PROMPT_TOPIC,
    DEFAULT_RELATIONSHIP_DYNAMIC,
    DEFAULT_TONE,
)
from novaberg.ei.register import DEFAULT_CLOSENESS, DEFAULT_DEPTH


def _text(value: object, default: str) -> str:
    if value is None:
        return default
    return value if isinstance(value, str) else str(value)


def _unit(value: object, default: float) -> float:
    number = parse_number(value)
    return default if number is None else clamp01(number)


@dataclass(slots=True)
class Emotion:
    """One actor's perceived emotional state and register labels."""

    emotion: str = DEFAULT_EMOTION
    arousal: float = DEFAULT_AROUSAL_LEVEL
    emotions_vector: str = DEFAULT_EMOTIONS_VECTOR
    mode: str = DEFAULT_MODE
    language_style: str = DEFAULT_LANGUAGE_STYLE
    relationship_dynamic: str = DEFAULT_RELATIONSHIP_DYNAMIC
    tone: str = DEFAULT_TONE
    intent: str = DEFAULT_INTENT
    prompt_topic: str = DEFAULT_PROMPT_TOPIC
    emotions_vector_quelle: str = DEFAULT_EMOTIONS_VECTOR_QUELLE

    def to_dict(self) -> dict[str, Any]:
        """The 10 fields, spelled out so renaming an attribute cannot silently change keys."""
        return {
            "emotion": self.emotion,
            "arousal": self.arousal,
            "emotions_vector": self.emotions_vector,
            "mode": self.mode,
            "language_style": self.language_style,
            "relationship_dynamic": self.relationship_dynamic,
            "tone": self.tone,
            "intent": self.intent,
            "prompt_topic": self.prompt_topic,
            "emotions_vector_quelle": self.emotions_vector_quelle,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Self:
        """Tolerant inverse of to_dict: missing or None → default, bad arousal → 0.5."""
        data = data or {}
        return cls(
            emotion=_text(data.get("emotion"), DEFAULT_EMOTION),
            arousal=_unit(data.get("arousal"), DEFAULT_AROUSAL_LEVEL),
            emotions_vector=_text(data.get("emotions_vector"), DEFAULT_EMOTIONS_VECTOR),
            mode=_text(data.get("mode"), DEFAULT_MODE),
            language_style=_text(data.get("language_style"), DEFAULT_LANGUAGE_STYLE),
            relationship_dynamic=_text(
                data.get("relationship_dynamic"), DEFAULT_RELATIONSHIP_DYNAMIC
            ),
            tone=_text(data.get("tone"), DEFAULT_TONE),
            intent=_text(data.get("intent"), DEFAULT_INTENT),
            prompt_topic=_text(data.get("prompt_topic"), DEFAULT_PROMPT_TOPIC),
            emotions_vector_quelle=_text(
                data.get("emotions_vector_quelle"), DEFAULT_EMOTIONS_VECTOR_QUELLE
            ),
        )

    def copy(self) -> Self:
        """An independent copy."""
        return copy.deepcopy(self)


@dataclass(slots=True)
class Character:
    """Distilled profiles of one actor (charakter_hash columns)."""

    core: str = ""
    adaptive: str = ""
    relationship: str = ""
    intentions: str = ""
    emotions: str = ""

    def to_dict(self) -> dict[str, str]:
        """The five profiles by attribute name."""
        return {
            "core": self.core,
            "adaptive": self.adaptive,
            "relationship": self.relationship,
            "intentions": self.intentions,
            "emotions": self.emotions,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Self:
        """Inverse of to_dict; missing or None profiles are empty."""
        data = data or {}
        return cls(
            core=_text(data.get("core"), ""),
            adaptive=_text(data.get("adaptive"), ""),
            relationship=_text(data.get("relationship"), ""),
            intentions=_text(data.get("intentions"), ""),
            emotions=_text(data.get("emotions"), ""),
        )

    def copy(self) -> Self:
        """An independent copy."""
        return copy.deepcopy(self)


@dataclass(slots=True)
class RegisterSpace:
    """Nova's register space: depth (flat..existential) and closeness (far..intimate)."""

    depth: float = DEFAULT_DEPTH
    closeness: float = DEFAULT_CLOSENESS

    def to_dict(self) -> dict[str, float]:
        """Both axes by name."""
        return {"tiefe": self.depth, "naehe": self.closeness}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Self:
        """Inverse of to_dict; unreadable axes take their defaults, values clamp to [0, 1]."""
        data = data or {}
        return cls(
            depth=_unit(data.get("tiefe"), DEFAULT_DEPTH),
            closeness=_unit(data.get("naehe"), DEFAULT_CLOSENESS),
        )

    def copy(self) -> Self:
        """An independent copy."""
        return copy.deepcopy(self)


@dataclass(slots=True)
class Personality:
    """One actor: profiles plus current emotion."""

    character: Character = field(default_factory=Character)
    emotion: Emotion = field(default_factory=Emotion)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready nested dict."""
        return {"character": self.character.to_dict(), "emotion": self.emotion.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Self:
        """Inverse of to_dict; missing parts are fresh defaults."""
        data = data or {}
        return cls(
            character=Character.from_dict(data.get("character")),
            emotion=Emotion.from_dict(data.get("emotion")),
        )

    def copy(self) -> Self:
        """An independent deep copy (external on non-user events is a copy of internal)."""
        return copy.deepcopy(self)


@dataclass(slots=True)
class InternalPersonality(Personality):
    """Nova: a Personality plus identities, directives and her register space."""

    identities: list[str] = field(default_factory=list)
    directives: list[dict[str, Any]] = field(default_factory=list)
    register: RegisterSpace = field(default_factory=RegisterSpace)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready nested dict including identities, directives and raum."""
        return {
            "character": self.character.to_dict(),
            "emotion": self.emotion.to_dict(),
            "identities": list(self.identities),
            "directives": [dict(directive) for directive in self.directives],
            "raum": self.register.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Self:
        """Inverse of to_dict; directives are {anweisung, kontext} dicts."""
        data = data or {}
        return cls(
            character=Character.from_dict(data.get("character")),
            emotion=Emotion.from_dict(data.get("emotion")),
            identities=[str(item) for item in data.get("identities") or []],
            directives=[dict(item) for item in data.get("directives") or []],
            register=RegisterSpace.from_dict(data.get("raum")),
        )
