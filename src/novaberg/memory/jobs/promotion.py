"""synapsen_promotion: drain the promotion queues into the long-term memory
(docs/behaviour/memory.md#promotion).

Per user with queued jobs: leftovers in `queue:{u}:arbeit` (a crash or a failed job of an
earlier run) are re-queued first, at most twice per key (`queue:{u}:versuche`); the third
time they go to `queue:{u}:gescheitert`. Then jobs move one by one from `queue:{u}` to
`:arbeit` (LMOVE), are promoted and removed. A job that fails stays in `:arbeit`, visible,
until the next run re-queues it. Unreadable jobs go straight to `:gescheitert`.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from typing import Any, Final

import redis.asyncio as aioredis

from novaberg.memory.long_term.promotion import Promotion
from novaberg.memory.model_slot import ModelSlot, no_slot
from novaberg.store import keys

log = logging.getLogger(__name__)

MAX_REQUEUES: Final = 2
"""A job is re-queued twice; the third leftover goes to `:gescheitert`."""

JOBS_PER_RUN: Final = 50
"""Promotions per run, so one run stays short and user turns get the model back quickly."""


def _job_key(item: str) -> str | None:
    try:
        job = json.loads(item)
    except (TypeError, ValueError):
        return None
    if not isinstance(job, dict) or not job.get("key"):
        return None
    return str(job["key"])


async def _requeue_leftovers(redis: aioredis.Redis, user_id: str, counts: Counter[str]) -> None:
    working = keys.promotion_working(user_id)
    for item in map(str, await redis.lrange(working, 0, -1)):
        key = _job_key(item)
        attempts = await redis.hincrby(keys.promotion_attempts(user_id), key or item, 1)
        async with redis.pipeline(transaction=True) as pipe:
            pipe.lrem(working, 1, item)
            if key is None or attempts > MAX_REQUEUES:
                pipe.rpush(keys.promotion_failed(user_id), item)
                counts["gescheitert"] += 1
            else:
                pipe.rpush(keys.promotion_queue(user_id), item)
                counts["erneut"] += 1
            await pipe.execute()
        if key is None or attempts > MAX_REQUEUES:
            log.error(
                "promotion %s: job given up after %d attempts: %.200s", user_id, attempts, item
            )


async def _forget_user(redis: aioredis.Redis, user_id: str) -> None:
    """Drop a user with nothing queued or in work from the set of queued users. The set is
    global (another hash slot than the user's lists), so no script does it: remove, then
    look again — a job queued meanwhile added the user before it was pushed, and may have
    been the member removed; the user goes back in then."""
    queue, working = keys.promotion_queue(user_id), keys.promotion_working(user_id)

    async def empty() -> bool:
        return not await redis.llen(queue) and not await redis.llen(working)

    if not await empty():
        return
    await redis.srem(keys.promotion_users(), user_id)
    if not await empty():
        await redis.sadd(keys.promotion_users(), user_id)


async def run_promotions(
    redis: aioredis.Redis,
    promotion: Promotion,
    *,
    slot: ModelSlot = no_slot,
    limit: int = JOBS_PER_RUN,
) -> dict[str, Any]:
    """One run of the promotion job; returns counts per outcome."""
    counts: Counter[str] = Counter()
    processed = 0
    for user_id in sorted(map(str, await redis.smembers(keys.promotion_users()))):
        await _requeue_leftovers(redis, user_id, counts)
        queue, working = keys.promotion_queue(user_id), keys.promotion_working(user_id)
        while processed < limit:
            moved = await redis.lmove(queue, working, "LEFT", "RIGHT")
            if moved is None:
                break
            item = str(moved)
            try:
                job = json.loads(item)
                if not isinstance(job, dict) or not job.get("key"):
                    raise ValueError("job without key")
            except ValueError:
                async with redis.pipeline(transaction=True) as pipe:
                    pipe.lrem(working, 1, item)
                    pipe.rpush(keys.promotion_failed(user_id), item)
                    await pipe.execute()
                counts["gescheitert"] += 1
                log.error("promotion %s: unreadable job %.200s", user_id, item)
                continue
            processed += 1
            try:
                outcome = await promotion.promote(job, slot=slot)
            except Exception as exc:
                counts["fehler"] += 1
                log.error(
                    "promotion %s: job %s failed (%s: %s); stays in :arbeit",
                    user_id,
                    job.get("key"),
                    type(exc).__name__,
                    exc,
                )
                continue
            counts[outcome.action] += 1
            async with redis.pipeline(transaction=True) as pipe:
                pipe.lrem(working, 1, item)
                pipe.hdel(keys.promotion_attempts(user_id), str(job["key"]))
                await pipe.execute()
        await _forget_user(redis, user_id)
    return dict(counts)
