"""Long-term memories that name a thing, for the memory anchor
(docs/behaviour/nodes.md#memory-anchor): the graph's door to `store/named_nodes.py`.
"""

from __future__ import annotations

from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair
from novaberg.store import named_nodes
from novaberg.store.named_nodes import NamedNode

__all__ = ["NamedNode", "nodes_naming"]


async def nodes_naming(
    pool: AsyncConnectionPool, pair: Pair, name: str, limit: int
) -> list[NamedNode]:
    """The pair's active long-term nodes that name `name`, strongest first (raises
    `psycopg.Error` when the read fails)."""
    return await named_nodes.naming(pool, pair, name, limit)
