"""Emotional gravitation: similar memories pull their emotion into Nova's history
(docs/behaviour/emotion.md#gravitation).

Short-term (KZG) and long-term (LZG) memories near the turn become gravity points whose pull
fades with a 180-day half-life; the two strongest are applied to Nova's emotion history.
Goal activation lives in `novaberg.ei.goals` and is re-exported here.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any, Final

from novaberg.ei.canon import NEUTRAL, canonicalise, clamp01, parse_number
from novaberg.ei.goals import (
    DEFAULT_MOTIVATION,
    GOAL_ACTIVATION_THRESHOLD,
    GoalActivation,
    activate_goals,
    cosine,
    goal_motivation,
    gravitation_term,
    search_blend,
    search_key,
)
from novaberg.ei.history import HISTORY_ROUND, sort_history
from novaberg.ei.timeutil import SECONDS_PER_DAY, require_epoch, to_epoch

__all__ = [
    "DEFAULT_MOTIVATION",
    "GOAL_ACTIVATION_THRESHOLD",
    "GoalActivation",
    "activate_goals",
    "age_in_days",
    "apply_gravity",
    "cosine",
    "goal_motivation",
    "gravitation_term",
    "gravity_time_decay",
    "long_term_gravity",
    "long_term_point",
    "search_blend",
    "search_key",
    "select_gravity_points",
    "short_term_gravity",
    "short_term_point",
]

logger = logging.getLogger(__name__)

GRAVITY_HALF_LIFE_DAYS: Final = 180.0
"""T = exp(−ln2/180 × age_days)."""

SHORT_TERM_FACTOR: Final = 0.8
SHORT_TERM_DEFAULT_SALIENCE: Final = 0.5
"""KZG: g = cos × salienz(0.5) × T × 0.8."""

LONG_TERM_FACTOR: Final = 0.5
"""LZG: g = cos × gewicht_decay × T × 0.5."""

LONG_TERM_NEAREST: Final = 10
"""LZG candidates: the 10 nearest active non-neutral nodes."""

GRAVITY_THRESHOLD: Final = 0.40
GRAVITY_TOP: Final = 2
"""Keep points with g ≥ 0.40, at most the 2 strongest."""

POINT_DEFAULT_AROUSAL: Final = 0.5
POINT_CONTENT_CHARS: Final = 100
"""A point's arousal when unreadable; its content is cut to 100 chars."""

GRAVITY_WEIGHT_FACTOR: Final = 0.6
GRAVITY_WEIGHT_MAX: Final = 0.5
"""Applying a point adds w = min(0.5, 0.6·g)."""

SOURCE_SHORT_TERM: Final = "kzg"
SOURCE_LONG_TERM: Final = "lzg"
"""quelle of a gravity point (data values)."""


def gravity_time_decay(age_days: float | None) -> float:
    """T = exp(−ln2/180 × age_days); 1 when the age is unknown or negative."""
    if age_days is None or age_days <= 0:
        return 1.0
    return math.exp(-math.log(2) / GRAVITY_HALF_LIFE_DAYS * age_days)


def age_in_days(timestamp: object, now: float | datetime) -> float | None:
    """Days from `timestamp` (epoch, ISO string or datetime) to `now`; None if unreadable."""
    moment = to_epoch(timestamp)
    if moment is None:
        return None
    return (require_epoch(now) - moment) / SECONDS_PER_DAY


def short_term_gravity(similarity: float, salience: float, time_decay: float) -> float:
    """KZG pull g = cos × salienz × T × 0.8."""
    return similarity * salience * time_decay * SHORT_TERM_FACTOR


def long_term_gravity(similarity: float, weight_decay: float, time_decay: float) -> float:
    """LZG pull g = cos × gewicht_decay × T × 0.5."""
    return similarity * weight_decay * time_decay * LONG_TERM_FACTOR


