"""Emotion vectors: the direction of a role's mood over the last turns
(docs/behaviour/emotion.md#vectors).

The last few emotions are split into an older and a newer half; each half gets a valence
group, and the pair of groups (plus an intensity rise for same-group pairs) names the vector.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from novaberg.ei.canon import (
    NEGATIVE,
    NEUTRAL_GROUP,
    POSITIVE,
    canonicalise,
    group_of,
    parse_number,
)

ABSTURZ: Final = "absturz"
EINBRUCH: Final = "einbruch"
SPIRALE: Final = "spirale"
STABILISIERUNG: Final = "stabilisierung"
ERHOLUNG: Final = "erholung"
AUFBLUEHEN: Final = "aufbluehen"
ABKUEHLUNG: Final = "abkuehlung"
ESKALATION: Final = "eskalation"
PLATEAU: Final = "plateau"
"""The nine vector names (data values)."""

VECTORS: Final = frozenset(
    {
        ABSTURZ,
        EINBRUCH,
        SPIRALE,
        STABILISIERUNG,
        ERHOLUNG,
        AUFBLUEHEN,
        ABKUEHLUNG,
        ESKALATION,
        PLATEAU,
    }
)
"""All vector names."""

PRESSURE_VECTORS: Final = frozenset({ABSTURZ, SPIRALE, EINBRUCH})
"""Vectors that signal emotional pressure."""

GV_UPWARD_VECTORS: Final = frozenset({AUFBLUEHEN, ESKALATION, ERHOLUNG})
"""Vectors whose GV direction bit is 1."""

QUELLE_MEASURED: Final = "gemessen"
QUELLE_TIE: Final = "gleichstand"
QUELLE_TOO_FEW: Final = "zu_wenig_turns"
QUELLE_NOT_SET: Final = "nicht_gesetzt"
"""Values of emotions_vector_quelle."""

BASIS_AROUSAL: Final = "arousal"
BASIS_NAMES: Final = "namensmenge"
"""What decided a same-group vector: the arousal rise or new names."""

VECTOR_WINDOW: Final = 8
"""Turns of the role considered."""

SMALL_WINDOW: Final = 3
"""Up to this many entries the newer half is the last one, else the last two."""

OLDER_HALF_MAX: Final = 3
"""Older half: at most the three entries before the newer half."""

RISE_THRESHOLD: Final = 0.10
"""Mean arousal rise (rounded to 3 digits) that makes spirale/eskalation."""

_TRANSITIONS: Final[Mapping[tuple[str, str], str]] = {
    (POSITIVE, NEGATIVE): ABSTURZ,
    (NEUTRAL_GROUP, NEGATIVE): EINBRUCH,
    (NEGATIVE, NEUTRAL_GROUP): STABILISIERUNG,
    (NEGATIVE, POSITIVE): ERHOLUNG,
    (NEUTRAL_GROUP, POSITIVE): AUFBLUEHEN,
    (POSITIVE, NEUTRAL_GROUP): ABKUEHLUNG,
    (NEUTRAL_GROUP, NEUTRAL_GROUP): PLATEAU,
}
"""Cross-group transitions older → newer."""

_RISING: Final[Mapping[str, str]] = {NEGATIVE: SPIRALE, POSITIVE: ESKALATION}
"""Same-group vector when intensity rises."""


@dataclass(frozen=True, slots=True)
class EmotionVector:
    """Result of the vector computation: name, its basis (quelle) and optional intensity."""

    vector: str
    quelle: str
    intensity: float | None = None
    basis: str | None = None


def gv_direction_bit(vector: str | None) -> int:
    """GV direction bit: 1 for aufbluehen, eskalation, erholung, else 0."""
    return 1 if vector in GV_UPWARD_VECTORS else 0


def is_pressure(vector: str | None) -> bool:
    """Whether the vector is one of the pressure vectors."""
    return vector in PRESSURE_VECTORS


def _half_group(half: list[tuple[str, float | None]]) -> tuple[str, bool]:
    """Majority group of a half; on a tie the group of its last entry, flagged as a tie."""
    counts = Counter(group_of(emotion) for emotion, _ in half)
    ranked = counts.most_common()
    top = ranked[0][1]
    if len(ranked) > 1 and ranked[1][1] == top:
        return group_of(half[-1][0]), True
    return ranked[0][0], False


def _mean_arousal(half: list[tuple[str, float | None]]) -> float | None:
    """Mean of the numeric arousals in a half, None when it has none."""
    numbers = [level for _, level in half if level is not None]
    if not numbers:
        return None
    return sum(numbers) / len(numbers)


def _window(
    turns: Iterable[Mapping[str, Any]],
    current_emotion: str | None,
    current_arousal: object,
    role: str,
    inject_current: bool,
) -> list[tuple[str, float | None]]:
    """Last 8 (canonical emotion, numeric arousal|None) of the role, plus the current one."""
    window: list[tuple[str, float | None]] = []
    for turn in turns:
        if turn.get("rolle") != role or not turn.get("emotion"):
            continue
        window.append((canonicalise(turn["emotion"]), parse_number(turn.get("arousal"))))
    window = window[-VECTOR_WINDOW:]
    if inject_current and current_emotion:
        current = canonicalise(current_emotion)
        if current:
            level = None if current_arousal is None else parse_number(current_arousal)
            window.append((current, level))
    return window


def emotion_vector(
    turns: Iterable[Mapping[str, Any]],
    current_emotion: str | None,
    current_arousal: object,
    role: str,
    inject_current: bool = True,
) -> EmotionVector:
    """Name the direction of a role's recent emotions.

    Neutral emotions stay in the window here (unlike the history) because they mark the
    neutral group. Same-group pairs rise on a mean arousal gain ≥ 0.10, else on new names.
    """
    window = _window(turns, current_emotion, current_arousal, role, inject_current)
    if len(window) < 2:
        return EmotionVector(PLATEAU, QUELLE_TOO_FEW)

    if len(window) <= SMALL_WINDOW:
        newer, older = window[-1:], window[:-1]
    else:
        newer, older = window[-2:], window[-2 - OLDER_HALF_MAX : -2]

    old_group, old_tie = _half_group(older)
    new_group, new_tie = _half_group(newer)
    quelle = QUELLE_TIE if old_tie or new_tie else QUELLE_MEASURED

    if old_group == new_group and old_group in _RISING:
        rising = _RISING[old_group]
        mean_old, mean_new = _mean_arousal(older), _mean_arousal(newer)
        if mean_old is not None and mean_new is not None:
            rise = round(mean_new - mean_old, 3)
            vector = rising if rise >= RISE_THRESHOLD else PLATEAU
            return EmotionVector(vector, quelle, rise, BASIS_AROUSAL)
        old_names = {emotion for emotion, _ in older}
        new_names = {
            emotion
            for emotion, _ in newer
            if group_of(emotion) == old_group and emotion not in old_names
        }
        vector = rising if new_names else PLATEAU
        return EmotionVector(vector, quelle, None, BASIS_NAMES)

    return EmotionVector(_TRANSITIONS[(old_group, new_group)], quelle)


def emotion_vector_by_names(
    turns: Iterable[Mapping[str, Any]],
    current_emotion: str | None,
    role: str,
    inject_current: bool = True,
) -> EmotionVector:
    """Name-only variant: never passes a current arousal."""
    return emotion_vector(turns, current_emotion, None, role, inject_current)
