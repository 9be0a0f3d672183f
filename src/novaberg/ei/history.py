"""Emotion history ("Verlauf"): weighted recent emotions of one role
(docs/behaviour/emotion.md#history).

The newest emotion counts fully, older ones add a small, slowly decaying share; a sine curve
smooths the sums into [0, 1] and emotions far from the dominant one are damped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Final

from novaberg.ei.canon import (
    DAMPING_EXPONENT,
    NEUTRAL,
    canonicalise,
    decay_rate,
    emotion_distance,
    read_arousal,
)

HISTORY_MAX_TURNS: Final = 100
"""Only the last 100 qualifying turns count."""

OLDER_TURN_SHARE: Final = 0.15
"""Older turns (i > 0) add 0.15 × decay_i; the newest adds decay_0."""

DECAY_BASE: Final = 0.8
DECAY_AROUSAL_SLOWDOWN: Final = 0.6
"""eff = 0.8 × (1 − 0.6·a): higher arousal decays slower."""

SMOOTH_SATURATION: Final = 2.5
"""Raw weight at which the smoothed weight reaches 1."""

HISTORY_MIN_WEIGHT: Final = 0.15
"""Entries below this (unrounded) smoothed weight are dropped."""

HISTORY_ROUND: Final = 2
"""Digits for gewicht and arousal in the output."""


def smooth(raw: float) -> float:
    """Map an accumulated raw weight to [0, 1]: sin(raw/2.5 · π/2)^0.5."""
    if raw <= 0:
        return 0.0
    if raw >= SMOOTH_SATURATION:
        return 1.0
    return math.sin(raw / SMOOTH_SATURATION * math.pi / 2) ** 0.5


def turn_decay(index: int, arousal: float) -> float:
    """decay_i = 1 / (1 + eff × log10(1 + i)), eff = 0.8 × (1 − 0.6a)."""
    eff = DECAY_BASE * (1 - DECAY_AROUSAL_SLOWDOWN * arousal)
    return 1.0 / (1.0 + eff * math.log10(1 + index))


def sort_history(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sort history entries by gewicht, heaviest first; stable for equal weights."""
    return sorted(entries, key=lambda entry: -float(entry["gewicht"]))


def _role_emotions(turns: Iterable[Mapping[str, Any]], role: str) -> list[tuple[str, float]]:
    """(canonical emotion, arousal) of the role's turns, oldest first, neutral dropped."""
    found: list[tuple[str, float]] = []
    for turn in turns:
        if turn.get("rolle") != role:
            continue
        raw = turn.get("emotion")
        if not raw:
            continue
        emotion = canonicalise(raw)
        if emotion == NEUTRAL:
            continue
        found.append((emotion, read_arousal(turn.get("arousal"), emotion)))
    return found[-HISTORY_MAX_TURNS:]


def emotion_history(
    turns: Iterable[Mapping[str, Any]],
    current_emotion: str | None,
    current_arousal: object,
    role: str,
    inject_current: bool = True,
) -> list[dict[str, Any]]:
    """Weighted emotion history of one role as [{emotion, gewicht, arousal}].

    Consumers take list[0] as the dominant emotion; the list is sorted by gewicht, so that is
    the heaviest entry, not necessarily the effective-value dominant used for damping.
    """
    sequence = _role_emotions(turns, role)
    if inject_current and current_emotion:
        current = canonicalise(current_emotion)
        if current and current != NEUTRAL:
            sequence.append((current, read_arousal(current_arousal, current)))

    raw: dict[str, float] = {}
    arousal: dict[str, float] = {}
    for index, (emotion, level) in enumerate(reversed(sequence)):
        decay = turn_decay(index, level)
        raw[emotion] = raw.get(emotion, 0.0) + (decay if index == 0 else OLDER_TURN_SHARE * decay)
        damped = level * math.exp(-decay_rate(emotion) * index)
        arousal[emotion] = max(arousal.get(emotion, 0.0), damped)

    if not raw:
        return []

    smoothed = {emotion: smooth(value) for emotion, value in raw.items()}
    dominant = max(smoothed, key=lambda e: smoothed[e] * arousal[e] ** 2)
    dominant_arousal = arousal[dominant]

    values: dict[str, float] = {}
    for emotion, value in smoothed.items():
        distance = None if emotion == dominant else emotion_distance(emotion, dominant)
        if distance is None:
            values[emotion] = value
        else:
            exponent = 1 + (DAMPING_EXPONENT[distance] - 1) * dominant_arousal
            values[emotion] = value**exponent

    entries = [
        {
            "emotion": emotion,
            "gewicht": round(value, HISTORY_ROUND),
            "arousal": round(arousal[emotion], HISTORY_ROUND),
        }
        for emotion, value in values.items()
        if value >= HISTORY_MIN_WEIGHT
    ]
    return sort_history(entries)
