"""Nova's persisted emotional state (`nova_state` hash) and its reload
(docs/behaviour/emotion.md#persisted-state, docs/behaviour/emotion.md#reload).

Writing turns Nova's emotion and register space into string fields; reloading reads them back
tolerantly and lets a long user pause fade the mood back toward calm.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, cast

from novaberg.ei.canon import clamp01, parse_number
from novaberg.ei.labels import (
    DEFAULT_EMOTION,
    DEFAULT_EMOTIONS_VECTOR,
    DEFAULT_LANGUAGE_STYLE,
    DEFAULT_MODE,
    DEFAULT_TONE,
    EMOTION_DEFAULTS,
    EMOTION_FIELDS,
)
from novaberg.ei.register import DEFAULT_CLOSENESS, DEFAULT_DEPTH, register_target
from novaberg.ei.timeutil import require_epoch, to_epoch

logger = logging.getLogger(__name__)

RAUM_TIEFE: Final = "raum_tiefe"
RAUM_NAEHE: Final = "raum_naehe"
TURN_ZEIT: Final = "turn_zeit"
NUTZER_ZEIT: Final = "nutzer_zeit"
"""Hash field names besides the emotion fields (wire names)."""

STORED_EMOTION_FIELDS: Final = tuple(f for f in EMOTION_FIELDS if f != "emotions_vector_quelle")
"""Emotion fields stored in nova_state; emotions_vector_quelle is not."""

NOVA_STATE_FIELDS: Final = (RAUM_TIEFE, RAUM_NAEHE, *STORED_EMOTION_FIELDS, TURN_ZEIT)
"""The 12 fields written on every turn."""

BAD_AROUSAL: Final = 0.5
"""Arousal when the stored value is missing or unreadable."""

PAUSE_DECAY_POINTS: Final = ((0.0, 1.0), (3600.0, 0.90), (7200.0, 0.45), (10800.0, 0.0))
"""(pause seconds, factor f) knots of the piecewise-linear pause decay."""

RESET_BELOW: Final = 0.45
"""f below this resets emotion, mode, style, tone and vector."""

AROUSAL_REST: Final = 0.5
"""Arousal a long pause fades toward: 0.5 + (a − 0.5) × f."""


def resolve_user_time(received_at: object, now: float | datetime) -> float:
    """nutzer_zeit of a user turn: the payload's empfangen_am, else now with a warning."""
    moment = to_epoch(received_at)
    now_epoch = require_epoch(now)
    if moment is None:
        logger.warning("empfangen_am %r missing or unreadable; nutzer_zeit = now", received_at)
        return now_epoch
    return moment


def _format(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int | float):
        return repr(float(value))
    return str(value)


def _register_values(register: object) -> tuple[float, float]:
    """(depth, closeness) from a RegisterSpace-like object, a mapping (wire keys tiefe, naehe)
    or a pair."""
    if isinstance(register, Mapping):
        return float(register["tiefe"]), float(register["naehe"])
    if hasattr(register, "depth") and hasattr(register, "closeness"):
        return float(register.depth), float(register.closeness)
    depth, closeness = cast(tuple[float, float], register)
    return float(depth), float(closeness)


def nova_state_fields(
    emotion: Mapping[str, Any],
    register: object,
    now: float | datetime,
    nutzer_zeit: float | datetime | None = None,
) -> dict[str, str]:
    """Field → string mapping for HSET nova_state:{user}:{char}.

    Always the 12 fields; `nutzer_zeit` only when given, which callers do on user turns only.
    `emotion` is an Emotion.to_dict()-like mapping; missing fields take the Emotion defaults.
    """
    depth, closeness = _register_values(register)
    now_epoch = require_epoch(now)
    fields = {RAUM_TIEFE: _format(depth), RAUM_NAEHE: _format(closeness)}
    for name in STORED_EMOTION_FIELDS:
        fields[name] = _format(emotion.get(name, EMOTION_DEFAULTS[name]))
    fields[TURN_ZEIT] = _format(now_epoch)
    if nutzer_zeit is not None:
        user_epoch = to_epoch(nutzer_zeit)
        fields[NUTZER_ZEIT] = _format(now_epoch if user_epoch is None else user_epoch)
    return fields


