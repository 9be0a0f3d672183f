"""Nova's wheel toward a user (Zuwendungsrad) and the user weight derived from it.

`nutzer_gewichtung = 0.9 + Σ up − Σ down` over 12 spokes rated 0/0.5/1, clamped to
[0.5, 1.5], median of 3 (docs/behaviour/memory.md#user-weight). The six withdrawal spokes
count as "down", the other six as "up"; this module is the one place that decides which is
which. Pure: no I/O, no model
calls.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Final

from pydantic import AfterValidator, BaseModel, BeforeValidator, Field

UP_SPOKES: Final = ("treue", "dienst", "pflicht", "aufmerksamkeit", "wissbegier", "wohlwollen")
"""Spokes of turning toward the user: each rating adds to the weight."""

DOWN_SPOKES: Final = (
    "selbstbezogen",
    "gleichgueltig",
    "widerspenstig",
    "distanz",
    "langeweile",
    "misstrauen",
)
"""The withdrawal spokes: each rating subtracts from the weight."""

SPOKES: Final = UP_SPOKES + DOWN_SPOKES
"""All 12 spokes, turning toward the user first."""

BASE_WEIGHT: Final = 0.9
"""The weight of a neutral wheel, and `charakter_hash.nutzer_gewichtung`'s default."""

WEIGHT_MIN: Final = 0.5
WEIGHT_MAX: Final = 1.5
"""The weight's clamp."""

SAMPLES: Final = 3
"""Independent ratings per distillation; the median one is kept."""

RATINGS: Final = (0.0, 0.5, 1.0)


def _not_boolean(value: Any) -> Any:
    # JSON true would pass as 1.0; a yes/no is not a rating.
    if isinstance(value, bool):
        raise ValueError("a spoke is rated 0, 0.5 or 1, not true/false")
    return value


def _one_of_the_ratings(value: float) -> float:
    if value not in RATINGS:
        raise ValueError(f"a spoke is rated 0, 0.5 or 1, not {value}")
    return value


Rating = Annotated[
    float,
    BeforeValidator(_not_boolean),
    AfterValidator(_one_of_the_ratings),
    Field(json_schema_extra={"enum": [0, 0.5, 1]}),
]


class SpokeRatings(BaseModel):
    """One rating of the wheel: every spoke 0, 0.5 or 1 (wire names are the spokes)."""

    treue: Rating
    dienst: Rating
    pflicht: Rating
    aufmerksamkeit: Rating
    wissbegier: Rating
    wohlwollen: Rating
    selbstbezogen: Rating
    gleichgueltig: Rating
    widerspenstig: Rating
    distanz: Rating
    langeweile: Rating
    misstrauen: Rating

    def as_wheel(self) -> dict[str, float]:
        return {spoke: float(getattr(self, spoke)) for spoke in SPOKES}


def user_weight(wheel: Mapping[str, float]) -> float:
    """0.9 + Σ up − Σ down, clamped to [0.5, 1.5]. Every spoke must be present."""
    raw = BASE_WEIGHT + sum(wheel[s] for s in UP_SPOKES) - sum(wheel[s] for s in DOWN_SPOKES)
    return round(min(WEIGHT_MAX, max(WEIGHT_MIN, raw)), 4)


def median_rating(wheels: Sequence[Mapping[str, float]]) -> tuple[float, dict[str, float]]:
    """(median weight, the wheel that produced it) of an odd number of ratings.

    The stored wheel is one of the rated ones (not a per-spoke median), so weight and
    wheel in `charakter_hash` always belong together.
    """
    if not wheels or len(wheels) % 2 == 0:
        raise ValueError(f"median of an odd number of ratings, got {len(wheels)}")
    weights = [user_weight(w) for w in wheels]
    median = statistics.median(weights)
    chosen = wheels[weights.index(median)]
    return median, {spoke: float(chosen[spoke]) for spoke in SPOKES}
