"""The spreading read: the enricher's `lzg_resonanz` (docs/behaviour/memory.md#spreading-read).

Three anchors at cosine ≥ 0.40, spread along the strongest outgoing edges by cluster depth,
ranked by decayed weight × shell × Plutchik ring factor, top 3 with their paths. Returned
nodes are marked as retrieved (one more retrieval, retrieved now), the reinforcement on
use: decay measures from the last use.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import numpy as np
from psycopg_pool import AsyncConnectionPool

from novaberg.ei.canon import NEUTRAL, canonicalise, sector_distance, sector_of
from novaberg.memory.context import SOURCE_LONG_TERM, ContextEntry
from novaberg.memory.curve import LONG_TERM_CAP
from novaberg.pair import Pair
from novaberg.store import long_term_nodes, long_term_search
from novaberg.store.long_term_edges import outgoing

ANCHOR_COUNT: Final = 3
ANCHOR_MIN_COSINE: Final = 0.40
"""Spreading read: top 3 active nodes with cosine ≥ 0.40."""

EDGES_PER_SHELL: Final[Mapping[int, int]] = {1: 3, 2: 2, 3: 2}
"""Strongest outgoing edges followed per node: 3 at shell 1, then 2."""

SHELL_FACTOR: Final[Mapping[int, float]] = {0: 1.0, 1: 0.75, 2: 0.5, 3: 0.25}
RING_FACTOR: Final[Mapping[int, float]] = {0: 1.0, 1: 0.9, 2: 0.8, 3: 0.7, 4: 0.6}
"""Sort weight = decayed weight × shell factor × Plutchik ring factor."""

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

DEFAULT_SUBTYPE: Final = "kontext"
"""The reducer's subtype of a memory without a dimension."""


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


@dataclass(frozen=True, slots=True)
class PathStep:
    """One edge on the way from an anchor to a memory."""

    from_node_id: int
    edge_id: int
    reasons: list[str]
    shared_themes: list[str]
    shared_entity_ids: list[int]

    def as_state(self) -> dict[str, Any]:
        return {
            "von_knoten_id": self.from_node_id,
            "kante_id": self.edge_id,
            "verbindungs_gruende": self.reasons,
            "geteilte_themen": self.shared_themes,
            "geteilte_entitaet_ids": self.shared_entity_ids,
        }


@dataclass(slots=True)
class Memory:
    """One memory of the spreading read: `shell` 0 is an anchor, n is n edges away."""

    node_id: int
    text: str
    dimension: str
    themes: list[str]
    emotion: str
    decayed_weight: float
    shell: int
    sort_weight: float
    path: list[PathStep]
    created_at: datetime | None
    observer: str = ""
    cosine: float | None = None

    def as_state(self) -> dict[str, Any]:
        """The memory in `lzg_resonanz["erinnerungen"]` (graph state and pipeline log)."""
        return {
            "knoten_id": self.node_id,
            "inhalt": self.text,
            "dimension": self.dimension,
            "themen": self.themes,
            "emotion": self.emotion,
            "gewicht_decay": self.decayed_weight,
            "schale": self.shell,
            "sortier_gewicht": self.sort_weight,
            "pfad": [step.as_state() for step in self.path],
            "erstellt_am": self.created_at.isoformat() if self.created_at else None,
            "beobachter": self.observer,
            "cosine": self.cosine,
        }


