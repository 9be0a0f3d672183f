"""The running understanding (Sachlage) of a pair: `sachlage:{u}:{c}` and its per-turn
record `sachlage_verlauf:{u}:{c}`, both for `SITUATION_TTL` (docs/behaviour/nodes.md#situation).

The situation node writes the bubble forward each user turn; the next turn reads it (and an
impulse reads the triggering turn's entry of the record) with the rest of its turn context.
"""

from __future__ import annotations

import json
from typing import Any

import redis.asyncio as aioredis

from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.keys import SITUATION_TTL


async def load(redis: aioredis.Redis, pair: Pair) -> str | None:
    """The bubble as stored (JSON text), None when there is none (new pair, or expired)."""
    raw = await redis.get(keys.situation(pair))
    return raw.decode() if isinstance(raw, bytes) else raw


async def store(redis: aioredis.Redis, pair: Pair, turn_id: str, situation: dict[str, Any]) -> None:
    """The bubble, and under `turn_id` in the record (without a turn id only the bubble), in
    one MULTI/EXEC: all or nothing. (Only this pair's later turns read them, and a pair's
    turns run one at a time.)"""
    data = json.dumps(situation, ensure_ascii=False)
    if not turn_id:
        await redis.set(keys.situation(pair), data, ex=SITUATION_TTL)
        return
    async with redis.pipeline(transaction=True) as pipe:
        pipe.set(keys.situation(pair), data, ex=SITUATION_TTL)
        pipe.hset(keys.situation_history(pair), turn_id, data)
        pipe.expire(keys.situation_history(pair), SITUATION_TTL)
        await pipe.execute()
