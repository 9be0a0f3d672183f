"""The emotion canon: 16 emotions + neutral, their sectors, groups and per-emotion constants.

Sectors follow an 8-spoke wheel; each sector has an intense and a moderate emotion. German
emotion names are data values and stay verbatim. The rules: docs/behaviour/emotion.md#canon,
docs/behaviour/emotion.md#canonicalisation, docs/behaviour/emotion.md#arousal-reading.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

logger = logging.getLogger(__name__)

NEUTRAL: Final = "neutral"
"""The sectorless 17th emotion."""

SECTOR_COUNT: Final = 8
"""Number of sectors on the wheel; distances wrap around it."""


@dataclass(frozen=True, slots=True)
class EmotionConstants:
    """One canonical emotion's place and pace: its sector on the wheel (None for neutral),
    the arousal assumed when none is given, and its per-turn arousal decay in the history
    (None: the fallback rate)."""

    sector: int | None
    default_arousal: float
    decay_rate: float | None


EMOTIONS: Final[Mapping[str, EmotionConstants]] = {
    # name: sector, default arousal, decay per turn (the intense emotion of a sector first)
    "begeisterung": EmotionConstants(1, 0.7, 0.15),
    "freude": EmotionConstants(1, 0.5, 0.10),
    "dankbarkeit": EmotionConstants(2, 0.5, 0.08),
    "zufriedenheit": EmotionConstants(2, 0.3, 0.05),
    "stress": EmotionConstants(3, 0.6, 0.04),
    "unsicherheit": EmotionConstants(3, 0.4, 0.05),
    "ueberrascht": EmotionConstants(4, 0.7, 0.20),
    "verwundert": EmotionConstants(4, 0.4, 0.15),
    "verzweiflung": EmotionConstants(5, 0.8, 0.02),
    "traurigkeit": EmotionConstants(5, 0.4, 0.03),
    "frustration": EmotionConstants(6, 0.6, 0.04),
    "enttaeuschung": EmotionConstants(6, 0.5, 0.05),
    "wut": EmotionConstants(7, 0.8, 0.08),
    "aerger": EmotionConstants(7, 0.5, 0.06),
    "hoffnung": EmotionConstants(8, 0.5, 0.08),
    "neugierig": EmotionConstants(8, 0.4, 0.12),
    NEUTRAL: EmotionConstants(None, 0.2, None),
}
"""The 16+1 canonical emotions, one row each (docs/behaviour/emotion.md#canon)."""

SECTORS: Final[Mapping[str, int]] = {
    name: e.sector for name, e in EMOTIONS.items() if e.sector is not None
}
"""Sector of each canonical emotion but neutral."""

CANON: Final[frozenset[str]] = frozenset(EMOTIONS)
"""The 16+1 canonical emotion names."""

POSITIVE: Final = "positiv"
NEGATIVE: Final = "negativ"
NEUTRAL_GROUP: Final = "neutral"
"""Group labels (data values)."""

POSITIVE_SECTORS: Final = frozenset({1, 2, 8})
NEGATIVE_SECTORS: Final = frozenset({3, 5, 6, 7})
NEUTRAL_SECTORS: Final = frozenset({4})
"""Group membership by sector."""

DEFAULT_AROUSAL: Final[Mapping[str, float]] = {
    name: e.default_arousal for name, e in EMOTIONS.items()
}
"""Arousal used when none is given for an emotion."""

UNKNOWN_AROUSAL: Final = 0.5
"""Arousal for names outside the canon and for unreadable values."""

AROUSAL_DECAY_RATE: Final[Mapping[str, float]] = {
    name: e.decay_rate for name, e in EMOTIONS.items() if e.decay_rate is not None
}
"""Per-turn exponential arousal decay in the history."""

FALLBACK_DECAY_RATE: Final = 0.05
"""Decay rate for neutral and unknown names."""

DAMPING_EXPONENT: Final[Mapping[int, float]] = {0: 1.0, 1: 0.7, 2: 1.0, 3: 1.2, 4: 1.4}
"""Damping exponent X_d by sector distance to the dominant emotion
(docs/behaviour/emotion.md#history)."""

LEGACY_AROUSAL: Final[Mapping[str, float]] = {"high": 0.8, "mid": 0.5, "low": 0.2}
"""Old textual arousal levels still found in stored data."""

SYNONYMS: Final[Mapping[str, str]] = {
    **dict.fromkeys(
        (
            "glueck",
            "heiterkeit",
            "stolz",
            "triumph",
            "genugtuung",
            "selbstvertrauen",
            "selbstsicherheit",
        ),
        "freude",
    ),
    **dict.fromkeys(("euphorie", "ekstase"), "begeisterung"),
    **dict.fromkeys(
        ("erleichterung", "gelassenheit", "geborgenheit", "vertrauen"), "zufriedenheit"
    ),
    **dict.fromkeys(("angst", "furcht", "panik", "anspannung"), "stress"),
    **dict.fromkeys(("sorge", "nervositaet", "beklemmung"), "unsicherheit"),
    **dict.fromkeys(("schock", "ueberraschung", "fassungslos", "baff"), "ueberrascht"),
    **dict.fromkeys(("verbluefft", "perplex"), "verwundert"),
    **dict.fromkeys(
        (
            "resignation",
            "einsamkeit",
            "melancholie",
            "niedergeschlagenheit",
            "nachdenklich",
            "leere",
        ),
        "traurigkeit",
    ),
    "kummer": "verzweiflung",
    **dict.fromkeys(("frust", "verbitterung", "abscheu", "ekel", "verachtung"), "frustration"),
    **dict.fromkeys(
        (
            "ernuechterung",
            "desillusionierung",
            "langeweile",
            "ablehnung",
            "desinteresse",
            "gleichgueltigkeit",
        ),
        "enttaeuschung",
    ),
    **dict.fromkeys(("zorn", "aggression", "empoerung", "hass"), "wut"),
    **dict.fromkeys(("gereizt", "genervt", "groll"), "aerger"),
    **dict.fromkeys(("neugier", "neugierde", "interesse", "gespannt"), "neugierig"),
    **dict.fromkeys(("erwartung", "vorfreude"), "hoffnung"),
}
"""Synonym → canonical emotion."""

_UMLAUTS: Final = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})


