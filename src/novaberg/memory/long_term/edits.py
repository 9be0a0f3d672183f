"""The person's own edits of long-term nodes (docs/behaviour/memory.md#correcting-and-deleting).

A deleted node is gone with its edges, its source keys are tombstoned (never promoted or
imported again) and their live short-term entries forgotten too; a corrected node is
re-embedded in place. Either marks the pair's profiles for re-distillation.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.base import LLM
from novaberg.pair import Pair
from novaberg.store import keys, long_term_nodes
from novaberg.store.long_term_nodes import LongTermNode
from novaberg.store.short_term import ShortTermStore

log = logging.getLogger(__name__)


async def delete_node(
    pool: AsyncConnectionPool, short_term: ShortTermStore, pair: Pair, node_id: int
) -> list[str] | None:
    """Delete one of the pair's nodes for good; the tombstoned short-term keys, or None
    when the pair has no such node. Live short-term entries among those keys are the
    same memory and are forgotten too; the profiles are marked for re-distillation."""
    async with pool.connection() as conn, conn.transaction():
        source = await long_term_nodes.delete_node(conn, pair, node_id)
    if source is None:
        return None
    for key in source:
        await short_term.delete(pair, key)
    await short_term.redis.set(keys.profile_dirty(pair), "1")
    log.info("lzg %s: node %s deleted by the person (%d source keys)", pair, node_id, len(source))
    return source


async def correct_node(
    pool: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: LLM,
    pair: Pair,
    node_id: int,
    text: str,
    *,
    clock: Callable[[], float] = time.time,
) -> LongTermNode | None:
    """Replace a node's text with the person's and re-embed it; the node, or None when
    the pair has no such node. Weights, edges and provenance stay."""
    async with pool.connection() as conn:
        if await long_term_nodes.get_node_of(conn, pair, node_id) is None:
            return None
    vector = (await model.embed([text]))[0]
    async with pool.connection() as conn:
        node = await long_term_nodes.correct_node(
            conn, pair, node_id, text, vector, datetime.fromtimestamp(clock(), UTC)
        )
    if node is not None:
        await redis.set(keys.profile_dirty(pair), "1")
    return node
