"""Promotion: a short-term entry that crossed the gate becomes a long-term node
(docs/behaviour/memory.md#promotion, docs/behaviour/memory.md#edges).

The entry's text is embedded and compared with every node of the pair, inactive ones
included. Cosine ≥ 0.82 reinforces an active node (raw weight + 0.1, its edges recomputed)
or half-reactivates an inactive one; otherwise a new node with two directed edges to every
candidate a layer joins it to. No chat-model call. The short-term hash is kept. Knowledge
that *came back* (a node reinforced or reactivated) is pushed to the shadow queue as a
`wissen_rueckweg` task (topic = the entry's first theme), so Pixie may turn it into
something Nova says.

Edge candidates are bounded so promotion stays fast at any size: the 50 nearest active nodes
(embedding layer), up to 200 sharing a theme or an entity, up to 50 on the timeline.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import redis.asyncio as aioredis
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from novaberg.impulses import shadow_queue
from novaberg.llm.base import LLM
from novaberg.memory.curve import long_term_weight
from novaberg.memory.long_term import edges
from novaberg.memory.model_slot import ModelSlot, no_slot
from novaberg.pair import Pair
from novaberg.store import keys, long_term_nodes, long_term_provenance, long_term_search
from novaberg.store.long_term_edges import NewEdge, edges_touching, set_edge_weights, upsert_edges
from novaberg.store.long_term_nodes import LongTermNode, NewNode
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_fields import (
    DEFAULT_DIMENSION,
    DEFAULT_MEMORY_TYPE,
    OBSERVER_USER,
    EntryFields,
)

log = logging.getLogger(__name__)

MATCH_THRESHOLD: Final = 0.82
"""A promoted entry this close (cosine) to an existing node reinforces it."""

REINFORCEMENT_BOOST: Final = 0.1
"""Raw weight += 0.1 on a match with an active node."""

REACTIVATION_BOOST: Final = 0.1
"""An inactive match comes back half: decayed weight = (absolute + 0.1) / 2."""

CREATED: Final = "neu"
REINFORCED: Final = "verstaerkt"
REACTIVATED: Final = "reaktiviert"
ALREADY_PROMOTED: Final = "schon_befoerdert"
EXPIRED: Final = "verfallen"
DELETED: Final = "geloescht"
"""Promotion outcomes (stored in `lzg_befoerderung.aktion` and logged)."""

CAME_BACK: Final = frozenset({REINFORCED, REACTIVATED})
"""Promotion outcomes that met known knowledge again: they feed `wissen_rueckweg`."""

EDGE_EMBEDDING_CANDIDATES: Final = 50
EDGE_OVERLAP_CANDIDATES: Final = 200
EDGE_TIMELINE_CANDIDATES: Final = 50
"""Bounds of the edge candidate sets of a new node (see the module docstring)."""


def _dt(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def _themes(raw: str | Sequence[str] | None) -> list[str]:
    """Node themes are stored lowercase and trimmed (overlap is an exact array match)."""
    items = raw.split(",") if isinstance(raw, str) else list(raw or [])
    seen: list[str] = []
    for item in items:
        theme = str(item).strip().lower()
        if theme and theme not in seen:
            seen.append(theme)
    return seen


def _entity_ids(raw: str | None) -> list[int]:
    ids = []
    for part in (raw or "").split(","):
        part = part.strip()
        if part.isdigit():
            ids.append(int(part))
    return ids


class _AlreadyPromoted(Exception):
    """Another run of the same promotion job committed first; this one is rolled back."""


@dataclass(frozen=True, slots=True)
class PromotionOutcome:
    """action: one of the outcomes above (`CREATED`, `REINFORCED`, ...)."""

    action: str
    key: str
    node_id: int | None = None
    cosine: float | None = None
    edges: int = 0


class Promotion:
    """Carries promotion jobs of `queue:{u}` into the long-term memory."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        redis: aioredis.Redis,
        model: LLM,
        *,
        short_term: ShortTermStore | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.pool = pool
        self.redis = redis
        self.model = model
        self.short_term = short_term or ShortTermStore(redis)
        self.clock = clock

    async def promote(
        self, job: Mapping[str, Any], *, slot: ModelSlot = no_slot
    ) -> PromotionOutcome:
        """Carry one job into the long-term memory (idempotent per short-term key)."""
        key = str(job["key"])
        stored = await self.short_term.get(key)
        entry = None if stored is None else EntryFields.of(stored.fields)
        if entry is None or not entry.text.strip():
            log.info("promotion: %s expired before promotion; dropped", key)
            return PromotionOutcome(EXPIRED, key)
        pair = Pair(
            entry.user_id or str(job["user_id"]), entry.character_id or str(job["character_id"])
        )
        async with self.pool.connection() as conn:
            deleted = await long_term_provenance.deleted_key(conn, key)
            done = (
                None if deleted is not None else await long_term_provenance.promoted_to(conn, key)
            )
        if deleted is not None:
            log.info("promotion: %s belonged to deleted node %s; dropped", key, deleted)
            return PromotionOutcome(DELETED, key, None)
        if done is not None:
            return PromotionOutcome(ALREADY_PROMOTED, key, done)
        async with slot():
            vector = (await self.model.embed([entry.text]))[0]
        now = _dt(self.clock())
        try:
            outcome = await self._carry(pair, key, entry, vector, now)
        except _AlreadyPromoted:
            return PromotionOutcome(ALREADY_PROMOTED, key)
        await self.redis.set(keys.profile_dirty(pair), "1")
        if outcome.action in CAME_BACK:
            await self._feed_back(pair, entry, outcome, now)
        log.info(
            "promotion %s: %s node %s (cos %s, %d edges)",
            key,
            outcome.action,
            outcome.node_id,
            None if outcome.cosine is None else round(outcome.cosine, 4),
            outcome.edges,
        )
        return outcome

    async def _feed_back(
        self, pair: Pair, entry: EntryFields, outcome: PromotionOutcome, now: datetime
    ) -> None:
        """Push the knowledge that came back as a `wissen_rueckweg` shadow task; a failure
        is logged (the promotion stands)."""
        themes = entry.theme_list()
        content = " ".join(entry.text.split())
        arousal = entry.arousal
        task = shadow_queue.ShadowTask(
            user_id=pair.user_id,
            character_id=pair.character_id,
            task=shadow_queue.TASK_KNOWLEDGE_BACK,
            topic=themes[0] if themes else content[:60],
            context=content,
            reason=f"befoerderung {outcome.action}: knoten {outcome.node_id}",
            emotion=entry.emotion or None,
            mode=entry.mode or None,
            arousal=arousal if arousal is not None and 0.0 <= arousal <= 1.0 else None,
            reference_id=entry.turn_id,
        )
        try:
            await shadow_queue.push(self.pool, task, now)
        except Exception as exc:
            log.error("promotion %s: wissen_rueckweg not queued: %s", outcome.key, exc)

    async def _carry(
        self,
        pair: Pair,
        key: str,
        entry: EntryFields,
        vector: Sequence[float],
        now: datetime,
    ) -> PromotionOutcome:
        """Create, reinforce or reactivate a node for `key`, recorded in the same
        transaction; `_AlreadyPromoted` (all undone) if another run recorded it first."""
        async with self.pool.connection() as conn, conn.transaction():
            best = await long_term_search.nearest(conn, pair, vector, 1, active_only=False)
            if best and (best[0].cosine or 0.0) >= MATCH_THRESHOLD:
                outcome = await self._reinforce(conn, key, best[0], now)
            else:
                outcome = await self._create(conn, pair, key, entry, vector, now)
            if outcome.node_id is not None:
                await long_term_provenance.link_turn(conn, key, outcome.node_id)
                if not await long_term_provenance.record_promotion(
                    conn, key, outcome.node_id, outcome.action
                ):
                    raise _AlreadyPromoted(key)  # a concurrent run committed first
        return outcome

    async def _reinforce(
        self, conn: AsyncConnection[Any], key: str, node: LongTermNode, now: datetime
    ) -> PromotionOutcome:
        cosine = float(node.cosine or 0.0)
        if not node.active:
            await long_term_nodes.set_weights(
                conn,
                node.id,
                raw=node.raw_weight,
                absolute=node.absolute_weight,
                decayed=(node.absolute_weight + REACTIVATION_BOOST) / 2,
                now=now,
                count_frequency=False,
            )
            return PromotionOutcome(REACTIVATED, key, node.id, cosine)
        raw = node.raw_weight + REINFORCEMENT_BOOST
        absolute = long_term_weight(raw)
        await long_term_nodes.set_weights(
            conn,
            node.id,
            raw=raw,
            absolute=absolute,
            decayed=absolute,
            now=now,
            count_frequency=True,
        )
        changed = await recompute_edges(conn, node.id)
        return PromotionOutcome(REINFORCED, key, node.id, cosine, changed)

    async def _create(
        self,
        conn: AsyncConnection[Any],
        pair: Pair,
        key: str,
        entry: EntryFields,
        vector: Sequence[float],
        now: datetime,
    ) -> PromotionOutcome:
        raw = entry.salience
        if raw is None:
            raise ValueError(f"short-term entry {key} has no readable salienz")
        absolute = long_term_weight(raw)
        node = NewNode(
            source_key=key,
            user_id=pair.user_id,
            character_id=pair.character_id,
            observer=entry.observer or OBSERVER_USER,
            text=entry.text,
            embedding=vector,
            dimension=entry.dimension or DEFAULT_DIMENSION,
            raw_weight=raw,
            absolute_weight=absolute,
            decayed_weight=absolute,
            frequency=1,
            created_at=now,
            reinforced_at=now,
            short_term_created_at=(_dt(entry.created_at) if entry.created_at is not None else None),
            themes=_themes(entry.themes),
            memory_type=entry.memory_type or DEFAULT_MEMORY_TYPE,
            entity_ids=_entity_ids(entry.entity_ids),
            timeline_id=entry.timeline_id,
            emotion=entry.emotion,
            arousal=entry.arousal,
            emotion_vector=entry.emotion_vector,
            intentions=entry.intentions or "[]",
            mode=entry.mode,
            language_style=entry.language_style,
            relationship_dynamic=entry.relationship_dynamic,
            tone=entry.tone,
            corrected_at=_dt(entry.corrected_at) if entry.corrected_at is not None else None,
        )
        node_id = await long_term_nodes.insert_node(conn, node)
        if node_id is None:  # a concurrent promotion of the same key won, or it was deleted
            existing = await long_term_nodes.node_by_source(conn, key)
            return PromotionOutcome(ALREADY_PROMOTED, key, existing.id if existing else None)
        stored = await long_term_nodes.get_node(conn, node_id)
        assert stored is not None
        count = await connect(conn, pair, stored, vector, now)
        return PromotionOutcome(CREATED, key, node_id, None, count)


