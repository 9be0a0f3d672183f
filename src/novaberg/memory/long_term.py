"""Long-term memory (LZG) as a service: promotion, spreading read, decay
(docs/behaviour/memory.md#promotion, docs/behaviour/memory.md#spreading-read,
docs/behaviour/memory.md#decay).

- `promote(job)`: a short-term entry that crossed the gate becomes a node. Its `inhalt` is
  embedded and compared with every node of the pair, inactive ones included. Cosine ≥ 0.82
  reinforces an active node (roh + 0.1, edges recomputed) or half-reactivates an inactive
  one; otherwise a new node with two directed edges to every candidate a layer joins it
  to. No chat-model call. The short-term hash is kept. Knowledge that *came back* (a node
  reinforced or reactivated) is pushed to the shadow queue as a `wissen_rueckweg` task
  (topic = the entry's first theme), so Pixie may turn it into something Nova says.
- `spreading_read(...)`: the enricher's `lzg_resonanz` — 3 anchors at cosine ≥ 0.40, spread
  along the strongest outgoing edges by cluster depth, ranked by gewicht_decay × shell ×
  Plutchik ring factor, top 3 with paths. Returned nodes are marked as retrieved (abrufe,
  abgerufen_am), the reinforcement on use: decay measures from the last use.
- `decay(now)`: Ebbinghaus decay of active nodes and deactivation below 0.1, plus the
  pipeline_log retention (365 d, `turn_roh` kept).
- `delete(pair, id)` / `correct(pair, id, text)`: the person's own edits
  (docs/behaviour/memory.md#correcting-and-deleting). A deleted node is gone with its
  edges, its source keys are tombstoned (never promoted or imported again) and their live
  short-term entries forgotten too; a corrected node is re-embedded in place.

Edge candidates are bounded so promotion stays fast at any size: the 50 nearest active nodes
(embedding layer), up to 200 sharing a theme or an entity, up to 50 on the timeline.
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import numpy as np
import redis.asyncio as aioredis
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from novaberg.ei.canon import NEUTRAL, canonicalise, parse_number, sector_distance, sector_of
from novaberg.impulses import shadow_queue
from novaberg.llm.base import LLM
from novaberg.memory import edges
from novaberg.memory.context import SOURCE_LONG_TERM, ContextEntry
from novaberg.memory.curve import LONG_TERM_CAP, long_term_weight
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store import long_term as long_term_store
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_codec import CORRECTED_FIELD

log = logging.getLogger(__name__)

MATCH_THRESHOLD: Final = 0.82
"""A promoted entry this close (cosine) to an existing node reinforces it."""

REINFORCEMENT_BOOST: Final = 0.1
"""gewicht_roh += 0.1 on a match with an active node."""

REACTIVATION_BOOST: Final = 0.1

CAME_BACK: Final = frozenset({"verstaerkt", "reaktiviert"})
"""Promotion outcomes that met known knowledge again: they feed `wissen_rueckweg`."""
"""An inactive match comes back half: gewicht_decay = (absolut + 0.1) / 2."""

DECAY_RATE_PER_DAY: Final = 0.0015
DEACTIVATION_THRESHOLD: Final = 0.1
"""gewicht_decay = absolut × e^(−0.0015 × days); below 0.1 → aktiv = false."""

DECAY_BATCH: Final = 10_000
"""Nodes updated per statement of the decay job."""

LOG_RETENTION_DAYS: Final = 365
"""pipeline_log rows older than this are deleted, except `turn_roh`
(docs/behaviour/graphs.md#pipeline-log)."""

EDGE_EMBEDDING_CANDIDATES: Final = 50
EDGE_OVERLAP_CANDIDATES: Final = 200
EDGE_TIMELINE_CANDIDATES: Final = 50
"""Bounds of the edge candidate sets of a new node (see the module docstring)."""

ANCHOR_COUNT: Final = 3
ANCHOR_MIN_COSINE: Final = 0.40
"""Spreading read: top 3 active nodes with cosine ≥ 0.40."""

EDGES_PER_SHELL: Final[Mapping[int, int]] = {1: 3, 2: 2, 3: 2}
"""Strongest outgoing edges followed per node: 3 at shell 1, then 2."""

SHELL_FACTOR: Final[Mapping[int, float]] = {0: 1.0, 1: 0.75, 2: 0.5, 3: 0.25}
RING_FACTOR: Final[Mapping[int, float]] = {0: 1.0, 1: 0.9, 2: 0.8, 3: 0.7, 4: 0.6}
"""Sort weight = gewicht_decay × shell factor × Plutchik ring factor."""

RESULT_COUNT: Final = 3
"""Memories returned by the spreading read."""

DEFAULT_CLUSTER: Final = "paradox"
SPREAD_DEPTH_DEFAULT: Final = 1
SPREAD_DEPTH: Final[Mapping[str, int]] = {
    "werkstatt": 0,
    "foyer": 0,
    "schlachtfeld": 0,
    "bier": 2,
    "kissenschlacht": 2,
    "glut": 3,
    "feuerwerk": 3,
}
"""Spreading depth per landscape cluster; every other cluster spreads 1."""

ModelSlot = Callable[[], AbstractAsyncContextManager[Any]]
"""Opens a model-gate slot (background priority) around a model call, or does nothing."""


@contextlib.asynccontextmanager
async def no_slot() -> AsyncIterator[None]:
    yield None


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


def ring_factor(current: str | None, remembered: str | None) -> float:
    """Plutchik affinity of Nova's emotion and a memory's: 1.0 when either has no sector."""
    sectors = []
    for name in (current, remembered):
        if not name or not str(name).strip() or str(name).strip().lower() == NEUTRAL:
            return 1.0
        sector = sector_of(canonicalise(str(name)))
        if sector is None:
            return 1.0
        sectors.append(sector)
    return RING_FACTOR[sector_distance(sectors[0], sectors[1])]


def spread_depth(cluster: str | None) -> int:
    return SPREAD_DEPTH.get(cluster or DEFAULT_CLUSTER, SPREAD_DEPTH_DEFAULT)


class _AlreadyPromoted(Exception):
    """Another run of the same promotion job committed first; this one is rolled back."""


@dataclass(frozen=True, slots=True)
class PromotionOutcome:
    """action: neu | verstaerkt | reaktiviert | schon_befoerdert | verfallen | geloescht."""

    action: str
    key: str
    node_id: int | None = None
    cosine: float | None = None
    edges: int = 0


@dataclass(slots=True)
class Memory:
    """One memory of the spreading read."""

    knoten_id: int
    inhalt: str
    dimension: str
    themen: list[str]
    emotion: str
    gewicht_decay: float
    schale: int
    sortier_gewicht: float
    pfad: list[dict[str, Any]]
    erstellt_am: datetime | None
    beobachter: str = ""
    cosine: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "knoten_id": self.knoten_id,
            "inhalt": self.inhalt,
            "dimension": self.dimension,
            "themen": self.themen,
            "emotion": self.emotion,
            "gewicht_decay": self.gewicht_decay,
            "schale": self.schale,
            "sortier_gewicht": self.sortier_gewicht,
            "pfad": self.pfad,
            "erstellt_am": self.erstellt_am.isoformat() if self.erstellt_am else None,
            "beobachter": self.beobachter,
            "cosine": self.cosine,
        }


