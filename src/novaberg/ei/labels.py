"""Perception label vocabularies and the Emotion defaults
(docs/behaviour/emotion.md#perception-labels).

These are data values (German where the wire protocol is German); perception never enforces
them, so consumers must tolerate other strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from novaberg.ei.canon import NEUTRAL

DEFAULT_EMOTION: Final = NEUTRAL
DEFAULT_AROUSAL_LEVEL: Final = 0.5
DEFAULT_MODE: Final = "alltag"
DEFAULT_LANGUAGE_STYLE: Final = "neutral"
DEFAULT_RELATIONSHIP_DYNAMIC: Final = "neutral"
DEFAULT_TONE: Final = "sachlich"
DEFAULT_INTENT: Final = "smalltalk"
DEFAULT_PROMPT_TOPIC: Final = ""
DEFAULT_EMOTIONS_VECTOR: Final = ""
DEFAULT_EMOTIONS_VECTOR_QUELLE: Final = ""
"""Emotion() field defaults, also the perception fallbacks."""

EMOTION_FIELDS: Final = (
    "emotion",
    "arousal",
    "emotions_vector",
    "mode",
    "language_style",
    "relationship_dynamic",
    "tone",
    "intent",
    "prompt_topic",
    "emotions_vector_quelle",
)
"""The 10 Emotion fields in to_dict() order."""

EMOTION_DEFAULTS: Final[Mapping[str, Any]] = {
    "emotion": DEFAULT_EMOTION,
    "arousal": DEFAULT_AROUSAL_LEVEL,
    "emotions_vector": DEFAULT_EMOTIONS_VECTOR,
    "mode": DEFAULT_MODE,
    "language_style": DEFAULT_LANGUAGE_STYLE,
    "relationship_dynamic": DEFAULT_RELATIONSHIP_DYNAMIC,
    "tone": DEFAULT_TONE,
    "intent": DEFAULT_INTENT,
    "prompt_topic": DEFAULT_PROMPT_TOPIC,
    "emotions_vector_quelle": DEFAULT_EMOTIONS_VECTOR_QUELLE,
}
"""Emotion() as a mapping."""

INTENTS: Final = frozenset({"smalltalk", "knowledge", "personal", "task", "creative", "meta"})
TONES: Final = frozenset({"empathisch", "sachlich", "kreativ", "direkt"})
MODES: Final = frozenset(
    {
        "fachgespraech",
        "philosophischer_austausch",
        "alltag",
        "arbeitsmodus",
        "emotional",
        "spielerisch",
        "lernmodus",
        "kreativ",
        "beratend",
        "berichtend",
    }
)
LANGUAGE_STYLES: Final = frozenset(
    {"locker", "formell", "fachlich", "emotional", "jugendlich", "neutral"}
)
RELATIONSHIP_DYNAMICS: Final = frozenset(
    {"vertrauen", "distanz", "angriff", "hilfesuchend", "dankbar", "neutral"}
)
"""Allowed perception values."""

INTENT_CANON: Final = (
    "emotionaler_ausdruck",
    "information_teilen",
    "information_erfragen",
    "recherche_vertiefen",
    "gemeinsam_eruieren",
    "reflexion",
    "smalltalk",
    "feedback_geben",
    "feedback_erfragen",
    "planung",
    "anweisung",
    "bestaetigung",
    "widerspruch",
    "abschluss",
    "hilferuf",
    "humor",
)
"""INTENT_KANON: the 16 intentions salience assigns, not perception."""