async def connect(
    conn: AsyncConnection[Any],
    pair: Pair,
    node: LongTermNode,
    vector: Sequence[float],
    now: datetime,
) -> int:
    """Two directed edges between a new node and every candidate a layer joins it to."""
    candidates: dict[int, LongTermNode] = {}
    for other in await long_term_search.nearest(conn, pair, vector, EDGE_EMBEDDING_CANDIDATES + 1):
        if (other.cosine or 0.0) > edges.EMBEDDING_THRESHOLD:
            candidates[other.id] = other
    for other in await long_term_search.overlap_candidates(
        conn,
        pair,
        vector,
        themes=node.themes,
        entity_ids=node.entity_ids,
        exclude_id=node.id,
        limit=EDGE_OVERLAP_CANDIDATES,
    ):
        candidates.setdefault(other.id, other)
    precision = node.timeline_precision or ""
    moment = node.timeline_time
    if precision in edges.TIMELINE_TOLERANCE_DAYS and moment is not None:
        for other in await long_term_search.timeline_candidates(
            conn,
            pair,
            vector,
            precision=precision,
            moment=moment,
            within_days=edges.TIMELINE_TOLERANCE_DAYS[precision],
            exclude_id=node.id,
            limit=EDGE_TIMELINE_CANDIDATES,
        ):
            candidates.setdefault(other.id, other)
    candidates.pop(node.id, None)
    new: list[NewEdge] = []
    for other in candidates.values():
        layers = edges.find_layers(node, other, other.cosine)
        if not layers:
            continue
        a_to_b, b_to_a = edges.edge_strengths(
            node.absolute_weight, other.absolute_weight, layers.depths
        )
        for source, target, raw in ((node.id, other.id, a_to_b), (other.id, node.id, b_to_a)):
            new.append(
                NewEdge(
                    source_id=source,
                    target_id=target,
                    raw_weight=raw,
                    absolute_weight=edges.damped(raw),
                    reasons=layers.reasons,
                    shared_entity_ids=layers.shared_entities,
                    shared_themes=layers.shared_themes,
                    timeline_days=layers.timeline_days,
                    initial_cosine=layers.cosine,
                )
            )
    await upsert_edges(conn, new, now)
    return len(new)


async def recompute_edges(conn: AsyncConnection[Any], node_id: int) -> int:
    """After a reinforcement: every edge of the node from the ends' current weights."""
    updates: list[tuple[float, float, int]] = []
    for edge in await edges_touching(conn, node_id):
        depths = edges.frozen_layers(edge, edge.a_themes, edge.b_themes, edge.a_precision)
        if not depths:
            log.error("lzg edge %s has no reconstructible layer; left as is", edge.id)
            continue
        a_to_b, _ = edges.edge_strengths(edge.a_absolute_weight, edge.b_absolute_weight, depths)
        updates.append((a_to_b, edges.damped(a_to_b), edge.id))
    await set_edge_weights(conn, updates)
    return len(updates)
