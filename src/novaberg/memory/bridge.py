"""What the graph nodes call of the memory layer, with plain arguments (no graph types).

- the dispatcher: `store_kzg_writes(...)` for the run's `kzg` PendingWrites (→ the kern
  for the session turn) and `summarise_session(...)` after the session turn is written;
- the enricher: `resonance(...)` for the KZG and LZG memories of a turn.

The short-term vector cache lives in one `KzgStore` per Redis client for the life of the
process (`kzg_store_for`), so a turn's search does not refetch every vector.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypedDict

import numpy as np
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.base import LLM
from novaberg.memory.long_term import LongTermMemory, Resonance
from novaberg.memory.session_summary import SummaryOutcome, summarise_if_needed
from novaberg.memory.short_term import (
    OBSERVER_ASSISTANT,
    OBSERVER_USER,
    ShortTermMemory,
    StoredEntry,
)
from novaberg.store.keys import Pair
from novaberg.store.kzg import KzgStore
from novaberg.store.pipeline_log import PipelineLog
from novaberg.wire import EI_ROLE_CHARACTER

log = logging.getLogger(__name__)

KZG_TARGET: Final = "kzg"
CREATE: Final = "create"
"""The PendingWrite this layer carries out: {target: "kzg", action: "create"}
(docs/behaviour/graphs.md#pending-writes)."""


class PendingWrite(TypedDict):
    """A write a node plans and the dispatcher carries out
    (docs/behaviour/graphs.md#pending-writes). Stored in `pending_writes_log` as
    ziel / aktion / daten / beschreibung."""

    target: str  # "kzg" | "fakten" | "timeline" | "notizen"
    action: str  # "create" | "update" | "delete" | "upsert"
    data: dict[str, Any]
    description: str


_stores: weakref.WeakKeyDictionary[aioredis.Redis, KzgStore] = weakref.WeakKeyDictionary()


def kzg_store_for(redis: aioredis.Redis) -> KzgStore:
    """The process-wide short-term store (and vector cache) of a Redis client."""
    store = _stores.get(redis)
    if store is None:
        store = _stores[redis] = KzgStore(redis)
    return store


def observer_for(ei_calc_role: str | None) -> str:
    """beobachter of a run's entries: assistant when ei_calc_role is character."""
    return OBSERVER_ASSISTANT if ei_calc_role == EI_ROLE_CHARACTER else OBSERVER_USER


@dataclass
class KzgWriteOutcome:
    """session_turn_kern: the kern of the highest-salience stored entry ("" if none)."""

    session_turn_kern: str = ""
    stored: list[StoredEntry] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    """Per write, in order: the new key, "abgelehnt" or "nicht_kzg"."""

    def summary(self) -> dict[str, Any]:
        return {
            "kzg_gespeichert": [s.key for s in self.stored],
            "kzg_abgelehnt": self.results.count("abgelehnt"),
            "befoerderung": [s.key for s in self.stored if s.promotion_queued],
        }


async def store_kzg_writes(
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
) -> KzgWriteOutcome:
    """Carry out every `kzg` create write; other writes are left to their managers.

    `link_turns=False`: the caller writes the `verbindung` rows of `outcome.stored`."""
    memory = ShortTermMemory(
        redis,
        model,
        pool=pool,
        pipeline_log=pipeline_log,
        store=kzg_store_for(redis),
        clock=clock,
        promotions=promotions,
    )
    outcome = KzgWriteOutcome()
    best: StoredEntry | None = None
    for write in writes:
        if write.get("target") != KZG_TARGET or write.get("action") != CREATE:
            outcome.results.append("nicht_kzg")
            continue
        stored = await memory.store_salience_write(
            pair,
            write.get("data") or {},
            observer,
            turn_id,
            perception,
            timeline_id=timeline_id,
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
    outcome.session_turn_kern = best.kern if best else ""
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


@dataclass
class MemoryResonance:
    """The enricher's memory of a turn: KZG hits and the LZG spreading read."""

    short_term: list[dict[str, Any]]
    long_term: Resonance

    def entries(self) -> list[dict[str, Any]]:
        """ContextEntry dicts for `memory_entries_raw` (KZG first, then LZG)."""
        return [*self.short_term, *(e.as_dict() for e in self.long_term.entries())]


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
) -> MemoryResonance:
    """KZG retrieval (≥ 0.72) and LZG `spreading_lesen` with the same search vector."""
    short = ShortTermMemory(redis, model, store=kzg_store_for(redis), clock=clock)
    long_term = LongTermMemory(pool, redis, model, kzg=kzg_store_for(redis), clock=clock)
    # Redis and PostgreSQL answer in parallel: the two reads share nothing
    hits, spread = await asyncio.gather(
        short.retrieve(pair, vector),
        long_term.spreading_read(pair, vector, cluster, nova_emotion),
    )
    return MemoryResonance([e.as_dict() for e in hits], spread)
