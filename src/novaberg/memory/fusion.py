"""Reciprocal rank fusion: one ranking from several (Cormack, Clarke & Büttcher, SIGIR 2009).

Each ranked list (vector search in a view, BM25, trigrams — per memory layer) gives an item
1 / (k + rank); an item's score is the sum over the lists it appears in. Ranks, not scores,
are fused, so a cosine and a BM25 sum need no common scale; an item several methods agree
on rises above one that a single method ranks first. The measured comparison with the
single methods is bench/memory_recall.py. Pure functions.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Generic, TypeVar

RRF_K: Final = 60
"""The constant of the original paper: damps the head of each list, so rank 1 of one list
does not outweigh consistent middle ranks of others."""

K = TypeVar("K", bound=Hashable)


@dataclass(slots=True)
class Fused(Generic[K]):
    """An item's fused score and, per list it came from, its (rank, score) there."""

    key: K
    score: float = 0.0
    signals: dict[str, tuple[int, float]] = field(default_factory=dict)


def reciprocal_rank_fusion(
    lists: Mapping[str, Sequence[tuple[K, float]]], *, k: int = RRF_K
) -> list[Fused[K]]:
    """Fuse named ranked lists of (key, score), best first in each; best fused first.

    A key listed twice in one list counts once (its best rank). Ties keep the order in
    which the keys were first met (lists in the mapping's order)."""
    fused: dict[K, Fused[K]] = {}
    for name, ranked in lists.items():
        for rank, (key, score) in enumerate(ranked, start=1):
            item = fused.setdefault(key, Fused(key))
            if name in item.signals:
                continue
            item.signals[name] = (rank, score)
            item.score += 1.0 / (k + rank)
    return sorted(fused.values(), key=lambda item: -item.score)