def _point(
    entry: Mapping[str, Any],
    emotion: str,
    similarity: float,
    weight: float,
    time_decay: float,
    gravitation: float,
    source: str,
) -> dict[str, Any]:
    arousal = parse_number(entry.get("arousal"))
    return {
        "emotion": emotion,
        "arousal": POINT_DEFAULT_AROUSAL if arousal is None else clamp01(arousal),
        "similarity": similarity,
        "gewicht": weight,
        "zeit_decay": time_decay,
        "gravitation": gravitation,
        "quelle": source,
        "inhalt": str(entry.get("inhalt") or "")[:POINT_CONTENT_CHARS],
    }


def _emotion_of(entry: Mapping[str, Any]) -> str | None:
    raw = entry.get("emotion")
    if not raw:
        return None
    emotion = canonicalise(str(raw))
    return None if emotion in ("", NEUTRAL) else emotion


def _entry_time_decay(entry: Mapping[str, Any], now: float | datetime) -> float:
    stamp = entry.get("verstaerkt_am") or entry.get("erstellt_am")
    return gravity_time_decay(age_in_days(stamp, now))


def short_term_point(
    entry: Mapping[str, Any], similarity: float, now: float | datetime
) -> dict[str, Any] | None:
    """Gravity point of a short-term memory, or None if neutral or below 0.40."""
    emotion = _emotion_of(entry)
    if emotion is None:
        return None
    salience = parse_number(entry.get("salienz"))
    salience = SHORT_TERM_DEFAULT_SALIENCE if salience is None else salience
    decay = _entry_time_decay(entry, now)
    g = short_term_gravity(similarity, salience, decay)
    if g < GRAVITY_THRESHOLD:
        return None
    return _point(entry, emotion, similarity, salience, decay, g, SOURCE_SHORT_TERM)


def long_term_point(
    node: Mapping[str, Any], similarity: float, now: float | datetime
) -> dict[str, Any] | None:
    """Gravity point of a long-term node, or None if neutral, weightless or below 0.40."""
    emotion = _emotion_of(node)
    weight = parse_number(node.get("gewicht_decay"))
    if emotion is None or weight is None:
        return None
    decay = _entry_time_decay(node, now)
    g = long_term_gravity(similarity, weight, decay)
    if g < GRAVITY_THRESHOLD:
        return None
    return _point(node, emotion, similarity, weight, decay, g, SOURCE_LONG_TERM)


def select_gravity_points(points: Iterable[Mapping[str, Any] | None]) -> list[dict[str, Any]]:
    """Merge short- and long-term points: g ≥ 0.40, strongest first, top 2."""
    kept = [
        dict(point)
        for point in points
        if point is not None and float(point["gravitation"]) >= GRAVITY_THRESHOLD
    ]
    kept.sort(key=lambda point: -float(point["gravitation"]))
    return kept[:GRAVITY_TOP]


def apply_gravity(
    history: Sequence[Mapping[str, Any]], points: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Pull the gravity points' emotions into Nova's history.

    Returns a new, re-sorted list; the input is not mutated. No points, or points with an
    empty history (a first turn: expected, logged at DEBUG), leave the history as it is.
    """
    result = [dict(entry) for entry in history]
    if not points:
        return result
    if not result:
        logger.debug("gravity points but an empty emotion history; nothing applied")
        return result
    for point in points:
        emotion = _emotion_of(point)
        if emotion is None:
            continue
        g = float(point["gravitation"])
        weight = min(GRAVITY_WEIGHT_MAX, GRAVITY_WEIGHT_FACTOR * g)
        arousal = parse_number(point.get("arousal"))
        pulled = (POINT_DEFAULT_AROUSAL if arousal is None else arousal) * g
        present = next((e for e in result if e.get("emotion") == emotion), None)
        if present is not None:
            present["gewicht"] = round(min(1.0, float(present["gewicht"]) + weight), HISTORY_ROUND)
            old = parse_number(present.get("arousal")) or 0.0
            present["arousal"] = round(min(1.0, max(old, pulled)), HISTORY_ROUND)
        else:
            result.append(
                {
                    "emotion": emotion,
                    "gewicht": round(weight, HISTORY_ROUND),
                    "arousal": round(min(1.0, pulled), HISTORY_ROUND),
                }
            )
    return sort_history(result)
