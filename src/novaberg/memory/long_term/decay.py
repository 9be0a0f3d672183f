"""Decay of the long-term memory (docs/behaviour/memory.md#decay), a nightly Pixie job.

Ebbinghaus: every active node's decayed weight = absolute weight × e^(−0.0015 × days since
its last reinforcement or retrieval); below 0.1 it is deactivated (kept, no longer read).
The same job keeps the pipeline log to 365 days (the conversation history stays).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Final

from psycopg_pool import AsyncConnectionPool

from novaberg.store.long_term_nodes import decay_batch
from novaberg.store.pipeline_log import purge_pipeline_log

log = logging.getLogger(__name__)

DECAY_RATE_PER_DAY: Final = 0.0015
DEACTIVATION_THRESHOLD: Final = 0.1
"""decayed weight = absolute × e^(−0.0015 × days); below 0.1 → inactive."""

DECAY_BATCH: Final = 10_000
"""Nodes updated per statement of the decay job."""

LOG_RETENTION_DAYS: Final = 365
"""pipeline_log rows older than this are deleted, except `turn_roh`
(docs/behaviour/graphs.md#pipeline-log)."""


@dataclass(frozen=True, slots=True)
class DecayOutcome:
    updated: int
    deactivated: int
    log_rows_deleted: int


async def decay(
    pool: AsyncConnectionPool,
    now: float | None = None,
    *,
    clock: Callable[[], float] = time.time,
) -> DecayOutcome:
    """Ebbinghaus decay of every active node, in batches, and the log retention."""
    moment = datetime.fromtimestamp(clock() if now is None else now, UTC)
    updated = deactivated = 0
    after = 0
    async with pool.connection() as conn:
        while True:
            batch = await decay_batch(
                conn,
                now=moment,
                rate_per_day=DECAY_RATE_PER_DAY,
                threshold=DEACTIVATION_THRESHOLD,
                after_id=after,
                batch=DECAY_BATCH,
            )
            if batch.last_id is None:
                break
            updated += batch.updated
            deactivated += batch.deactivated
            after = batch.last_id
        purged = await purge_pipeline_log(conn, moment - timedelta(days=LOG_RETENTION_DAYS))
    if deactivated:
        log.info("lzg decay: %d nodes updated, %d deactivated", updated, deactivated)
    return DecayOutcome(updated, deactivated, purged)


def decayed_weight(absolute: float, days: float) -> float:
    """absolute × e^(−0.0015 × days): what the decay job stores (for tests, panels)."""
    return absolute * math.exp(-DECAY_RATE_PER_DAY * max(0.0, days))
