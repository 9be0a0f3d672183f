"""Long-term memories bound to an entity, for the memory anchor
(docs/behaviour/nodes.md#memory-anchor): the graph's door to `store/named_nodes.py`.
"""

from __future__ import annotations

from collections.abc import Sequence

from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair
from novaberg.store import named_nodes
from novaberg.store.named_nodes import NamedNode

__all__ = ["NamedNode", "nodes_of_entities"]


async def nodes_of_entities(
    pool: AsyncConnectionPool, pair: Pair, entity_ids: Sequence[int], limit: int
) -> dict[int, list[NamedNode]]:
    """The pair's active long-term nodes of each entity (≤ `limit` each), strongest first
    (raises `psycopg.Error` when the read fails)."""
    return await named_nodes.bound_to(pool, pair, entity_ids, limit)
