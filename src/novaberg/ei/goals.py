"""Goals: which of Nova's goals a prompt touches and how they bend the search
(docs/behaviour/emotion.md#goal-activation, docs/behaviour/emotion.md#search-key).

A goal close to the prompt (cos × motivation ≥ 0.40) is activated; activated goals raise
salience (gravitationsterm, clamped to [0, 1]) and pull the memory search key toward
themselves. The strongest ungated pull (zielsog_roh) is reported separately.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from novaberg.ei.canon import clamp01, parse_number

GOAL_ACTIVATION_THRESHOLD: Final = 0.40
"""GRAVITATIONS_SCHWELLE: a goal is active when cos × motivation ≥ 0.40."""

DEFAULT_MOTIVATION: Final = 0.5
"""Motivation of a goal that has none."""

GOAL_TERM_FACTOR: Final = 0.5
"""gravitationsterm = 0.5 × Σ strength of active goals."""

GOAL_TERM_MAX: Final = 1.0
"""The gravitationsterm channel carries a value in [0, 1]: an unbounded sum would let a few
matching goals make everything maximally salient."""

DIRECTIVE_INTENTION: Final = "anweisung"
"""Turns with this intention keep the raw search key."""

SEARCH_BLEND_DEFAULT: Final = 0.10
SEARCH_BLEND_BY_CLUSTER: Final[Mapping[str, float]] = {
    "werkstatt": 0.05,
    "foyer": 0.05,
    "schlachtfeld": 0.05,
    "bier": 0.20,
    "kissenschlacht": 0.25,
    "glut": 0.30,
    "feuerwerk": 0.30,
    **dict.fromkeys(
        ("regen", "schmollen", "nebel", "gewitter", "beichte", "wartezimmer", "paradox"),
        SEARCH_BLEND_DEFAULT,
    ),
}
"""Search-key blend f per landscape cluster (all 14 clusters)."""

_COS_TOLERANCE: Final = 1e-9
"""Float slack for cos(e, e') ≤ 1."""


def cosine(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Cosine similarity; None on length mismatch, empty/zero vectors or non-finite values."""
    if len(a) != len(b) or not a:
        return None
    dot = norm_a = norm_b = 0.0
    for x, y in zip(a, b, strict=True):
        dot += x * y
        norm_a += x * x
        norm_b += y * y
    if not (math.isfinite(dot) and math.isfinite(norm_a) and math.isfinite(norm_b)):
        return None
    if norm_a == 0.0 or norm_b == 0.0:
        return None
    return dot / math.sqrt(norm_a * norm_b)


def goal_motivation(goal: Mapping[str, Any]) -> float:
    """A goal's motivation, 0.5 when missing or unreadable."""
    value = parse_number(goal.get("motivation"))
    return DEFAULT_MOTIVATION if value is None else value


def gravitation_term(strengths: Iterable[float]) -> float:
    """Salience boost of the active goals: 0.5 × Σ strength, clamped to [0, 1]."""
    return min(GOAL_TERM_MAX, max(0.0, GOAL_TERM_FACTOR * sum(strengths)))


@dataclass(frozen=True, slots=True)
class GoalActivation:
    """Goal activation of a turn.

    activated: goals without their embedding, plus similarity and aktivierungs_staerke,
    strongest first (state aktivierte_ziele); goal_vectors: their embeddings keyed by the
    goal's "id" or, without one, its index in `activated` (state ziel_vektoren);
    gravitation_term: [0, 1]; raw_goal_pull: strongest ungated cos × motivation (zielsog_roh).
    """

    activated: list[dict[str, Any]] = field(default_factory=list)
    goal_vectors: dict[int, list[float]] = field(default_factory=dict)
    gravitation_term: float = 0.0
    raw_goal_pull: float = 0.0


def activate_goals(
    prompt_embedding: Sequence[float] | None, goals: Iterable[Mapping[str, Any]]
) -> GoalActivation:
    """Which goals the prompt touches and how strongly.

    Goals without a usable embedding (missing, other dimension, non-finite) are skipped.
    raw_goal_pull is floored at 0 so an unrelated prompt never lowers a salience.
    """
    if not prompt_embedding:
        return GoalActivation()
    scored: list[tuple[float, float, Mapping[str, Any]]] = []
    for goal in goals:
        vector = goal.get("embedding")
        if vector is None:
            continue
        similarity = cosine(prompt_embedding, list(vector))
        if similarity is None:
            continue
        scored.append((similarity * goal_motivation(goal), similarity, goal))
    if not scored:
        return GoalActivation()

    raw_pull = max(0.0, max(strength for strength, _, _ in scored))
    active = sorted(
        (item for item in scored if item[0] >= GOAL_ACTIVATION_THRESHOLD), key=lambda i: -i[0]
    )
    activated: list[dict[str, Any]] = []
    vectors: dict[int, list[float]] = {}
    for index, (strength, similarity, goal) in enumerate(active):
        entry = {key: value for key, value in goal.items() if key != "embedding"}
        entry["similarity"] = similarity
        entry["aktivierungs_staerke"] = strength
        activated.append(entry)
        goal_id = goal.get("id")
        key = goal_id if isinstance(goal_id, int) and not isinstance(goal_id, bool) else index
        vectors[key] = [float(x) for x in goal["embedding"]]
    return GoalActivation(
        activated, vectors, gravitation_term(s for s, _, _ in active), clamp01(raw_pull)
    )


def search_blend(cluster: str | None) -> float | None:
    """Blend f for a landscape cluster; None for an unknown cluster."""
    if cluster is None:
        return None
    return SEARCH_BLEND_BY_CLUSTER.get(cluster)


def search_key(
    embedding: Sequence[float],
    goals: Iterable[tuple[Sequence[float], float]],
    cluster: str | None,
    intentions: Iterable[str] | str | None = None,
) -> list[float]:
    """Memory search key e' = (1−f)·e + f·Σ e_goal × strength.

    `goals` are (embedding, aktivierungs_staerke) of the active goals. The raw e comes back
    for intention anweisung, an unknown cluster, no goals or embeddings, a dimension
    mismatch, non-finite values, or when cos(e, e') is not in (0, 1].
    """
    raw = [float(x) for x in embedding]
    if isinstance(intentions, str):
        intentions = [intentions]
    if intentions is not None and DIRECTIVE_INTENTION in intentions:
        return raw
    blend = search_blend(cluster)
    pairs = list(goals)
    if blend is None or not raw or not pairs:
        return raw
    if not all(math.isfinite(x) for x in raw):
        return raw
    pull = [0.0] * len(raw)
    for vector, strength in pairs:
        if vector is None or len(vector) != len(raw) or not math.isfinite(strength):
            return raw
        for i, x in enumerate(vector):
            pull[i] += float(x) * strength
    shifted = [(1 - blend) * x + blend * p for x, p in zip(raw, pull, strict=True)]
    if not all(math.isfinite(x) for x in shifted):
        return raw
    similarity = cosine(raw, shifted)
    if similarity is None or not (0.0 < similarity <= 1.0 + _COS_TOLERANCE):
        return raw
    return shifted