def pause_decay_factor(pause_seconds: float) -> float:
    """f for a pause: 1.0 → 0.90 at 1 h → 0.45 at 2 h → 0 at 3 h, linear between."""
    if pause_seconds <= PAUSE_DECAY_POINTS[0][0]:
        return PAUSE_DECAY_POINTS[0][1]
    for (x0, y0), (x1, y1) in itertools.pairwise(PAUSE_DECAY_POINTS):
        if pause_seconds <= x1:
            return y0 + (y1 - y0) * (pause_seconds - x0) / (x1 - x0)
    return PAUSE_DECAY_POINTS[-1][1]


@dataclass(frozen=True, slots=True)
class NovaStateReload:
    """Nova's state as db_zugriff loads it: Emotion fields, register space, and what the pause did."""

    emotion: dict[str, Any] = field(default_factory=lambda: dict(EMOTION_DEFAULTS))
    depth: float = DEFAULT_DEPTH
    closeness: float = DEFAULT_CLOSENESS
    pause_seconds: float | None = None
    decay_factor: float | None = None
    reset: bool = False


def _text(value: object) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _stored_axis(value: object, fallback: float) -> float:
    number = parse_number(value.decode() if isinstance(value, bytes) else value)
    return fallback if number is None else clamp01(number)


def reload_nova_state(
    stored: Mapping[Any, Any] | None,
    now: float | datetime,
    is_user_turn: bool,
    nutzer_zeit: float | datetime | None = None,
    own_thought_arousal: object = None,
) -> NovaStateReload:
    """Rebuild Nova's emotion and register space from the nova_state hash
    (docs/behaviour/emotion.md#reload).

    On a user turn the pause since the last user turn (`nutzer_zeit` if given, else the stored
    field) fades arousal toward 0.5; below f 0.45 the categories reset, register space and dynamic stay.
    A self-impulse with an arousal level lifts arousal to at least that level.
    """
    values = {_text(key): _text(value) for key, value in (stored or {}).items()}
    emotion: dict[str, Any] = dict(EMOTION_DEFAULTS)
    for name in STORED_EMOTION_FIELDS:
        if name != "arousal" and values.get(name) is not None:
            emotion[name] = values[name]
    if stored:
        level = parse_number(values.get("arousal"))
        emotion["arousal"] = BAD_AROUSAL if level is None else clamp01(level)

    target = register_target(
        emotion["mode"], emotion["relationship_dynamic"], emotion["language_style"]
    )
    depth = _stored_axis(values.get(RAUM_TIEFE), target.depth)
    closeness = _stored_axis(values.get(RAUM_NAEHE), target.closeness)

    pause = factor = None
    reset = False
    if is_user_turn:
        last_user = to_epoch(nutzer_zeit) if nutzer_zeit is not None else None
        if last_user is None:
            last_user = to_epoch(values.get(NUTZER_ZEIT))
        if last_user is not None:
            pause = max(0.0, require_epoch(now) - last_user)
            factor = pause_decay_factor(pause)
            emotion["arousal"] = AROUSAL_REST + (emotion["arousal"] - AROUSAL_REST) * factor
            if factor < RESET_BELOW:
                reset = True
                emotion.update(
                    emotion=DEFAULT_EMOTION,
                    mode=DEFAULT_MODE,
                    language_style=DEFAULT_LANGUAGE_STYLE,
                    tone=DEFAULT_TONE,
                    emotions_vector=DEFAULT_EMOTIONS_VECTOR,
                )

    impulse = parse_number(own_thought_arousal)
    if impulse is not None:
        emotion["arousal"] = max(emotion["arousal"], clamp01(impulse))
    return NovaStateReload(emotion, depth, closeness, pause, factor, reset)
