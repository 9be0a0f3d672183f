"""Edge math of the long-term memory ("synapses"), pure functions (docs/behaviour/memory.md#edges).

Four layers can join two nodes; each gives a depth in [0, 1]:
- entity: they share an entity id (depth 1);
- embedding: cosine above 0.55, depth linear from 0 at 0.55 to 1 at cosine 1;
- themes: shared themes / the larger theme count of the two;
- timeline: same precision and at most 7 days (minute) / 21 days (day) apart, depth
  (tolerance − distance) / tolerance.

The applying layer with the highest factor (1.0 / 0.8 / 0.5 / 0.4) wins and sets factor and
depth; every further layer adds 0.1 to both anchors. Anchors are the two nodes'
absolute weight × factor + bonus; the edge from the weaker towards the stronger node is
pulled up by 0.444 of the gap, the other one down by 0.297, both scaled by depth from the
weaker anchor. Raw values are damped with cap 10, exponent 0.5 (`curve.long_term_weight`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final, Protocol

from novaberg.memory.curve import long_term_weight

LAYER_ENTITY: Final = "entitaet"
LAYER_EMBEDDING: Final = "embedding"
LAYER_THEMES: Final = "themen"
LAYER_TIMELINE: Final = "timeline"
"""An edge's reasons (stored data: `lzg_kanten.verbindungs_gruende`)."""

LAYER_FACTORS: Final[Mapping[str, float]] = {
    LAYER_ENTITY: 1.0,
    LAYER_EMBEDDING: 0.8,
    LAYER_THEMES: 0.5,
    LAYER_TIMELINE: 0.4,
}
"""Static worth of each layer."""

EMBEDDING_THRESHOLD: Final = 0.55
"""The embedding layer applies above this cosine."""

TIMELINE_TOLERANCE_DAYS: Final[Mapping[str, int]] = {"minute": 7, "day": 21}
"""Timeline layer: same precision and at most this many days apart."""

LAYER_BONUS: Final = 0.1
"""+0.1 per applying layer beyond the winner."""

PULL_UP: Final = 0.444
PULL_DOWN: Final = 0.297
"""The weak→strong edge is pulled up by 0.444 of the anchor gap, strong→weak down by 0.297."""


class Linkable(Protocol):
    """What the layers compare of two nodes (a `LongTermNode` is one)."""

    @property
    def entity_ids(self) -> Sequence[int]: ...
    @property
    def themes(self) -> Sequence[str]: ...
    @property
    def timeline_precision(self) -> str | None: ...
    @property
    def timeline_time(self) -> datetime | None: ...


class FrozenEdge(Protocol):
    """What a stored edge keeps of how it was made (a `StoredEdge` is one)."""

    @property
    def reasons(self) -> Sequence[str]: ...
    @property
    def initial_cosine(self) -> float | None: ...
    @property
    def timeline_days(self) -> float | None: ...


@dataclass(slots=True)
class Layers:
    """The layers that apply between two nodes, and the values frozen into the edge."""

    depths: dict[str, float] = field(default_factory=dict)
    shared_entities: list[int] = field(default_factory=list)
    shared_themes: list[str] = field(default_factory=list)
    timeline_days: float | None = None
    cosine: float | None = None

    @property
    def reasons(self) -> list[str]:
        return list(self.depths)

    def __bool__(self) -> bool:
        return bool(self.depths)


def embedding_depth(cosine: float) -> float:
    span = 1.0 - EMBEDDING_THRESHOLD
    return max(0.0, min(1.0, (cosine - EMBEDDING_THRESHOLD) / span))


def theme_depth(a: Iterable[str], b: Iterable[str]) -> tuple[float, list[str]]:
    set_a = {t for t in a if t}
    set_b = {t for t in b if t}
    shared = sorted(set_a & set_b)
    if not shared:
        return 0.0, []
    return len(shared) / max(len(set_a), len(set_b)), shared


