"""Nova's persisted emotional state, the `nova_state:{u}:{c}` hash
(docs/behaviour/emotion.md#persisted-state).

Only string I/O lives here; the field mapping and the pause decay are the pure functions of
`ei.persistence`. Writer: `ei_calc_persist`; reader: the turn context (`agents/turn_context.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import redis.asyncio as aioredis

from novaberg.ei.persistence import nova_state_fields
from novaberg.pair import Pair
from novaberg.store import keys


def as_strings(stored: Mapping[Any, Any]) -> dict[str, str]:
    """An HGETALL reply of the hash as a dict of strings (the turn context reads it in
    its own pipeline; db_access hands it to `ei.persistence.reload_nova_state`)."""
    return {str(key): str(value) for key, value in stored.items()}


async def save(
    redis: aioredis.Redis,
    pair: Pair,
    emotion: Mapping[str, Any],
    register: object,
    now: float | datetime,
    user_time: float | datetime | None = None,
) -> dict[str, str]:
    """HSET the 12 fields (+ `nutzer_zeit` on user turns); no TTL. Returns what was written."""
    fields = nova_state_fields(emotion, register, now, user_time)
    await redis.hset(keys.nova_state(pair), mapping=dict(fields))  # type: ignore[arg-type]
    return fields
