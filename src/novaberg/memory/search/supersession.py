"""The latest value of a fact that changed outranks the old one: "I live in Bristol now"
before "I live in Leeds" (docs/behaviour/memory.md#hybrid-search, "Latest value").

A changed fact is told again in nearly the same words by the same speaker, later; both
statements match the question equally, and the old one often ranks higher (it was said
plainly, the new one with a story around it). So, after the fusion, pairs of archived hits
are compared with each other — not with the query: one speaker, turn vectors at cosine ≥
`RESTATED_COSINE` — and where the newer ranks below the older, it takes the older's place
(the older and everything between move down one). The newer may come from just below the
result (`LOOKAHEAD` ranks): a new value found a little worse than its old one still makes
the result, ahead of it. Under a time window none of this happens: the question names the
time it means ("Where did I live last September?").

A first attempt, a fused list of the newest strong word matches, was measured and dropped:
for paraphrase questions the "strong" matches were junk, and one vote more could not beat
an old statement one rank better in two lists (/work hand-off of issue 34).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

from novaberg.memory.search.results import LAYER_ARCHIVE, SIGNAL_LATEST, MemoryHit

RESTATED_COSINE: Final = 0.35
"""Two archived turns of one speaker at this cosine or more are taken for the same fact
told twice. Measured on the bench's changed facts (bench/_recall_long*.py): the pairs of
one fact lie at 0.34–0.64 with the hashed test embedder and 0.43–0.85 with MiniLM; since
only hits that both answer the question are compared, a lower bar costs little."""

LOOKAHEAD: Final = 5
"""Ranks below the asked-for count from which a newer statement may move up."""


def latest_first(
    hits: list[MemoryHit], restated: list[tuple[int, int, float]], limit: int
) -> list[MemoryHit]:
    """`hits` (best first, up to `limit` + `LOOKAHEAD`) with each newer statement of a
    restated pair (older id, newer id, cosine) ahead of its older one, cut to `limit`.
    A moved hit gets the signal `aktuell`: (the rank it had, the pair's cosine)."""
    order = list(hits)
    by_id = {hit.id: hit for hit in order if hit.layer == LAYER_ARCHIVE}
    pairs = [
        (str(older), str(newer), cosine)
        for older, newer, cosine in restated
        if str(older) in by_id and str(newer) in by_id
    ]
    # oldest new value first, so a chain (4 kg, 5 kg, 6 kg) ends newest first
    pairs.sort(key=lambda pair: _said(by_id[pair[1]]))
    for older, newer, cosine in pairs:
        before = order.index(by_id[older])
        was = order.index(by_id[newer])
        if was < before or before >= limit:
            continue
        moved = order.pop(was)
        order.insert(before, moved)
        moved.signals.setdefault(SIGNAL_LATEST, (was + 1, cosine))
    return order[:limit]


def _said(hit: MemoryHit) -> datetime:
    return hit.time or datetime.min.replace(tzinfo=UTC)  # an archived turn always has one
