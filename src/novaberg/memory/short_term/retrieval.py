"""Retrieval: the enricher's short-term resonance (docs/behaviour/memory.md#retrieval).

The pair's top 10 by cosine, both perspectives, kept at (1 + cos)/2 ≥ 0.72; nothing is
reinforced by being read.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Final

import numpy as np

from novaberg.memory.context import SOURCE_SHORT_TERM, ContextEntry
from novaberg.pair import Pair
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_codec import ShortTermHit
from novaberg.store.short_term_fields import DEFAULT_DIMENSION, EntryFields

log = logging.getLogger(__name__)

RETRIEVAL_TOP_K: Final = 10
RETRIEVAL_THRESHOLD: Final = 0.72
"""KNN top 10 of the pair; keep (1 + cos)/2 ≥ 0.72."""


async def retrieve(
    store: ShortTermStore,
    pair: Pair,
    vector: Sequence[float] | np.ndarray | None,
    *,
    k: int = RETRIEVAL_TOP_K,
    threshold: float = RETRIEVAL_THRESHOLD,
) -> list[ContextEntry]:
    """The entries near `vector` as the reducer's entries; [] is a valid answer."""
    if vector is None or len(vector) == 0:
        return []
    entries: list[ContextEntry] = []
    for hit in await store.nearest(pair, vector, k):
        entry = EntryFields.of(hit.fields)
        if hit.similarity < threshold or not entry.text.strip():
            continue
        if entry.salience is None:
            log.error("kzg %s: entry %s has no readable salienz; skipped", pair, hit.key)
            continue
        entries.append(context_entry(hit))
    return entries


def context_entry(hit: ShortTermHit) -> ContextEntry:
    """A search hit as the reducer's ContextEntry (`meta` keeps the entry's field names:
    it is logged as it is)."""
    entry = EntryFields.of(hit.fields)
    return ContextEntry(
        source=SOURCE_SHORT_TERM,
        subtype=entry.dimension or DEFAULT_DIMENSION,
        text=entry.text.strip(),
        weight=float(entry.salience or 0.0),  # retrieve() drops entries without a salience
        meta={
            "key": hit.key,
            "similarity": hit.similarity,
            "themen": entry.themes,
            "beobachter": entry.observer,
            "erstellt_am": entry.created_at,
            "arousal": entry.arousal,
            "emotion": entry.emotion,
            "modus": entry.mode,
            "gedaechtnistyp": entry.memory_type,
            "emotions_vektor": entry.emotion_vector,
        },
    )