@dataclass(slots=True)
class Resonance:
    """The enricher's `lzg_resonanz` and the matching ContextEntries."""

    anker_anzahl: int
    sprung_tiefe: int
    cluster: str
    nova_sektor: int | None
    erinnerungen: list[Memory] = field(default_factory=list)

    def as_state(self) -> dict[str, Any]:
        return {
            "anker_anzahl": self.anker_anzahl,
            "sprung_tiefe": self.sprung_tiefe,
            "cluster": self.cluster,
            "nova_sektor": self.nova_sektor,
            "erinnerungen": [m.as_dict() for m in self.erinnerungen],
        }

    def entries(self) -> list[ContextEntry]:
        return [
            ContextEntry(
                quelle=SOURCE_LONG_TERM,
                subtyp=m.dimension or "kontext",
                inhalt=m.inhalt,
                gewicht=min(1.0, m.sortier_gewicht / LONG_TERM_CAP),
                meta={
                    "knoten_id": m.knoten_id,
                    "schale": m.schale,
                    "gewicht_decay": m.gewicht_decay,
                    "sortier_gewicht": m.sortier_gewicht,
                    "themen": m.themen,
                    "emotion": m.emotion,
                    "beobachter": m.beobachter,
                    "pfad": m.pfad,
                },
            )
            for m in self.erinnerungen
            if m.inhalt.strip()
        ]


@dataclass(frozen=True, slots=True)
class DecayOutcome:
    updated: int
    deactivated: int
    log_rows_deleted: int


