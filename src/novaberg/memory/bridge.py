"""What the graph nodes call of the memory layer, with plain arguments (no graph types).

- the dispatcher: `store_short_term_writes(...)` for the run's `kzg` PendingWrites (→ the kern
  for the session turn) and their day anchors (the `timeline` writes of salience,
  memory/day_anchors.py), and `summarise_session(...)` after the session turn is written;
- the enricher: `resonance(...)` for the KZG and LZG memories of a turn, plus the hybrid
  search's (`hybrid_recall`): archived turns the session no longer holds (a fact told
  weeks ago that never became a short-term memory) and long-term nodes sharing a rare word
  with the stimulus (a name the vectors blur, a lorebook entry's key).

The short-term vector cache lives in one `ShortTermStore` per Redis client for the life of the
process (`short_term_store_for`), so a turn's search does not refetch every vector.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any, Final, TypedDict
from zoneinfo import ZoneInfo

import numpy as np
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.base import LLM
from novaberg.memory.context import ContextEntry
from novaberg.memory.day_anchors import Anchor, anchor
from novaberg.memory.day_recall import DayRecall, recall_day
from novaberg.memory.long_term.spreading import Resonance, spreading_read
from novaberg.memory.search.hybrid import search_memory
from novaberg.memory.search.results import (
    LAYER_ARCHIVE,
    LAYER_LONG_TERM,
    METHOD_VECTOR,
    MemoryHit,
    SearchOptions,
)
from novaberg.memory.session_summary import SummaryOutcome, summarise_if_needed
from novaberg.memory.short_term.creation import ShortTermWriter, StoredEntry
from novaberg.memory.short_term.retrieval import retrieve
from novaberg.pair import Pair
from novaberg.store.archive import SPEAKER_USER
from novaberg.store.pipeline_log import PipelineLog
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_fields import OBSERVER_ASSISTANT, OBSERVER_USER
from novaberg.wire import EI_ROLE_CHARACTER, TIMELINE_MEMORY_ANCHOR

log = logging.getLogger(__name__)

SHORT_TERM_TARGET: Final = "kzg"
CREATE: Final = "create"
"""The PendingWrite this layer carries out: {target: "kzg", action: "create"}
(docs/behaviour/graphs.md#pending-writes)."""

UTC_ZONE: Final = ZoneInfo("UTC")

TIMELINE_TARGET: Final = "timeline"
ANCHOR_KIND: Final = TIMELINE_MEMORY_ANCHOR
"""Salience's timeline write: {target: "timeline", action: "upsert", data: {art:
"erinnerungs_anker", tag, zeitausdruck_roh, segment_index}} — the day a segment is about."""

ANCHOR_FAILED: Final = "anker_fehlgeschlagen"
"""A timeline write's result when the anchor row could not be found or made (logged; the
segment's memory is stored without an anchor)."""

ALREADY_STORED: Final = "schon_gespeichert"
"""A write's result when its turn had stored its memory before (a repeated run)."""


class PendingWrite(TypedDict):
    """A write a node plans and the dispatcher carries out
    (docs/behaviour/graphs.md#pending-writes). Stored in `pending_writes_log` as
    ziel / aktion / daten / beschreibung."""

    target: str  # "kzg" | "fakten" | "timeline" | "notizen"
    action: str  # "create" | "update" | "delete" | "upsert"
    data: dict[str, Any]
    description: str


_stores: weakref.WeakKeyDictionary[aioredis.Redis, ShortTermStore] = weakref.WeakKeyDictionary()


def short_term_store_for(redis: aioredis.Redis) -> ShortTermStore:
    """The process-wide short-term store (and vector cache) of a Redis client."""
    store = _stores.get(redis)
    if store is None:
        store = _stores[redis] = ShortTermStore(redis)
    return store


def observer_for(ei_calc_role: str | None) -> str:
    """The observer of a run's entries: assistant when ei_calc_role is character."""
    return OBSERVER_ASSISTANT if ei_calc_role == EI_ROLE_CHARACTER else OBSERVER_USER


@dataclass
class ShortTermWriteOutcome:
    """session_turn_kern: the kern of the highest-salience stored entry ("" if none)."""

    session_turn_kern: str = ""
    stored: list[StoredEntry] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    """Per write, in order: the new key, "abgelehnt", "anker:<timeline id>" or "nicht_kzg"."""
    anchors: list[Anchor] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        found = {
            "kzg_gespeichert": [s.key for s in self.stored],
            "kzg_abgelehnt": self.results.count("abgelehnt"),
            "befoerderung": [s.key for s in self.stored if s.promotion_queued],
        }
        if self.anchors:
            found["anker"] = [a.as_log() for a in self.anchors]
        return found


def _is_anchor(write: Mapping[str, Any]) -> bool:
    return (
        write.get("target") == TIMELINE_TARGET
        and (write.get("data") or {}).get("art") == ANCHOR_KIND
    )


async def _anchors(
    pool: AsyncConnectionPool, pair: Pair, writes: Sequence[Mapping[str, Any]], tz: ZoneInfo
) -> dict[int, Anchor | None]:
    """Per anchor write (by its place in `writes`) the day's anchor row, None where it
    failed (logged): a missing anchor never costs the memory."""
    found: dict[int, Anchor | None] = {}
    for place, write in enumerate(writes):
        if not _is_anchor(write):
            continue
        data = write.get("data") or {}
        try:
            found[place] = await anchor(
                pool, pair.user_id, date.fromisoformat(str(data["tag"])), tz
            )
        except Exception as exc:
            log.error("kzg %s: day anchor %r not made: %s", pair, data.get("tag"), exc)
            found[place] = None
    return found


def _segment_anchor(
    writes: Sequence[Mapping[str, Any]], anchors: Mapping[int, Anchor | None], segment: Any
) -> int | None:
    """The anchor row of the segment `segment` (its index), if salience anchored it."""
    for place, made in anchors.items():
        if made is not None and (writes[place].get("data") or {}).get("segment_index") == segment:
            return made.timeline_id
    return None


async def store_short_term_writes(
    redis: aioredis.Redis,
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    writes: Sequence[Mapping[str, Any]],
    *,
    observer: str,
    turn_id: str | None,
    perception: Mapping[str, Any] | None,
    timeline_id: int | None = None,
    clock: Callable[[], float] = time.time,
    pipeline_log: PipelineLog | None = None,
    promotions: bool = True,
    character_name: str | None = None,
    link_turns: bool = True,
    once_per_turn: bool = False,
    tz: ZoneInfo = UTC_ZONE,
) -> ShortTermWriteOutcome:
    """Carry out every `kzg` create write and salience's day anchors (`timeline` writes);
    other writes are left to their managers.

    A segment's memory is linked to `timeline_id` (the row a task agent wrote this turn)
    when given, else to its own day anchor (`tz`: the zone of the anchor's day).

    `link_turns=False`: the caller writes the `verbindung` rows of `outcome.stored`.
    `once_per_turn=True`: when the pair already holds an entry of `turn_id` from the same
    side (the run is a repeat: an impulse formed again after a crash or after the user
    wrote first), nothing is stored again and each write is `schon_gespeichert`."""
    memory = ShortTermWriter(
        redis,
        model,
        pool=pool,
        pipeline_log=pipeline_log,
        store=short_term_store_for(redis),
        clock=clock,
        promotions=promotions,
    )
    outcome = ShortTermWriteOutcome()
    if once_per_turn and turn_id:
        earlier = await memory.store.keys_of_turn(pair, turn_id, observer)
        if earlier:
            log.info("kzg %s: turn %s stored %s before; not again", pair, turn_id, earlier)
            outcome.results = [
                ALREADY_STORED if w.get("target") == SHORT_TERM_TARGET else "nicht_kzg"
                for w in writes
            ]
            return outcome
    best: StoredEntry | None = None
    anchors = await _anchors(pool, pair, writes, tz)
    outcome.anchors = [made for made in anchors.values() if made is not None]
    for place, write in enumerate(writes):
        if place in anchors:
            made = anchors[place]
            outcome.results.append(f"anker:{made.timeline_id}" if made else ANCHOR_FAILED)
            continue
        if write.get("target") != SHORT_TERM_TARGET or write.get("action") != CREATE:
            outcome.results.append("nicht_kzg")
            continue
        data = write.get("data") or {}
        stored = await memory.store_salience_write(
            pair,
            data,
            observer,
            turn_id,
            perception,
            timeline_id=(
                timeline_id
                if timeline_id is not None
                else _segment_anchor(writes, anchors, data.get("segment_index"))
            ),
            character_name=character_name,
            link_turn=link_turns,
        )
        if stored is None:
            outcome.results.append("abgelehnt")
            continue
        outcome.results.append(stored.key)
        outcome.stored.append(stored)
        if best is None or stored.intake > best.intake:
            best = stored
    outcome.session_turn_kern = best.core if best else ""
    return outcome


async def summarise_session(
    redis: aioredis.Redis,
    model: LLM,
    pair: Pair,
    *,
    character_name: str = "Nova",
    length: int | None = None,
) -> SummaryOutcome | None:
    """Summarise/trim the session after a write (`length`: the length that write returned);
    a failure is logged, never raised."""
    try:
        return await summarise_if_needed(
            redis,
            model,
            pair,
            character_name=character_name,
            character_label=character_name.upper(),
            length=length,
        )
    except Exception as exc:  # the turn is written; a summary problem must not cost it
        log.error("session %s: summary step failed: %s", pair, exc)
        return None


ARCHIVE_CONTEXT_LIMIT: Final = 3
"""Entries the hybrid search adds per turn (the reducer renders 8 entries in all)."""

ARCHIVE_MIN_COSINE: Final = 0.5
"""An archived turn found only by its vector must be at least this near to the stimulus
(one found by words — a rare word both share — is offered anyway): below it the fused list
still returns the nearest turns, which are not memories of the subject."""

ARCHIVE_WEIGHT: Final = 0.7
"""The reducer's weight of an entry the hybrid search found (an archived turn, a long-term
node by its words): above the recent session turns (0.5), below the summary (1.0)."""

SOURCE_ARCHIVE: Final = LAYER_ARCHIVE
"""`quelle` of an archived turn in `memory_entries_raw`."""


def archive_entry(hit: MemoryHit, character_name: str, tz: ZoneInfo) -> ContextEntry:
    """An archived turn as the reducer's entry: who said what, and when."""
    who = "Der Nutzer" if hit.speaker == SPEAKER_USER else character_name
    when = f" am {hit.time.astimezone(tz):%d.%m.%Y}" if hit.time else ""
    source = hit.sources[0] if hit.sources else None
    return ContextEntry(
        source=SOURCE_ARCHIVE,
        subtype="turn",
        text=f"{who} sagte{when}: „{hit.text.strip()}“",
        weight=ARCHIVE_WEIGHT,
        meta={
            "archiv_id": hit.id,
            "turn_id": source.turn_id if source else None,
            "quell_id": source.source_id if source else None,
            "zeit": hit.time.isoformat() if hit.time else None,
            "score": round(hit.score, 6),
            "signale": sorted(hit.signals),
        },
    )


def word_match_entry(hit: MemoryHit) -> ContextEntry:
    """A long-term node found by a word it shares with the stimulus."""
    return ContextEntry(
        source=LAYER_LONG_TERM,
        subtype="wortsuche",
        text=hit.text.strip(),
        weight=ARCHIVE_WEIGHT,
        meta={"knoten_id": hit.id, "score": round(hit.score, 6), "signale": sorted(hit.signals)},
    )


def recalled_entry(hit: MemoryHit, character_name: str, tz: ZoneInfo) -> ContextEntry | None:
    """What the enricher takes of a hybrid-search hit: an archived turn with evidence
    (a shared word, or a vector near enough), a long-term node only by its words (its
    vector neighbourhood is the spreading read's)."""
    if hit.layer == LAYER_ARCHIVE:
        near = (hit.best_cosine() or 0.0) >= ARCHIVE_MIN_COSINE
        return archive_entry(hit, character_name, tz) if hit.found_by_words() or near else None
    if hit.layer == LAYER_LONG_TERM and hit.found_by_words():
        return word_match_entry(hit)
    return None


async def hybrid_recall(
    redis: aioredis.Redis,
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    text: str,
    vector: Sequence[float] | np.ndarray,
    *,
    now: float,
    tz: ZoneInfo,
    before: float | None,
    exclude_turn: str | None,
    character_name: str,
) -> list[ContextEntry]:
    """Archived turns about the stimulus that the session does not hold any more (said
    before `before`, the oldest session turn) and long-term nodes sharing its rare words:
    the hybrid search with the stimulus's vector."""
    options = SearchOptions(
        limit=ARCHIVE_CONTEXT_LIMIT * 3,
        layers=frozenset({LAYER_ARCHIVE, LAYER_LONG_TERM}),
        skip=frozenset({(LAYER_LONG_TERM, METHOD_VECTOR)}),  # the spreading read's part
        before=None if before is None else datetime.fromtimestamp(before, UTC),
        exclude_turn=exclude_turn,
    )
    result = await search_memory(
        redis,
        pool,
        model,
        pair,
        text,
        now=datetime.fromtimestamp(now, UTC),
        tz=tz,
        options=options,
        vector=vector,
    )
    entries = [recalled_entry(hit, character_name, tz) for hit in result.hits]
    return [entry for entry in entries if entry is not None][:ARCHIVE_CONTEXT_LIMIT]


@dataclass
class MemoryResonance:
    """The enricher's memory of a turn: KZG hits, the LZG spreading read, the hybrid
    search's recall."""

    short_term: list[dict[str, Any]]
    long_term: Resonance
    recalled: list[dict[str, Any]] = field(default_factory=list)
    """The hybrid search's entries: archived turns, long-term nodes found by words."""
    day: DayRecall = field(default_factory=DayRecall)
    """The memories about the day the stimulus asks about (memory/day_recall.py)."""

    def entries(self) -> list[dict[str, Any]]:
        """ContextEntry dicts for `memory_entries_raw` (KZG, LZG, the hybrid search's, then
        the asked day's)."""
        return [
            *self.short_term,
            *(e.as_dict() for e in self.long_term.entries()),
            *self.recalled,
            *(e.as_dict() for e in self.day.entries),
        ]


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """What the hybrid recall needs besides the vector (see `hybrid_recall`)."""

    text: str
    tz: ZoneInfo
    before: float | None
    exclude_turn: str | None
    character_name: str
    rewritten: str = ""
    """The enricher's model rewrite of the stimulus ("Wann war der Umzug nach Köln?"; empty:
    none). Its vector is the search vector already; its words join the stimulus's words,
    so what it resolved ("das" → "der Umzug") is found by words too."""

    @property
    def search_text(self) -> str:
        """The stimulus, and the rewrite's words after it where there is one."""
        if not self.rewritten.strip() or self.rewritten.strip() == self.text.strip():
            return self.text
        return f"{self.text}\n{self.rewritten}"


async def resonance(
    redis: aioredis.Redis,
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    vector: Sequence[float] | np.ndarray | None,
    *,
    cluster: str | None,
    nova_emotion: str | None,
    clock: Callable[[], float] = time.time,
    recall: RecallQuery | None = None,
) -> MemoryResonance:
    """Short-term retrieval (≥ 0.72), the long-term spreading read and (given `recall`) the hybrid
    search's archived turns and word matches, with the same search vector, and the memories
    about a day the stimulus asks about."""
    # Redis and PostgreSQL answer in parallel: the reads share nothing
    now = clock()
    hits, spread, archived, day = await asyncio.gather(
        retrieve(short_term_store_for(redis), pair, vector),
        spreading_read(pool, pair, vector, cluster, nova_emotion, clock=clock),
        _recall_or_nothing(redis, pool, model, pair, vector, now, recall),
        _day_or_nothing(redis, pool, pair, now, recall),
    )
    return MemoryResonance(
        [e.as_dict() for e in hits], spread, [entry.as_dict() for entry in archived], day
    )


async def _day_or_nothing(
    redis: aioredis.Redis,
    pool: AsyncConnectionPool,
    pair: Pair,
    now: float,
    query: RecallQuery | None,
) -> DayRecall:
    """The asked day's memories; a failure costs the turn only these entries (logged)."""
    if query is None or not query.text.strip():
        return DayRecall()
    try:
        return await recall_day(
            short_term_store_for(redis),
            pool,
            pair,
            query.text,
            now=datetime.fromtimestamp(now, UTC),
            tz=query.tz,
        )
    except Exception:
        log.exception("day recall for %s failed; the turn goes on without it", pair)
        return DayRecall()


async def _recall_or_nothing(
    redis: aioredis.Redis,
    pool: AsyncConnectionPool,
    model: LLM,
    pair: Pair,
    vector: Sequence[float] | np.ndarray | None,
    now: float,
    query: RecallQuery | None,
) -> list[ContextEntry]:
    """The hybrid recall; a failure costs the turn only these entries (logged)."""
    if query is None or vector is None or not query.text.strip():
        return []
    try:
        return await hybrid_recall(
            redis,
            pool,
            model,
            pair,
            query.search_text,
            vector,
            now=now,
            tz=query.tz,
            before=query.before,
            exclude_turn=query.exclude_turn,
            character_name=query.character_name,
        )
    except Exception:
        log.exception("hybrid recall for %s failed; the turn goes on without it", pair)
        return []
