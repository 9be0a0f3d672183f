"""Path 1's late results for its CharacterGraph (docs/behaviour/graphs.md#human-graph).

The HumanGraph hands its turn on as soon as the user's session turn is stored; salience
(segmentation, scoring) goes on meanwhile. What it finds — `salienz_human` and the user's
intentions — is pushed to `pfad1_nachlauf:{turn_id}` and popped by the CharacterGraph's
`human_tail` node, which blocks on it only for as long as the tail is still running.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Final

import orjson
import redis.asyncio as aioredis

from novaberg.store import keys

log = logging.getLogger(__name__)

BLOCK_SLICE_S: Final = 2.0
"""Longest single BLPOP, well under the client's socket timeout (`SOCKET_TIMEOUT_S`)."""


async def publish_tail(redis: aioredis.Redis, turn_id: str, result: dict[str, Any]) -> None:
    """Hand Path 1's salience results of `turn_id` to its CharacterGraph.

    RPUSH and EXPIRE go out in one round trip without MULTI: they need no atomicity. The
    only other client of the key pops it; a pop between the two leaves no key, and the
    EXPIRE then sets nothing — the state a pop after both leaves too."""
    key = keys.human_tail(turn_id)
    pipe = redis.pipeline(transaction=False)
    pipe.rpush(key, orjson.dumps(result).decode("utf-8"))
    pipe.expire(key, keys.HUMAN_TAIL_TTL)
    await pipe.execute()


async def await_tail(
    redis: aioredis.Redis, turn_id: str, timeout_s: float
) -> dict[str, Any] | None:
    """The results of `turn_id`'s Path 1 tail, waiting at most `timeout_s`; None if they
    did not come (or were unreadable, logged)."""
    key = keys.human_tail(turn_id)
    deadline = time.monotonic() + timeout_s
    popped = None
    while popped is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        # Short blocking reads: the client's socket timeout (SOCKET_TIMEOUT_S) would end
        # one long BLPOP with a TimeoutError while Path 1 is still scoring.
        popped = await redis.blpop([key], timeout=min(remaining, BLOCK_SLICE_S))
    try:
        value = orjson.loads(popped[1])
    except orjson.JSONDecodeError:
        log.error("pfad1_nachlauf of turn %s unreadable: %.120r", turn_id, popped[1])
        return None
    return value if isinstance(value, dict) else None


async def peek_tail(redis: aioredis.Redis, turn_id: str) -> dict[str, Any] | None:
    """The published results of `turn_id`'s Path 1 tail without taking them, or None (not
    published yet, expired, or unreadable): a held event folds them into its payload before
    it is queued again (events/parked.py)."""
    raw = await redis.lindex(keys.human_tail(turn_id), 0)
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