def timeline_depth(
    precision_a: str | None,
    precision_b: str | None,
    time_a: datetime | None,
    time_b: datetime | None,
) -> tuple[float, float | None]:
    """(depth, distance in days); distance None means the layer does not apply."""
    if not precision_a or precision_a != precision_b or time_a is None or time_b is None:
        return 0.0, None
    tolerance = TIMELINE_TOLERANCE_DAYS.get(precision_a)
    if tolerance is None:
        return 0.0, None
    days = abs((time_a.date() - time_b.date()).days)
    if days > tolerance:
        return 0.0, None
    return (tolerance - days) / tolerance, float(days)


def find_layers(a: Linkable, b: Linkable, cosine: float | None) -> Layers:
    """Layers between two nodes; `cosine` is their embedding cosine (None if unknown)."""
    layers = Layers()
    entities = sorted(set(a.entity_ids or []) & set(b.entity_ids or []))
    if entities:
        layers.depths[LAYER_ENTITY] = 1.0
        layers.shared_entities = entities
    if cosine is not None and cosine > EMBEDDING_THRESHOLD:
        layers.depths[LAYER_EMBEDDING] = embedding_depth(cosine)
        layers.cosine = cosine
    depth, shared = theme_depth(a.themes or [], b.themes or [])
    if shared:
        layers.depths[LAYER_THEMES] = depth
        layers.shared_themes = shared
    depth, days = timeline_depth(
        a.timeline_precision, b.timeline_precision, a.timeline_time, b.timeline_time
    )
    if days is not None:
        layers.depths[LAYER_TIMELINE] = depth
        layers.timeline_days = days
    return layers


def frozen_layers(
    edge: FrozenEdge,
    themes_a: Iterable[str],
    themes_b: Iterable[str],
    precision: str | None = None,
) -> dict[str, float]:
    """Layer depths of a stored edge for recomputation after a reinforcement.

    Entity and embedding come from the frozen values, themes from the nodes' current
    themes, the timeline from the frozen distance (tolerance of `precision`, else 21 d).
    """
    depths: dict[str, float] = {}
    reasons = set(edge.reasons or [])
    if LAYER_ENTITY in reasons:
        depths[LAYER_ENTITY] = 1.0
    cosine = edge.initial_cosine
    if LAYER_EMBEDDING in reasons and cosine is not None:
        depths[LAYER_EMBEDDING] = embedding_depth(float(cosine))
    if LAYER_THEMES in reasons:
        depth, shared = theme_depth(themes_a, themes_b)
        if shared:
            depths[LAYER_THEMES] = depth
    days = edge.timeline_days
    if LAYER_TIMELINE in reasons and days is not None:
        tolerance = TIMELINE_TOLERANCE_DAYS.get(
            precision or "", max(TIMELINE_TOLERANCE_DAYS.values())
        )
        depths[LAYER_TIMELINE] = max(0.0, (tolerance - float(days)) / tolerance)
    return depths


def edge_strengths(
    weight_a: float, weight_b: float, depths: Mapping[str, float]
) -> tuple[float, float]:
    """Raw strengths (a→b, b→a) from the nodes' absolute weights and the applying layers."""
    if not depths:
        raise ValueError("edge_strengths needs at least one applying layer")
    winner = max(depths, key=lambda name: LAYER_FACTORS[name])
    factor = LAYER_FACTORS[winner]
    depth = depths[winner]
    bonus = LAYER_BONUS * (len(depths) - 1)
    anchor_a = weight_a * factor + bonus
    anchor_b = weight_b * factor + bonus
    weak, strong = sorted((anchor_a, anchor_b))
    gap = strong - weak
    weak_to_strong = weak + gap * PULL_UP * depth
    strong_to_weak = weak + (gap - gap * PULL_DOWN) * depth
    if anchor_a <= anchor_b:
        return weak_to_strong, strong_to_weak
    return strong_to_weak, weak_to_strong


def damped(raw: float) -> float:
    """The absolute weight of an edge (cap 10, exponent 0.5)."""
    return long_term_weight(raw)
