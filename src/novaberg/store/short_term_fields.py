"""A short-term memory entry's hash fields under English names
(docs/behaviour/memory.md#short-term-memory).

The hash `kzg:{u}:{c}:{ms}` keeps the German field names (stored data, shown by the memory
API); they appear here once: `EntryFields.of` reads a hash's text fields, `NewEntry.as_hash`
writes one. Values stay as Redis holds them (text) except where every reader wants a number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from novaberg.ei.canon import parse_number
from novaberg.store.short_term_codec import CORRECTED_FIELD, FIELD_PROMOTION, FIELD_THEMES_NORM


class Field(StrEnum):
    """The hash's field names (German: stored data), each once."""

    TEXT = "inhalt"
    THEMES = "themen"
    THEMES_NORM = FIELD_THEMES_NORM
    SALIENCE = "salienz"
    INTAKE_SALIENCE = "salienz_eingang"
    INTAKE_ORIGIN = "salienz_eingang_herkunft"
    FREQUENCY = "haeufigkeit"
    OBSERVER = "beobachter"
    CREATED_AT = "erstellt_am"
    CORRECTED_AT = CORRECTED_FIELD
    PROMOTED_AT = FIELD_PROMOTION
    ENTITY_IDS = "entitaet_ids"
    SOURCE = "quelle"  # where a memory of Nova's own came from (e.g. `recherche`)
    DIMENSION = "dimension"
    MEMORY_TYPE = "gedaechtnistyp"
    INTENTIONS = "intentionen"
    TURN_ID = "turn_id"
    TIMELINE_ID = "timeline_id"


OBSERVER_USER: Final = "user"
OBSERVER_ASSISTANT: Final = "assistant"
"""Whose perspective an entry holds (`beobachter`)."""

DEFAULT_MEMORY_TYPE: Final = "kurz"
DEFAULT_DIMENSION: Final = "kontext"
"""An entry's memory type and dimension when the score named none."""

PERCEPTION_FIELDS: Final = (
    ("emotion", "emotion"),
    ("arousal", "arousal"),
    ("mode", "modus"),
    ("emotion_vector", "emotions_vektor"),
    ("language_style", "sprach_stil"),
    ("relationship_dynamic", "beziehungs_dynamik"),
    ("tone", "tone"),
)
"""(attribute, hash field and perception key) of what an entry copies from the perception
of the speaker; the perception's keys are the same German names."""


@dataclass(frozen=True, slots=True)
class EntryFields:
    """What a stored entry says, read from its hash (missing text fields are "")."""

    user_id: str
    character_id: str
    observer: str
    text: str
    themes: str
    """As stored: comma-separated, as written."""
    salience: float | None
    intake_salience: float | None
    frequency: int
    dimension: str
    memory_type: str
    created_at: float | None
    corrected_at: float | None
    promoted_at: float | None
    turn_id: str | None
    timeline_id: int | None
    entity_ids: str
    emotion: str
    arousal: float | None
    mode: str
    emotion_vector: str
    intentions: str
    language_style: str
    relationship_dynamic: str
    tone: str
    source: str

    @classmethod
    def of(cls, fields: Mapping[str, str]) -> EntryFields:
        timeline = parse_number(fields.get(Field.TIMELINE_ID))
        return cls(
            user_id=fields.get("user_id", ""),
            character_id=fields.get("character_id", ""),
            observer=fields.get(Field.OBSERVER, ""),
            text=fields.get(Field.TEXT, ""),
            themes=fields.get(Field.THEMES, ""),
            salience=parse_number(fields.get(Field.SALIENCE)),
            intake_salience=parse_number(fields.get(Field.INTAKE_SALIENCE)),
            frequency=int(parse_number(fields.get(Field.FREQUENCY)) or 0),
            dimension=fields.get(Field.DIMENSION, ""),
            memory_type=fields.get(Field.MEMORY_TYPE, ""),
            created_at=parse_number(fields.get(Field.CREATED_AT)),
            corrected_at=parse_number(fields.get(Field.CORRECTED_AT)),
            promoted_at=parse_number(fields.get(Field.PROMOTED_AT)),
            turn_id=fields.get(Field.TURN_ID) or None,
            timeline_id=int(timeline) if timeline is not None else None,
            entity_ids=fields.get(Field.ENTITY_IDS, ""),
            emotion=fields.get("emotion", ""),
            arousal=parse_number(fields.get("arousal")),
            mode=fields.get("modus", ""),
            emotion_vector=fields.get("emotions_vektor", ""),
            intentions=fields.get(Field.INTENTIONS, ""),
            language_style=fields.get("sprach_stil", ""),
            relationship_dynamic=fields.get("beziehungs_dynamik", ""),
            tone=fields.get("tone", ""),
            source=fields.get(Field.SOURCE, ""),
        )

    def theme_list(self) -> list[str]:
        """The themes as written, trimmed, empty ones left out."""
        return [theme.strip() for theme in self.themes.split(",") if theme.strip()]


@dataclass(frozen=True, slots=True)
class NewEntry:
    """An entry to store (docs/behaviour/memory.md#creation). `perception`: the speaker's
    perceived emotion, arousal, mode, ... by attribute name (`PERCEPTION_FIELDS`)."""

    user_id: str
    character_id: str
    observer: str
    themes: str
    themes_norm: str
    text: str
    salience: float
    intake_salience: float
    intake_origin: str
    memory_type: str
    dimension: str
    intentions: str
    created_at: float
    perception: Mapping[str, str]
    entity_ids: str = ""
    timeline_id: int | None = None
    turn_id: str | None = None
    source: str | None = None

    def as_hash(self) -> dict[str, Any]:
        """The hash fields (without the embedding), as the create script stores them."""
        fields: dict[str, Any] = {
            "user_id": self.user_id,
            "character_id": self.character_id,
            Field.OBSERVER: self.observer,
            Field.THEMES: self.themes,
            Field.THEMES_NORM: self.themes_norm,
            Field.TEXT: self.text,
            Field.SALIENCE: repr(self.salience),
            Field.INTAKE_SALIENCE: repr(self.intake_salience),
            Field.INTAKE_ORIGIN: self.intake_origin,
            Field.FREQUENCY: 1,
            Field.MEMORY_TYPE: self.memory_type,
            Field.DIMENSION: self.dimension,
            Field.INTENTIONS: self.intentions,
            Field.CREATED_AT: repr(self.created_at),
            Field.ENTITY_IDS: self.entity_ids,
        }
        for name, field_name in PERCEPTION_FIELDS:
            fields[field_name] = self.perception.get(name, "")
        if self.timeline_id is not None:
            fields[Field.TIMELINE_ID] = self.timeline_id
        if self.turn_id:
            fields[Field.TURN_ID] = self.turn_id
        if self.source is not None:
            fields[Field.SOURCE] = self.source
        return fields
