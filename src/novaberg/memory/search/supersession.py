"""The latest value of a fact that changed outranks the old one: "I live in Bristol now"
before "I live in Leeds" (docs/behaviour/memory.md#hybrid-search, "Latest value").

A changed fact is told again by the same speaker, later, and the telling says that it
changed: "now", "no longer", "instead", "moved", "switched", "jetzt", "nicht mehr",
"umgezogen", "gewechselt" (`announces_change`). Both statements match the question, and
the old one often ranks higher (it was said plainly, the new one with a story around it).
So, after the fusion, pairs of archived hits are compared with each other: one speaker,
both containing a word of the question's own (`QueryTerms.topic`), turn vectors at cosine
≥ `RESTATED_COSINE`, the newer asking nothing and announcing a change. Where the newer ranks below the older, it takes
the older's place (the older and everything between move down one). The newer may come
from just below the result (`LOOKAHEAD` ranks). Under a time window none of this happens:
the question names the time it means ("Where did I live last September?").

Measured with the pairs alone, without the change words (bench/memory_recall.py): one
topic is not one fact. "Ein Hund hat heute im Park mein Brot geklaut" moved ahead of
"Die Hunde meiner Eltern heißen Rex und Struppi" for "Wie heißt der Hund meiner Eltern?",
and recall@5 fell by up to 30 points on the everyday sets. Only a model can tell one
fact from one topic for sure; the change words are the cheap sign a speaker gives.

A first attempt, a fused list of the newest strong word matches, was measured and dropped:
for paraphrase questions the "strong" matches were junk, and one vote more could not beat
an old statement one rank better in two lists.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Final

from novaberg.memory.search.results import LAYER_ARCHIVE, SIGNAL_LATEST, MemoryHit

_CHANGE: Final = re.compile(
    r"\b(?:"
    # English: a value that replaced another
    r"now|nowadays|these days|any ?more|no longer|not .{0,20}any ?more|instead|switched"
    r"|moved|changed|quit|dropped|sold|gave up|broke up|raised|lowered|replaced"
    r"|"
    # German: the same
    r"jetzt|nun|inzwischen|mittlerweile|neuerdings|seit kurzem|nicht mehr|kein\w* .{0,20}mehr"
    r"|stattdessen|umgezogen|gezogen|gewechselt|umgestiegen|gekündigt|aufgegeben"
    r"|verkauft|getrennt|schluss gemacht|erhöht|gesenkt|verlegt|geändert|ersetzt"
    r")\b",
    re.IGNORECASE,
)

RESTATED_COSINE: Final = 0.35
"""Two archived turns of one speaker at this cosine or more may be the same fact told
twice. Measured on the bench's changed facts (bench/_recall_long*.py): the pairs of one
fact lie at 0.34–0.64 with the hashed test embedder and 0.43–0.85 with MiniLM — and so do
unrelated pairs of everyday chat with MiniLM in German: the vectors only rule out, the
shared question word and the change words decide."""

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
        if str(older) in by_id and str(newer) in by_id and announces_change(by_id[str(newer)].text)
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


def announces_change(text: str) -> bool:
    """Whether a statement says that something is different from before ("I live in Bristol
    now", "ich bin nach Hamburg gezogen", "Ich fahre nicht mehr Bus")."""
    return _CHANGE.search(text) is not None


def _said(hit: MemoryHit) -> datetime:
    return hit.time or datetime.min.replace(tzinfo=UTC)  # an archived turn always has one
