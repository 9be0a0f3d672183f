"""What a run leaves in Redis for the pair's next turns and for other processes
(docs/behaviour/nodes.md): Nova's emotional state, the running understanding (Sachlage),
the stance hash, the dispatcher's trace (drive snapshot, conversation vector, momentum) and
Path 1's late salience results for its CharacterGraph.

The graph's nodes decide what to write; the stores here write it (their keys, TTLs and
scripts stay with them). What the next turn reads back arrives in its turn context
(`agents/turn_context.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import redis.asyncio as aioredis

from novaberg.pair import Pair
from novaberg.store import human_tail, nova_state, run_trace, situation, stance


async def save_nova_state(
    redis: aioredis.Redis,
    pair: Pair,
    emotion: Mapping[str, Any],
    register: object,
    now: float | datetime,
    user_time: float | datetime | None = None,
) -> dict[str, str]:
    """Store Nova's emotion and register (and, on a user turn, when the user spoke);
    returns the hash fields written."""
    return await nova_state.save(redis, pair, emotion, register, now, user_time=user_time)


async def load_situation(redis: aioredis.Redis, pair: Pair) -> str | None:
    """The understanding as the pair's last turn left it (JSON text), or None. Path 1 reads
    it before the CharacterGraph's turn context exists (graph/nodes/situation_reader.py)."""
    return await situation.load(redis, pair)


async def store_situation(
    redis: aioredis.Redis, pair: Pair, turn_id: str, bubble: dict[str, Any]
) -> None:
    """The understanding as this turn left it, and under `turn_id` in its record."""
    await situation.store(redis, pair, turn_id, bubble)


async def replace_stance(redis: aioredis.Redis, pair: Pair, fields: dict[str, str]) -> None:
    """The stance hash holds exactly `fields` afterwards (atomically)."""
    await stance.replace(redis, pair, fields)


async def write_run_trace(
    redis: aioredis.Redis,
    pair: Pair,
    *,
    drive_snapshot: Mapping[str, Any],
    detail: Mapping[str, Any] | None,
    answer: str | None,
    mode: str | None,
    momentum: str | None,
) -> list[str]:
    """The drive snapshot, the conversation vector's trace and the momentum in one round
    trip; returns the trace's keys."""
    return await run_trace.write(
        redis,
        pair,
        drive_snapshot=drive_snapshot,
        detail=detail,
        answer=answer,
        mode=mode,
        momentum=momentum,
    )


async def publish_path1_tail(redis: aioredis.Redis, turn_id: str, result: dict[str, Any]) -> None:
    """Hand Path 1's salience results of `turn_id` to its CharacterGraph."""
    await human_tail.publish_tail(redis, turn_id, result)


async def await_path1_tail(
    redis: aioredis.Redis, turn_id: str, timeout_s: float
) -> dict[str, Any] | None:
    """Path 1's salience results of `turn_id`, waiting at most `timeout_s`; None if they
    did not come (or were unreadable)."""
    return await human_tail.await_tail(redis, turn_id, timeout_s)