@dataclass(slots=True)
class Resonance:
    """The enricher's `lzg_resonanz` and the matching ContextEntries."""

    anchor_count: int
    depth: int
    cluster: str
    nova_sector: int | None
    memories: list[Memory] = field(default_factory=list)

    def as_state(self) -> dict[str, Any]:
        """`lzg_resonanz` as the graph state and the pipeline log hold it."""
        return {
            "anker_anzahl": self.anchor_count,
            "sprung_tiefe": self.depth,
            "cluster": self.cluster,
            "nova_sektor": self.nova_sector,
            "erinnerungen": [m.as_state() for m in self.memories],
        }

    def entries(self) -> list[ContextEntry]:
        return [
            ContextEntry(
                source=SOURCE_LONG_TERM,
                subtype=m.dimension or DEFAULT_SUBTYPE,
                text=m.text,
                weight=min(1.0, m.sort_weight / LONG_TERM_CAP),
                meta={
                    "knoten_id": m.node_id,
                    "schale": m.shell,
                    "gewicht_decay": m.decayed_weight,
                    "sortier_gewicht": m.sort_weight,
                    "themen": m.themes,
                    "emotion": m.emotion,
                    "beobachter": m.observer,
                    "pfad": [step.as_state() for step in m.path],
                },
            )
            for m in self.memories
            if m.text.strip()
        ]


async def spreading_read(
    pool: AsyncConnectionPool,
    pair: Pair,
    vector: Sequence[float] | np.ndarray | None,
    cluster: str | None,
    nova_emotion: str | None = None,
    *,
    mark_retrieved: bool = True,
    clock: Callable[[], float] = time.time,
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
    async with pool.connection() as conn:
        anchors = [
            node
            for node in await long_term_search.nearest(conn, pair, vector, ANCHOR_COUNT)
            if (node.cosine or 0.0) >= ANCHOR_MIN_COSINE
        ]
        result.anchor_count = len(anchors)
        if not anchors:
            return result
        found: list[Memory] = [
            Memory(
                node_id=node.id,
                text=node.text,
                dimension=node.dimension,
                themes=list(node.themes),
                emotion=node.emotion or "",
                decayed_weight=node.decayed_weight,
                shell=0,
                sort_weight=0.0,
                path=[],
                created_at=node.created_at,
                observer=node.observer,
                cosine=node.cosine,
            )
            for node in anchors
        ]
        shell_members: list[tuple[Memory, int | None]] = [(m, None) for m in found]
        for shell in range(1, depth + 1):
            by_id = {m.node_id: m for m, _ in shell_members}
            steps = [(m.node_id, previous) for m, previous in shell_members]
            next_members: list[tuple[Memory, int | None]] = []
            for edge in await outgoing(conn, steps, EDGES_PER_SHELL.get(shell, 2)):
                source = by_id[edge.source_id]
                step = PathStep(
                    from_node_id=source.node_id,
                    edge_id=edge.edge_id,
                    reasons=edge.reasons,
                    shared_themes=edge.shared_themes,
                    shared_entity_ids=edge.shared_entity_ids,
                )
                memory = Memory(
                    node_id=edge.target_id,
                    text=edge.text,
                    dimension=edge.dimension,
                    themes=list(edge.themes),
                    emotion=edge.emotion or "",
                    decayed_weight=edge.decayed_weight,
                    shell=shell,
                    sort_weight=0.0,
                    path=[*source.path, step],
                    created_at=edge.created_at,
                    observer=edge.observer,
                )
                found.append(memory)
                next_members.append((memory, source.node_id))
            if not next_members:
                break
            shell_members = next_members
        best: dict[int, Memory] = {}
        for memory in found:
            kept = best.get(memory.node_id)
            if kept is None or memory.shell < kept.shell:
                best[memory.node_id] = memory
        for memory in best.values():
            memory.sort_weight = (
                memory.decayed_weight
                * SHELL_FACTOR.get(memory.shell, 0.0)
                * ring_factor(nova_emotion, memory.emotion)
            )
        ranked = sorted(best.values(), key=lambda m: (-m.sort_weight, m.shell, m.node_id))
        result.memories = ranked[:RESULT_COUNT]
        if mark_retrieved and result.memories:
            await long_term_nodes.mark_retrieved(
                conn,
                [m.node_id for m in result.memories],
                datetime.fromtimestamp(clock(), UTC),
            )
    return result
