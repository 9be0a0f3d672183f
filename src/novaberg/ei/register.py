"""Nova's register space (Raum): depth and closeness, pulled toward a target
(docs/behaviour/emotion.md#register-space).

The target comes from conversation labels (mode → depth; dynamic and style → closeness).
Nova follows it gradually, faster downward than upward, and never overshoots.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Final, NamedTuple

logger = logging.getLogger(__name__)

DEFAULT_DEPTH: Final = 0.3
DEFAULT_CLOSENESS: Final = 0.5
"""RegisterSpace() defaults."""

DEPTH_BY_MODE: Final[Mapping[str, float]] = {
    "philosophischer_austausch": 0.9,
    "fachgespraech": 0.8,
    "emotional": 0.7,
    "lernmodus": 0.7,
    "arbeitsmodus": 0.6,
    "beratend": 0.6,
    "kreativ": 0.5,
    "spielerisch": 0.4,
    "berichtend": 0.4,
    "alltag": 0.3,
}
"""Target depth by conversation mode."""

UNKNOWN_DEPTH: Final = 0.3
"""Target depth for an unknown mode (logged as a warning: model output)."""

CLOSENESS_BY_DYNAMIC: Final[Mapping[str, float]] = {
    "vertrauen": 1.0,
    "dankbar": 0.8,
    "hilfesuchend": 0.6,
    "neutral": 0.5,
    "angriff": 0.3,
    "distanz": 0.2,
}
"""Closeness contribution of the relationship dynamic."""

CLOSENESS_BY_STYLE: Final[Mapping[str, float]] = {
    "locker": 0.9,
    "jugendlich": 0.85,
    "emotional": 0.7,
    "neutral": 0.5,
    "fachlich": 0.4,
    "formell": 0.2,
}
"""Closeness contribution of the language style."""

UNKNOWN_CLOSENESS: Final = 0.5
"""Closeness contribution of an unknown dynamic or style."""

PULL_UP: Final = 0.35
PULL_DOWN: Final = 0.65
"""Share of the gap closed per turn when rising / falling."""

SNAP_DISTANCE: Final = 0.02
"""Closer than this to the target after a step → take the target."""

GV_BIT_THRESHOLD: Final = 0.5
"""E, N, T bits are 1 at or above 0.5."""


class RegisterTarget(NamedTuple):
    """Target point of the register space."""

    depth: float
    closeness: float


class RegisterBits(NamedTuple):
    """GV bits from energy, closeness and depth."""

    e: int
    n: int
    t: int


def target_depth(mode: str) -> float:
    """Target depth for a mode; unknown modes log a warning and give 0.3."""
    value = DEPTH_BY_MODE.get(mode)
    if value is None:
        logger.warning("unknown mode %r: target depth %s", mode, UNKNOWN_DEPTH)
        return UNKNOWN_DEPTH
    return value


def target_closeness(relationship_dynamic: str, language_style: str) -> float:
    """Target closeness = (DYN + STIL) / 2, rounded to 2."""
    dynamic = CLOSENESS_BY_DYNAMIC.get(relationship_dynamic, UNKNOWN_CLOSENESS)
    style = CLOSENESS_BY_STYLE.get(language_style, UNKNOWN_CLOSENESS)
    return round((dynamic + style) / 2, 2)


def register_target(mode: str, relationship_dynamic: str, language_style: str) -> RegisterTarget:
    """Where the labels of a turn place the register space."""
    return RegisterTarget(
        target_depth(mode), target_closeness(relationship_dynamic, language_style)
    )


def pull_axis(current: float, target: float, factor: float = 1.0) -> float:
    """One step of one axis toward its target.

    A zero share (factor 0) freezes the axis completely, without rounding or snapping.
    """
    if current == target:
        return current
    rate = PULL_UP if target > current else PULL_DOWN
    share = min(1.0, max(0.0, rate * factor))
    if share == 0.0:
        return current
    new = round(current + share * (target - current), 2)
    if abs(target - new) < SNAP_DISTANCE:
        return target
    low, high = min(current, target), max(current, target)
    return min(high, max(low, new))


def pull_register(
    depth: float, closeness: float, target: RegisterTarget, factor: float = 1.0
) -> RegisterTarget:
    """Pull both axes toward the target by `factor` (1.0 in ei_calc)."""
    return RegisterTarget(
        pull_axis(depth, target.depth, factor), pull_axis(closeness, target.closeness, factor)
    )


def register_bits(arousal: float, closeness: float, depth: float) -> RegisterBits:
    """GV bits E (arousal), N (closeness), T (depth), each 1 at ≥ 0.5."""
    return RegisterBits(
        int(arousal >= GV_BIT_THRESHOLD),
        int(closeness >= GV_BIT_THRESHOLD),
        int(depth >= GV_BIT_THRESHOLD),
    )