def _lookup(name: str) -> str | None:
    """Canonical name for `name` (case-, blank- and umlaut-insensitive), or None if unknown."""
    key = name.strip().lower().translate(_UMLAUTS)
    if key in CANON:
        return key
    return SYNONYMS.get(key)


def canonicalise(name: str | None) -> str:
    """Map a perceived emotion name to the canon so every consumer sees one vocabulary.

    Canon names map to themselves and synonyms to their target. Anything else is logged as a
    warning (model output, nothing to act on) and returned unchanged (the raw value is kept).
    An empty name stays "".
    """
    if name is None:
        return ""
    if not isinstance(name, str):
        name = str(name)
    if not name.strip():
        return ""
    found = _lookup(name)
    if found is None:
        logger.warning("unknown emotion %r kept as is", name)
        return name
    return found


def sector_of(name: str | None) -> int | None:
    """Sector 1..8 of an exact canonical name; None for neutral, unknown or non-canonical names.

    No canonicalisation happens here on purpose: the mode check works on the emotion as
    perceived (docs/behaviour/emotion.md#mode-check), so callers canonicalise first when they
    need to.
    """
    if not name:
        return None
    return SECTORS.get(name)


def group_of(name: str | None) -> str:
    """Valence group (positiv/negativ/neutral) of an exact canonical name."""
    sector = sector_of(name)
    if sector in POSITIVE_SECTORS:
        return POSITIVE
    if sector in NEGATIVE_SECTORS:
        return NEGATIVE
    return NEUTRAL_GROUP


def sector_distance(a: int, b: int) -> int:
    """Circular distance between two sectors, 0..4."""
    diff = abs(a - b)
    return min(diff, SECTOR_COUNT - diff)


def emotion_distance(a: str | None, b: str | None) -> int | None:
    """Sector distance between two exact names, or None when either has no sector."""
    sa, sb = sector_of(a), sector_of(b)
    if sa is None or sb is None:
        return None
    return sector_distance(sa, sb)


def gv_valence_bit(name: str | None) -> int:
    """Binary valence for the conversation vector: 0 only for sectors 3-7."""
    sector = sector_of(name)
    if sector is None:
        return 1
    return 1 if sector in POSITIVE_SECTORS else 0


def default_arousal(name: str | None) -> float:
    """Default arousal of an emotion (synonyms resolved), 0.5 when unknown."""
    canon = _lookup(name) if isinstance(name, str) and name.strip() else None
    if canon is None:
        return UNKNOWN_AROUSAL
    return DEFAULT_AROUSAL[canon]


def decay_rate(name: str | None) -> float:
    """Per-turn arousal decay rate of an emotion, 0.05 for neutral/unknown."""
    if not name:
        return FALLBACK_DECAY_RATE
    return AROUSAL_DECAY_RATE.get(name, FALLBACK_DECAY_RATE)


def clamp01(value: float) -> float:
    """Clamp to [0, 1]."""
    return min(1.0, max(0.0, value))


def parse_number(value: object) -> float | None:
    """A finite float from a number or numeric string; None for bools and everything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str | bytes):
        try:
            number = float(value)
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None


def read_arousal(value: object, emotion: str | None = None) -> float:
    """Read a stored or perceived arousal robustly (docs/behaviour/emotion.md#arousal-reading).

    Numbers (and numeric strings) are clamped to [0, 1]; the legacy words high/mid/low map to
    0.8/0.5/0.2; anything else falls back to the emotion's default arousal (0.5 if unknown).
    """
    number = parse_number(value)
    if number is not None:
        return clamp01(number)
    if isinstance(value, str):
        legacy = LEGACY_AROUSAL.get(value.strip().lower())
        if legacy is not None:
            return legacy
    return default_arousal(emotion)
