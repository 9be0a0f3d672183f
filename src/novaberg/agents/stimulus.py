"""The only way nodes read a run's stimulus ("Reiz", docs/behaviour/graphs.md#stimulus).

Exactly one of `user_prompt` (what the counterpart said) and `own_thought` (Nova's
own thought on an impulse) is set, and `event_payload["reiz_herkunft"]` names which.
There is **no fallback** from one place to the other: an impulse without a thought, or a
user turn without a prompt, is a defect and raises `StimulusError` instead of running a
turn that judges the wrong text.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from novaberg.ei.canon import parse_number
from novaberg.wire import (
    FIELD_ORIGIN,
    FIELD_THOUGHT_AROUSAL,
    ORIGIN_OWN_THOUGHT,
    ORIGIN_USER,
)

log = logging.getLogger(__name__)

__all__ = [
    "ORIGIN_OWN_THOUGHT",
    "ORIGIN_USER",
    "StimulusError",
    "stimulus_arousal",
    "stimulus_is_own_thought",
    "stimulus_origin",
    "stimulus_text",
]


class StimulusError(ValueError):
    """The state's stimulus is contradictory or missing (there is no fallback)."""


def _payload(state: Mapping[str, Any]) -> Mapping[str, Any]:
    payload = state.get("event_payload")
    return payload if isinstance(payload, Mapping) else {}


def _filled(value: object) -> str:
    return value if isinstance(value, str) and value.strip() else ""


def stimulus_origin(state: Mapping[str, Any]) -> str:
    """`event_payload["reiz_herkunft"]`, default "nutzer_turn"."""
    origin = _payload(state).get(FIELD_ORIGIN)
    return origin if isinstance(origin, str) and origin else ORIGIN_USER


def stimulus_is_own_thought(state: Mapping[str, Any]) -> bool:
    """True when this run reacts to Nova's own impulse."""
    return stimulus_origin(state) == ORIGIN_OWN_THOUGHT


def stimulus_text(state: Mapping[str, Any]) -> str:
    """The text this run reacts to: `own_thought` on an impulse, else `user_prompt`.

    Raises `StimulusError` when both or neither place is set, or when the filled place does
    not match `reiz_herkunft`.
    """
    prompt = _filled(state.get("user_prompt"))
    thought = _filled(state.get("own_thought"))
    if prompt and thought:
        raise StimulusError("both user_prompt and own_thought are set; exactly one may be")
    if not prompt and not thought:
        raise StimulusError("neither user_prompt nor own_thought is set")
    if stimulus_is_own_thought(state):
        if not thought:
            raise StimulusError("reiz_herkunft is eigener_impuls but own_thought is empty")
        return thought
    if not prompt:
        raise StimulusError(
            f"reiz_herkunft is {stimulus_origin(state)!r} but user_prompt is empty "
            "(own_thought is set; no fallback)"
        )
    return prompt


def stimulus_arousal(state: Mapping[str, Any]) -> float | None:
    """The arousal the own thought was formed in (`gedanke_arousal`), or None.

    None when absent. A present but invalid value (boolean, non-numeric, outside [0, 1]) is
    logged at ERROR and also gives None — never clamped: a made-up level would lift Nova's
    state to an invented number. Numeric strings are
    invalid too: the wire value is a JSON number.
    """
    payload = _payload(state)
    if FIELD_THOUGHT_AROUSAL not in payload or payload[FIELD_THOUGHT_AROUSAL] is None:
        return None
    raw = payload[FIELD_THOUGHT_AROUSAL]
    number = parse_number(raw) if isinstance(raw, int | float) else None  # bool → None
    if number is None or not 0.0 <= number <= 1.0:
        log.error("gedanke_arousal %r is not a number in [0, 1]; ignored", raw)
        return None
    return number
