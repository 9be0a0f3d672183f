"""The running understanding (Sachlage) of a pair: `sachlage:{u}:{c}` and its per-turn
record `sachlage_verlauf:{u}:{c}`, both for `SITUATION_TTL` (docs/behaviour/nodes.md#situation).

The situation node writes the bubble forward each user turn; the next turn reads it (and an
impulse reads the triggering turn's entry of the record) with the rest of its turn context.
"""

from __future__ import annotations

import json
from typing import Any, Final

import redis.asyncio as aioredis

from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.keys import SITUATION_TTL
from novaberg.store.scripts import script

_STORE_LUA: Final = """
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[2])
return 1
"""
"""KEYS[1]=situation, KEYS[2]=its history; ARGV[1]=bubble, ARGV[2]=TTL, ARGV[3]=turn id."""


async def store(redis: aioredis.Redis, pair: Pair, turn_id: str, situation: dict[str, Any]) -> None:
    """The bubble, and under `turn_id` in the record (without a turn id only the bubble)."""
    # Only this pair's later turns read the bubble and its history, and a pair's turns run
    # one at a time, so nothing sees a half-written state; still, one script (or one SET)
    # is the cheapest single command for the writes, and leaves them all-or-nothing as
    # MULTI/EXEC did.
    data = json.dumps(situation, ensure_ascii=False)
    if not turn_id:
        await redis.set(keys.situation(pair), data, ex=SITUATION_TTL)
        return
    await script(redis, _STORE_LUA)(
        keys=[keys.situation(pair), keys.situation_history(pair)],
        args=[data, SITUATION_TTL, turn_id],
    )
