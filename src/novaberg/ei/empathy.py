"""Nova's emotion update in ei_calc (character role): own decay plus empathy
(docs/behaviour/emotion.md#empathy).

Force 1 is Nova's own history over her turns. Force 2, only for a user event, pulls the user's
emotion into it; a user far away on the wheel pulls harder, and a strong opposite mood on
both sides is flagged as a conflict.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from novaberg.ei.canon import (
    NEUTRAL,
    canonicalise,
    emotion_distance,
    parse_number,
    read_arousal,
)
from novaberg.ei.history import HISTORY_ROUND, emotion_history, sort_history
from novaberg.ei.vectors import PLATEAU, QUELLE_NOT_SET, EmotionVector, emotion_vector

logger = logging.getLogger(__name__)

ASSISTANT: Final = "assistant"
USER: Final = "user"
"""Turn roles (data values)."""

USER_EVENT_SOURCE: Final = "user"
"""Empathy runs only for events from the user."""

EMPATHY_ALPHA: Final[Mapping[int, float]] = {0: 0.20, 1: 0.30, 2: 0.45, 3: 0.70, 4: 0.85}
"""Empathy share α by sector distance: a distant user pulls harder."""

SECTORLESS_DISTANCE: Final = -1
SECTORLESS_ALPHA: Final = 0.30
"""Distance and α when either emotion has no sector."""

EMPATHY_MIN_WEIGHT: Final = 0.05
"""The user's emotion is injected only if w = α × user_arousal exceeds this."""

NOVA_DEFAULT_AROUSAL: Final = 0.5
"""Arousal of Nova's dominant entry when it carries none."""

NOVA_EMPTY_EMOTION: Final = NEUTRAL
NOVA_EMPTY_AROUSAL: Final = 0.2
"""Nova's dominant emotion/arousal when her history is empty."""

CONFLICT_MIN_DISTANCE: Final = 3
CONFLICT_MIN_AROUSAL: Final = 0.4
"""Conflict = distance ≥ 3 and both arousals ≥ 0.4."""


def empathy_alpha(distance: int) -> float:
    """α for a sector distance; −1 (sectorless) and unexpected values give 0.30."""
    return EMPATHY_ALPHA.get(distance, SECTORLESS_ALPHA)


def _entry_arousal(entry: Mapping[str, Any], default: float) -> float:
    number = parse_number(entry.get("arousal"))
    return default if number is None else number


def apply_empathy(
    base: Sequence[Mapping[str, Any]], user_emotion: str | None, user_arousal: object
) -> tuple[list[dict[str, Any]], bool]:
    """Inject the user's emotion into Nova's history; return (new history, conflict).

    The input entries are copied, never mutated.
    """
    history = [dict(entry) for entry in base]
    if history:
        nova_emotion = canonicalise(history[0].get("emotion"))
        nova_arousal = _entry_arousal(history[0], NOVA_DEFAULT_AROUSAL)
    else:
        nova_emotion, nova_arousal = NOVA_EMPTY_EMOTION, NOVA_EMPTY_AROUSAL

    user = canonicalise(user_emotion)
    level = read_arousal(user_arousal, user)
    distance = emotion_distance(nova_emotion, user)
    if distance is None:
        distance = SECTORLESS_DISTANCE
    alpha = empathy_alpha(distance)
    weight = alpha * level

    if user and user != NEUTRAL and weight > EMPATHY_MIN_WEIGHT:
        present = next((e for e in history if e.get("emotion") == user), None)
        if present is not None:
            present["gewicht"] = round(min(1.0, float(present["gewicht"]) + weight), HISTORY_ROUND)
            old = _entry_arousal(present, 0.0)
            present["arousal"] = round(max(old, level * alpha), HISTORY_ROUND)
        else:
            history.append(
                {
                    "emotion": user,
                    "gewicht": round(weight, HISTORY_ROUND),
                    "arousal": round(level * alpha, HISTORY_ROUND),
                }
            )
        history = sort_history(history)

    conflict = (
        distance >= CONFLICT_MIN_DISTANCE
        and nova_arousal >= CONFLICT_MIN_AROUSAL
        and level >= CONFLICT_MIN_AROUSAL
    )
    return history, conflict


def transfer_dominant(
    history: Sequence[Mapping[str, Any]], current_emotion: str, current_arousal: float
) -> tuple[str, float]:
    """Nova's new emotion/arousal = history[0]; unchanged when empty (the first turn of a
    pair: an expected state, so logged at DEBUG)."""
    if not history:
        logger.debug("empty emotion history; Nova's emotion stays %r", current_emotion)
        return current_emotion, current_arousal
    top = history[0]
    return str(top["emotion"]), _entry_arousal(top, current_arousal)


@dataclass(frozen=True, slots=True)
class CharacterEmotionResult:
    """What ei_calc (character) hands on: history, conflict, vector and Nova's top emotion."""

    history: list[dict[str, Any]] = field(default_factory=list)
    conflict: bool = False
    vector: EmotionVector = field(default_factory=lambda: EmotionVector(PLATEAU, QUELLE_NOT_SET))
    emotion: str = NEUTRAL
    arousal: float = NOVA_DEFAULT_AROUSAL


def character_emotion_update(
    turns: Iterable[Mapping[str, Any]],
    user_emotion: str | None,
    user_arousal: object,
    event_source: str,
    current_emotion: str = NEUTRAL,
    current_arousal: float = NOVA_DEFAULT_AROUSAL,
) -> CharacterEmotionResult:
    """Steps 2-5 of ei_calc for Nova.

    `turns` are the session turns (only assistant turns count); `current_*` is Nova's loaded
    emotion, kept when her history comes out empty. Events not from the user only decay.
    """
    turn_list = list(turns)
    base = emotion_history(turn_list, None, None, ASSISTANT, inject_current=False)
    if event_source == USER_EVENT_SOURCE:
        history, conflict = apply_empathy(base, user_emotion, user_arousal)
    else:
        history, conflict = base, False
    vector = emotion_vector(turn_list, None, None, ASSISTANT, inject_current=False)
    emotion, arousal = transfer_dominant(history, current_emotion, current_arousal)
    return CharacterEmotionResult(history, conflict, vector, emotion, arousal)
