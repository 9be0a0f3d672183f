"""The imprint layer's threads (Prägung, docs/behaviour/nodes.md#imprint): a topic that
moved the character grows its thread each time a turn about it passes the gate. The gate is
the imprint node's; this stores what passed.
"""

from __future__ import annotations

from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair
from novaberg.store import imprint_threads
from novaberg.store.imprint_threads import Thread

__all__ = ["Thread", "strengthen_thread"]


async def strengthen_thread(
    pool: AsyncConnectionPool,
    pair: Pair,
    topic: str,
    increment: float,
    max_strength: float,
    turn_id: str | None,
) -> Thread | None:
    """Add `increment` to the topic's thread (capped at `max_strength`), count the turn;
    the thread as it is now."""
    return await imprint_threads.strengthen(pool, pair, topic, increment, max_strength, turn_id)
