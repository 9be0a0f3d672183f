"""A short-term memory entry's hash fields under English names
(docs/behaviour/memory.md#short-term-memory).

The hash `kzg:{u}:{c}:{ms}` keeps the German field names (stored data, shown by the memory
API); they appear here once: `EntryFields.of` reads a hash's text fields, `NewEntry.as_hash`
writes one. Values stay as Redis holds them (text) except where every reader wants a number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from novaberg.ei.canon import parse_number
from novaberg.store.short_term_codec import CORRECTED_FIELD, FIELD_PROMOTION, FIELD_THEMES_NORM

TEXT: Final = "inhalt"
THEMES: Final = "themen"
THEMES_NORM: Final = FIELD_THEMES_NORM
SALIENCE: Final = "salienz"
INTAKE_SALIENCE: Final = "salienz_eingang"
INTAKE_ORIGIN: Final = "salienz_eingang_herkunft"
FREQUENCY: Final = "haeufigkeit"
OBSERVER: Final = "beobachter"
CREATED_AT: Final = "erstellt_am"
CORRECTED_AT: Final = CORRECTED_FIELD
PROMOTED_AT: Final = FIELD_PROMOTION
ENTITY_IDS: Final = "entitaet_ids"
SOURCE: Final = "quelle"
"""Where a memory of Nova's own came from (e.g. `recherche`)."""
DIMENSION: Final = "dimension"
MEMORY_TYPE: Final = "gedaechtnistyp"
INTENTIONS: Final = "intentionen"
TURN_ID: Final = "turn_id"
TIMELINE_ID: Final = "timeline_id"

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
        timeline = parse_number(fields.get(TIMELINE_ID))
        return cls(
            user_id=fields.get("user_id", ""),
            character_id=fields.get("character_id", ""),
            observer=fields.get(OBSERVER, ""),
            text=fields.get(TEXT, ""),
            themes=fields.get(THEMES, ""),
            salience=parse_number(fields.get(SALIENCE)),
            intake_salience=parse_number(fields.get(INTAKE_SALIENCE)),
            frequency=int(parse_number(fields.get(FREQUENCY)) or 0),
            dimension=fields.get(DIMENSION, ""),
            memory_type=fields.get(MEMORY_TYPE, ""),
            created_at=parse_number(fields.get(CREATED_AT)),
            corrected_at=parse_number(fields.get(CORRECTED_AT)),
            promoted_at=parse_number(fields.get(PROMOTED_AT)),
            turn_id=fields.get(TURN_ID) or None,
            timeline_id=int(timeline) if timeline is not None else None,
            entity_ids=fields.get(ENTITY_IDS, ""),
            emotion=fields.get("emotion", ""),
            arousal=parse_number(fields.get("arousal")),
            mode=fields.get("modus", ""),
            emotion_vector=fields.get("emotions_vektor", ""),
            intentions=fields.get(INTENTIONS, ""),
            language_style=fields.get("sprach_stil", ""),
            relationship_dynamic=fields.get("beziehungs_dynamik", ""),
            tone=fields.get("tone", ""),
            source=fields.get(SOURCE, ""),
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
            OBSERVER: self.observer,
            THEMES: self.themes,
            THEMES_NORM: self.themes_norm,
            TEXT: self.text,
            SALIENCE: repr(self.salience),
            INTAKE_SALIENCE: repr(self.intake_salience),
            INTAKE_ORIGIN: self.intake_origin,
            FREQUENCY: 1,
            MEMORY_TYPE: self.memory_type,
            DIMENSION: self.dimension,
            INTENTIONS: self.intentions,
            CREATED_AT: repr(self.created_at),
            ENTITY_IDS: self.entity_ids,
        }
        for name, field_name in PERCEPTION_FIELDS:
            fields[field_name] = self.perception.get(name, "")
        if self.timeline_id is not None:
            fields[TIMELINE_ID] = self.timeline_id
        if self.turn_id:
            fields[TURN_ID] = self.turn_id
        if self.source is not None:
            fields[SOURCE] = self.source
        return fields
