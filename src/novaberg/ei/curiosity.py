"""The conversation vector's curiosity: the colour mix of the two moods, the open knowledge
gaps and how close those lie to the character's active goals
(docs/behaviour/emotion.md#colour-mix-and-curiosity). Pure: no I/O, vectors passed in.

- **Colour mix** (Farbmisch): every canonical emotion but neutral has a hue, its sector's
  place on the wheel (sector 1 at 0°, 45° per sector). The counterpart's and the
  character's emotions are added as arrows of their arousal's length; the sum's angle is
  the turn's hue (Farbton), its sector the nearest sector, its saturation the sum's length
  over the arousals added (1 when both feel alike, 0 when their colours cancel). No hue
  when nothing with a colour was felt or the colours cancel.
- **Curiosity** (Neugier) in [0, 1] is the sum of three shares, capped at 1:
  the colour share `0.4 × max(0, cos(hue − hue of neugierig)) × min(1, strength)`,
  the gap share `0.1` per open gap up to `0.3`, and the goal boost
  `0.3 × (c − 0.3) / 0.7` for the best cosine `c ≥ 0.3` between an open gap and an
  activated goal. A crisis gives 0 (no room for curiosity, as there is none for thinking
  ahead); a goal boost that could not be measured is None and adds nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from novaberg.ei.canon import SECTOR_COUNT, SECTORS, sector_of

HUE_PER_SECTOR: Final = 360.0 / SECTOR_COUNT
CURIOUS_SECTOR: Final = SECTORS["neugierig"]
MIX_EPSILON: Final = 1e-6
"""A colour sum shorter than this has no hue (the colours cancel)."""

COLOUR_WEIGHT: Final = 0.4
GAP_STEP: Final = 0.1
GAP_MAX: Final = 0.3
GOAL_WEIGHT: Final = 0.3
GOAL_FLOOR: Final = 0.3
"""Cosines below this are unrelated texts for a sentence embedder: no boost."""


def sector_hue(sector: int) -> float:
    """The hue of a sector (1..8) in degrees: sector 1 at 0°."""
    return (sector - 1) * HUE_PER_SECTOR


@dataclass(frozen=True, slots=True)
class ColourMix:
    """The mixed colour of the turn's moods."""

    hue: float | None
    sector: int | None
    saturation: float
    strength: float

    def as_detail(self) -> dict[str, object]:
        return {
            "grad": self.hue,
            "sektor": self.sector,
            "saettigung": self.saturation,
            "staerke": self.strength,
        }


def colour_mix(colours: Iterable[tuple[str | None, float]]) -> ColourMix:
    """Mix `(emotion, arousal)` pairs; neutral, unknown names and arousal ≤ 0 add nothing
    (arousal above 1 counts as 1)."""
    x = y = total = 0.0
    for emotion, arousal in colours:
        sector = sector_of(emotion)
        if sector is None or not arousal > 0:
            continue
        weight = min(1.0, float(arousal))
        angle = math.radians(sector_hue(sector))
        x += weight * math.cos(angle)
        y += weight * math.sin(angle)
        total += weight
    strength = math.hypot(x, y)
    if total == 0 or strength < MIX_EPSILON:
        return ColourMix(None, None, 0.0, round(strength, 4))
    hue = math.degrees(math.atan2(y, x)) % 360.0
    sector = round(hue / HUE_PER_SECTOR) % SECTOR_COUNT + 1
    return ColourMix(round(hue, 1), sector, round(strength / total, 4), round(strength, 4))


def colour_share(mix: ColourMix) -> float:
    """How far the mixed colour leans to curiosity's hue, by its strength."""
    if mix.hue is None:
        return 0.0
    lean = max(0.0, math.cos(math.radians(mix.hue - sector_hue(CURIOUS_SECTOR))))
    return round(COLOUR_WEIGHT * lean * min(1.0, mix.strength), 4)


def gap_share(open_gaps: int) -> float:
    return round(min(GAP_MAX, GAP_STEP * max(0, open_gaps)), 4)


def cosine(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Cosine similarity; None for empty, zero or differently sized vectors."""
    if not a or not b or len(a) != len(b):
        return None
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else None


def goal_closeness(
    gap_vectors: Sequence[Sequence[float]], goal_vectors: Iterable[Sequence[float]]
) -> list[float | None]:
    """Per gap the best cosine to any goal (None when none is comparable)."""
    goals = list(goal_vectors)
    found: list[float | None] = []
    for gap in gap_vectors:
        values = [c for c in (cosine(gap, goal) for goal in goals) if c is not None]
        found.append(round(max(values), 4) if values else None)
    return found


def goal_boost(closeness: float | None) -> float | None:
    """The boost of the gap closest to a goal; None when it could not be measured."""
    if closeness is None:
        return None
    if closeness < GOAL_FLOOR:
        return 0.0
    return round(GOAL_WEIGHT * (closeness - GOAL_FLOOR) / (1.0 - GOAL_FLOOR), 4)


@dataclass(frozen=True, slots=True)
class Curiosity:
    value: float
    colour: float
    gaps: float
    goals: float | None

    def as_detail(self) -> dict[str, object]:
        return {
            "neugier": self.value,
            "neugier_anteile": {"farbe": self.colour, "luecken": self.gaps, "ziele": self.goals},
        }


def curiosity(
    mix: ColourMix, open_gaps: int, boost: float | None, *, crisis: bool = False
) -> Curiosity:
    """The turn's curiosity from its colour, its open gaps and the goal boost (`goal_boost`
    of the gap closest to a goal; 0 without gaps or goals, None when not measurable)."""
    if crisis:
        return Curiosity(0.0, 0.0, 0.0, 0.0)
    colour, gaps = colour_share(mix), gap_share(open_gaps)
    value = min(1.0, colour + gaps + (boost or 0.0))
    return Curiosity(round(value, 4), colour, gaps, boost)
