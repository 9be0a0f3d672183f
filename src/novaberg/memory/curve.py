"""The salience curve and the short-term TTL tiers (docs/behaviour/memory.md#curve,
docs/behaviour/memory.md#ttl-tiers).

Pure functions, nothing is written back. The same damping shape, with cap 10, gives the
long-term node and edge weights, so it lives here once.
"""

from __future__ import annotations

import math
from typing import Final

SALIENCE_CAP: Final = 1.0
"""CAP of the short-term salience curve."""

FREQUENCY_STEP: Final = 0.03
"""roh = eingang + (haeufigkeit - 1) × 0.03."""

DAMPING_EXPONENT: Final = 0.5
"""salienz = CAP × sin(min(roh/CAP, 1) × π/2) ** 0.5."""

REJECT_BELOW: Final = 0.67378
"""A new entry whose curved salience is below this (raw 0.3) is not stored
(docs/behaviour/memory.md#creation)."""

TIER_30_DAYS: Final = 0.94393
"""Curved salience of raw 0.7: 30-day TTL and the promotion gate."""

TIER_14_DAYS: Final = 0.84089
"""Curved salience of raw 0.5: 14-day TTL."""

PROMOTION_GATE: Final = TIER_30_DAYS
"""An entry at or above this is queued once for long-term promotion
(docs/behaviour/memory.md#promotion-gate)."""

DAY_SECONDS: Final = 86_400
TTL_LONG: Final = 30 * DAY_SECONDS
TTL_MEDIUM: Final = 14 * DAY_SECONDS
TTL_SHORT: Final = 7 * DAY_SECONDS
"""Short-term entry lifetimes 30/14/7 days."""

LONG_TERM_CAP: Final = 10.0
"""Cap of long-term node and edge weights: absolut = 10 × sin(min(roh/10, 1) × π/2) ** 0.5
(docs/behaviour/memory.md#promotion)."""


def damp(raw: float, cap: float, exponent: float = DAMPING_EXPONENT) -> float:
    """cap × sin(min(raw/cap, 1) × π/2) ** exponent; raw ≤ 0 gives 0 (no negative memory)."""
    if raw <= 0.0:
        return 0.0
    share = min(raw / cap, 1.0)
    return cap * math.sin(share * math.pi / 2) ** exponent


def raw_salience(intake: float, frequency: int = 1) -> float:
    """roh = eingang + (haeufigkeit − 1) × 0.03."""
    return intake + (max(frequency, 1) - 1) * FREQUENCY_STEP


def salience(intake: float, frequency: int = 1) -> float:
    """Curved short-term salience of a measured intake seen `frequency` times, in [0, 1]."""
    return damp(raw_salience(intake, frequency), SALIENCE_CAP)


def accepted(intake: float) -> bool:
    """Whether a new entry with this measured intake is stored at all (curve(eingang, 1))."""
    return salience(intake, 1) >= REJECT_BELOW


def ttl_seconds(curved: float) -> int:
    """TTL tier of a curved salience: 30 d ≥ 0.94393, 14 d ≥ 0.84089, else 7 d."""
    if curved >= TIER_30_DAYS:
        return TTL_LONG
    if curved >= TIER_14_DAYS:
        return TTL_MEDIUM
    return TTL_SHORT


def reaches_promotion(curved: float) -> bool:
    """Whether a curved salience crosses the long-term promotion gate."""
    return curved >= PROMOTION_GATE


def long_term_weight(raw: float) -> float:
    """gewicht_absolut of a long-term node or edge from its free-growing gewicht_roh."""
    return damp(raw, LONG_TERM_CAP)
