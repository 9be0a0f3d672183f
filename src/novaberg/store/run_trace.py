"""What a CharacterGraph run leaves in Redis beside the session, in one round trip
(docs/behaviour/nodes.md#dispatcher): the goal panel's drive snapshot
`drive:short_term:{u}:{c}` (no TTL, replaced by the next run), the conversation vector's
trace (`gv:detail`, `gv:vorturn`; `store/conversation_vector.py`) and the run's momentum
(`momentum:{u}:{c}`, `MOMENTUM_TTL`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
import redis.asyncio as aioredis

from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.conversation_vector import queue_turn_trace


async def write(
    redis: aioredis.Redis,
    pair: Pair,
    *,
    drive_snapshot: Mapping[str, Any],
    detail: Mapping[str, Any] | None,
    answer: str | None,
    mode: str | None,
    momentum: str | None,
) -> list[str]:
    """Write them in one non-transactional pipeline (no write reads another, so nothing
    needs them atomic); returns the trace's keys. A failure is raised once every queued
    write has been tried."""
    pipe = redis.pipeline(transaction=False)
    pipe.set(keys.drive_snapshot(pair), orjson.dumps(dict(drive_snapshot), default=str))
    trace = queue_turn_trace(pipe, pair, detail, answer, mode)
    if momentum is not None:
        pipe.set(keys.momentum(pair), momentum, ex=keys.MOMENTUM_TTL)
    await pipe.execute()
    return trace