class LongTermMemory:
    """Promotion, spreading read and decay of the long-term memory."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        redis: aioredis.Redis,
        model: LLM,
        *,
        kzg: ShortTermStore | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.pool = pool
        self.redis = redis
        self.model = model
        self.kzg = kzg or ShortTermStore(redis)
        self.clock = clock

    # --- promotion ------------------------------------------------------------------

    async def promote(
        self, job: Mapping[str, Any], *, slot: ModelSlot = no_slot
    ) -> PromotionOutcome:
        """Carry one `queue:{u}` job into the long-term memory (idempotent per KZG key)."""
        key = str(job["key"])
        entry = await self.kzg.get(key)
        if entry is None or not entry.fields.get("inhalt", "").strip():
            log.info("promotion: %s expired before promotion; dropped", key)
            return PromotionOutcome("verfallen", key)
        fields = entry.fields
        pair = Pair(
            fields.get("user_id") or str(job["user_id"]),
            fields.get("character_id") or str(job["character_id"]),
        )
        async with self.pool.connection() as conn:
            deleted = await long_term_store.deleted_key(conn, key)
            done = None if deleted is not None else await long_term_store.promoted_to(conn, key)
        if deleted is not None:
            log.info("promotion: %s belonged to deleted node %s; dropped", key, deleted)
            return PromotionOutcome("geloescht", key, None)
        if done is not None:
            return PromotionOutcome("schon_befoerdert", key, done)
        async with slot():
            vector = (await self.model.embed([fields["inhalt"]]))[0]
        now = _dt(self.clock())
        try:
            outcome = await self._carry(pair, key, fields, vector, now)
        except _AlreadyPromoted:
            return PromotionOutcome("schon_befoerdert", key)
        await self.redis.set(keys.profile_dirty(pair), "1")
        if outcome.action in CAME_BACK:
            await self._feed_back(pair, fields, outcome, now)
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
        self,
        pair: Pair,
        fields: Mapping[str, str],
        outcome: PromotionOutcome,
        now: datetime,
    ) -> None:
        """Push the knowledge that came back as a `wissen_rueckweg` shadow task; a failure
        is logged (the promotion stands)."""
        themes = [t.strip() for t in (fields.get("themen") or "").split(",") if t.strip()]
        content = " ".join(fields["inhalt"].split())
        arousal = parse_number(fields.get("arousal"))
        task = shadow_queue.ShadowTask(
            user_id=pair.user_id,
            character_id=pair.character_id,
            task=shadow_queue.TASK_KNOWLEDGE_BACK,
            topic=themes[0] if themes else content[:60],
            context=content,
            reason=f"befoerderung {outcome.action}: knoten {outcome.node_id}",
            emotion=fields.get("emotion") or None,
            mode=fields.get("modus") or None,
            arousal=arousal if arousal is not None and 0.0 <= arousal <= 1.0 else None,
            reference_id=fields.get("turn_id") or None,
        )
        try:
            await shadow_queue.push(self.pool, task, now)
        except Exception as exc:
            log.error("promotion %s: wissen_rueckweg not queued: %s", outcome.key, exc)

    async def _carry(
        self,
        pair: Pair,
        key: str,
        fields: Mapping[str, str],
        vector: Sequence[float],
        now: datetime,
    ) -> PromotionOutcome:
        """Create, reinforce or reactivate a node for `key`, recorded in the same
        transaction; `_AlreadyPromoted` (all undone) if another run recorded it first."""
        async with self.pool.connection() as conn, conn.transaction():
            best = await long_term_store.nearest(conn, pair, vector, 1, active_only=False)
            if best and float(best[0]["cosine"]) >= MATCH_THRESHOLD:
                outcome = await self._reinforce(conn, key, best[0], now)
            else:
                outcome = await self._create(conn, pair, key, fields, vector, now)
            if outcome.node_id is not None:
                await long_term_store.link_turn(conn, key, outcome.node_id)
                if not await long_term_store.record_promotion(
                    conn, key, outcome.node_id, outcome.action
                ):
                    raise _AlreadyPromoted(key)  # a concurrent run committed first
        return outcome

    async def _reinforce(
        self, conn: AsyncConnection[Any], key: str, node: Mapping[str, Any], now: datetime
    ) -> PromotionOutcome:
        node_id = int(node["id"])
        cosine = float(node["cosine"])
        absolute = float(node["gewicht_absolut"])
        if not node["aktiv"]:
            decayed = (absolute + REACTIVATION_BOOST) / 2
            await long_term_store.set_weights(
                conn,
                node_id,
                raw=float(node["gewicht_roh"]),
                absolute=absolute,
                decayed=decayed,
                now=now,
                count_frequency=False,
            )
            return PromotionOutcome("reaktiviert", key, node_id, cosine)
        raw = float(node["gewicht_roh"]) + REINFORCEMENT_BOOST
        absolute = long_term_weight(raw)
        await long_term_store.set_weights(
            conn,
            node_id,
            raw=raw,
            absolute=absolute,
            decayed=absolute,
            now=now,
            count_frequency=True,
        )
        changed = await self.recompute_edges(conn, node_id)
        return PromotionOutcome("verstaerkt", key, node_id, cosine, changed)

    async def _create(
        self,
        conn: AsyncConnection[Any],
        pair: Pair,
        key: str,
        fields: Mapping[str, str],
        vector: Sequence[float],
        now: datetime,
    ) -> PromotionOutcome:
        raw = parse_number(fields.get("salienz"))
        if raw is None:
            raise ValueError(f"short-term entry {key} has no readable salienz")
        absolute = long_term_weight(raw)
        created = parse_number(fields.get("erstellt_am"))
        corrected = parse_number(fields.get(CORRECTED_FIELD))
        timeline_id = parse_number(fields.get("timeline_id"))
        node = {
            "kzg_quell_key": key,
            "user_id": pair.user_id,
            "character_id": pair.character_id,
            "beobachter": fields.get("beobachter") or "user",
            "inhalt": fields["inhalt"],
            "embedding": vector,
            "dimension": fields.get("dimension") or "kontext",
            "gewicht_roh": raw,
            "gewicht_absolut": absolute,
            "gewicht_decay": absolute,
            "haeufigkeit": 1,
            "erstellt_am": now,
            "verstaerkt_am": now,
            "kzg_erstellt_am": _dt(created) if created is not None else None,
            "themen": _themes(fields.get("themen")),
            "gedaechtnistyp": fields.get("gedaechtnistyp") or "kurz",
            "entitaet_ids": _entity_ids(fields.get("entitaet_ids")),
            "timeline_id": int(timeline_id) if timeline_id is not None else None,
            "emotion": fields.get("emotion") or "",
            "arousal": parse_number(fields.get("arousal")),
            "emotions_vektor": fields.get("emotions_vektor") or "",
            "intentionen": fields.get("intentionen") or "[]",
            "modus": fields.get("modus") or "",
            "sprach_stil": fields.get("sprach_stil") or "",
            "beziehungs_dynamik": fields.get("beziehungs_dynamik") or "",
            "tone": fields.get("tone") or "",
            "korrigiert_am": _dt(corrected) if corrected is not None else None,
        }
        node_id = await long_term_store.insert_node(conn, node)
        if node_id is None:  # a concurrent promotion of the same key won, or it was deleted
            existing = await long_term_store.node_by_source(conn, key)
            return PromotionOutcome("schon_befoerdert", key, existing["id"] if existing else None)
        stored = await long_term_store.get_node(conn, node_id)
        assert stored is not None
        count = await self._connect(conn, pair, stored, vector, now)
        return PromotionOutcome("neu", key, node_id, None, count)

    async def _connect(
        self,
        conn: AsyncConnection[Any],
        pair: Pair,
        node: Mapping[str, Any],
        vector: Sequence[float],
        now: datetime,
    ) -> int:
        """Two directed edges to every candidate a layer joins the new node to."""
        node_id = int(node["id"])
        candidates: dict[int, Mapping[str, Any]] = {}
        for row in await long_term_store.nearest(conn, pair, vector, EDGE_EMBEDDING_CANDIDATES + 1):
            if float(row["cosine"]) > edges.EMBEDDING_THRESHOLD:
                candidates[int(row["id"])] = row
        for row in await long_term_store.overlap_candidates(
            conn,
            pair,
            vector,
            themes=node["themen"] or [],
            entity_ids=node["entitaet_ids"] or [],
            exclude_id=node_id,
            limit=EDGE_OVERLAP_CANDIDATES,
        ):
            candidates.setdefault(int(row["id"]), row)
        precision = str(node.get("timeline_praezision") or "")
        moment = node.get("timeline_zeit")
        if precision in edges.TIMELINE_TOLERANCE_DAYS and moment is not None:
            for row in await long_term_store.timeline_candidates(
                conn,
                pair,
                vector,
                precision=precision,
                moment=moment,
                within_days=edges.TIMELINE_TOLERANCE_DAYS[precision],
                exclude_id=node_id,
                limit=EDGE_TIMELINE_CANDIDATES,
            ):
                candidates.setdefault(int(row["id"]), row)
        candidates.pop(node_id, None)
        rows: list[long_term_store.EdgeRow] = []
        for other_id, other in candidates.items():
            layers = edges.find_layers(node, other, float(other["cosine"]))
            if not layers:
                continue
            a_to_b, b_to_a = edges.edge_strengths(
                float(node["gewicht_absolut"]), float(other["gewicht_absolut"]), layers.depths
            )
            frozen = (
                layers.reasons,
                layers.shared_entities,
                layers.shared_themes,
                layers.timeline_days,
                layers.cosine,
            )
            rows.append((node_id, other_id, a_to_b, edges.damped(a_to_b), *frozen))
            rows.append((other_id, node_id, b_to_a, edges.damped(b_to_a), *frozen))
        await long_term_store.upsert_edges(conn, rows, now)
        return len(rows)

    async def recompute_edges(self, conn: AsyncConnection[Any], node_id: int) -> int:
        """After a reinforcement: every edge of the node from the ends' current weights."""
        updates: list[tuple[float, float, int]] = []
        for edge in await long_term_store.edges_touching(conn, node_id):
            depths = edges.frozen_layers(
                edge, edge["a_themen"] or [], edge["b_themen"] or [], edge["a_praezision"]
            )
            if not depths:
                log.error("lzg edge %s has no reconstructible layer; left as is", edge["id"])
                continue
            a_to_b, _ = edges.edge_strengths(
                float(edge["a_absolut"]), float(edge["b_absolut"]), depths
            )
            updates.append((a_to_b, edges.damped(a_to_b), int(edge["id"])))
        await long_term_store.set_edge_weights(conn, updates)
        return len(updates)

    # --- reading --------------------------------------------------------------------

    async def nearest(
        self, pair: Pair, vector: Sequence[float] | np.ndarray, k: int = 10
    ) -> list[dict[str, Any]]:
        """The pair's k nearest active nodes with `cosine` (emotional gravitation, search)."""
        async with self.pool.connection() as conn:
            return await long_term_store.nearest(conn, pair, vector, k)

    async def spreading_read(
        self,
        pair: Pair,
        vector: Sequence[float] | np.ndarray | None,
        cluster: str | None,
        nova_emotion: str | None = None,
        *,
        mark_retrieved: bool = True,
    ) -> Resonance:
        """Anchors, spreading by cluster depth, ranking, top 3."""
        cluster_name = cluster or DEFAULT_CLUSTER
        depth = spread_depth(cluster_name)
        sector = None
        if nova_emotion and nova_emotion.strip().lower() != NEUTRAL:
            sector = sector_of(canonicalise(nova_emotion))
        result = Resonance(0, depth, cluster_name, sector)
        if vector is None or len(vector) == 0:
            return result
        async with self.pool.connection() as conn:
            anchors = [
                row
                for row in await long_term_store.nearest(conn, pair, vector, ANCHOR_COUNT)
                if float(row["cosine"]) >= ANCHOR_MIN_COSINE
            ]
            result.anker_anzahl = len(anchors)
            if not anchors:
                return result
            found: list[Memory] = [
                Memory(
                    knoten_id=int(row["id"]),
                    inhalt=row["inhalt"],
                    dimension=row["dimension"],
                    themen=list(row["themen"] or []),
                    emotion=row["emotion"] or "",
                    gewicht_decay=float(row["gewicht_decay"]),
                    schale=0,
                    sortier_gewicht=0.0,
                    pfad=[],
                    erstellt_am=row["erstellt_am"],
                    beobachter=row["beobachter"],
                    cosine=float(row["cosine"]),
                )
                for row in anchors
            ]
            shell_members: list[tuple[Memory, int | None]] = [(m, None) for m in found]
            for shell in range(1, depth + 1):
                by_id = {m.knoten_id: m for m, _ in shell_members}
                steps = [(m.knoten_id, prev) for m, prev in shell_members]
                rows = await long_term_store.outgoing(conn, steps, EDGES_PER_SHELL.get(shell, 2))
                next_members: list[tuple[Memory, int | None]] = []
                for row in rows:
                    source = by_id[int(row["quelle"])]
                    step = {
                        "von_knoten_id": source.knoten_id,
                        "kante_id": int(row["kante_id"]),
                        "verbindungs_gruende": list(row["verbindungs_gruende"] or []),
                        "geteilte_themen": list(row["geteilte_themen"] or []),
                        "geteilte_entitaet_ids": list(row["geteilte_entitaet_ids"] or []),
                    }
                    memory = Memory(
                        knoten_id=int(row["id"]),
                        inhalt=row["inhalt"],
                        dimension=row["dimension"],
                        themen=list(row["themen"] or []),
                        emotion=row["emotion"] or "",
                        gewicht_decay=float(row["gewicht_decay"]),
                        schale=shell,
                        sortier_gewicht=0.0,
                        pfad=[*source.pfad, step],
                        erstellt_am=row["erstellt_am"],
                        beobachter=row["beobachter"],
                    )
                    found.append(memory)
                    next_members.append((memory, source.knoten_id))
                if not next_members:
                    break
                shell_members = next_members
            best: dict[int, Memory] = {}
            for memory in found:
                kept = best.get(memory.knoten_id)
                if kept is None or memory.schale < kept.schale:
                    best[memory.knoten_id] = memory
            for memory in best.values():
                memory.sortier_gewicht = (
                    memory.gewicht_decay
                    * SHELL_FACTOR.get(memory.schale, 0.0)
                    * ring_factor(nova_emotion, memory.emotion)
                )
            ranked = sorted(
                best.values(), key=lambda m: (-m.sortier_gewicht, m.schale, m.knoten_id)
            )
            result.erinnerungen = ranked[:RESULT_COUNT]
            if mark_retrieved and result.erinnerungen:
                await long_term_store.mark_retrieved(
                    conn, [m.knoten_id for m in result.erinnerungen], _dt(self.clock())
                )
        return result

    async def mark_retrieved(self, node_ids: Sequence[int]) -> int:
        """Record a use of these nodes (reinforcement on retrieval)."""
        async with self.pool.connection() as conn:
            return await long_term_store.mark_retrieved(conn, node_ids, _dt(self.clock()))

    # --- the person's edits ---------------------------------------------------------

    async def delete(self, pair: Pair, node_id: int) -> list[str] | None:
        """Delete one of the pair's nodes for good; the tombstoned short-term keys, or None
        when the pair has no such node. Live short-term entries among those keys are the
        same memory and are forgotten too; the profiles are marked for re-distillation."""
        async with self.pool.connection() as conn, conn.transaction():
            source = await long_term_store.delete_node(conn, pair, node_id)
        if source is None:
            return None
        for key in source:
            await self.kzg.delete(pair, key)
        await self.redis.set(keys.profile_dirty(pair), "1")
        log.info(
            "lzg %s: node %s deleted by the person (%d source keys)", pair, node_id, len(source)
        )
        return source

    async def correct(self, pair: Pair, node_id: int, text: str) -> dict[str, Any] | None:
        """Replace a node's text with the person's and re-embed it; the node, or None when
        the pair has no such node. Weights, edges and provenance stay."""
        async with self.pool.connection() as conn:
            if await long_term_store.get_node_of(conn, pair, node_id) is None:
                return None
        vector = (await self.model.embed([text]))[0]
        async with self.pool.connection() as conn:
            node = await long_term_store.correct_node(
                conn, pair, node_id, text, vector, _dt(self.clock())
            )
        if node is not None:
            await self.redis.set(keys.profile_dirty(pair), "1")
        return node

    # --- decay ----------------------------------------------------------------------

    async def decay(self, now: float | None = None) -> DecayOutcome:
        """Ebbinghaus decay of every active node, in batches, and the log retention."""
        moment = _dt(self.clock() if now is None else now)
        updated = deactivated = 0
        after = 0
        async with self.pool.connection() as conn:
            while True:
                count, off, last = await long_term_store.decay_batch(
                    conn,
                    now=moment,
                    rate_per_day=DECAY_RATE_PER_DAY,
                    threshold=DEACTIVATION_THRESHOLD,
                    after_id=after,
                    batch=DECAY_BATCH,
                )
                if last is None:
                    break
                updated += count
                deactivated += off
                after = last
            purged = await long_term_store.purge_pipeline_log(
                conn, moment - timedelta(days=LOG_RETENTION_DAYS)
            )
        if deactivated:
            log.info("lzg decay: %d nodes updated, %d deactivated", updated, deactivated)
        return DecayOutcome(updated, deactivated, purged)


def decayed_weight(absolute: float, days: float) -> float:
    """gewicht_absolut × e^(−0.0015 × days): what the decay job stores (for tests, panels)."""
    return absolute * math.exp(-DECAY_RATE_PER_DAY * max(0.0, days))
