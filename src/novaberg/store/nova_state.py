"""Nova's persisted emotional state, the `nova_state:{u}:{c}` hash (spec emotion §9).

Only string I/O lives here; the field mapping and the pause decay are the pure functions of
`ei.persistence`. Writer: `ei_calc_persist`; reader: `db_zugriff`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import redis.asyncio as aioredis

from novaberg.ei.persistence import NovaStateReload, nova_state_fields, reload_nova_state
from novaberg.store import keys
from novaberg.store.keys import Pair


async def read_raw(redis: aioredis.Redis, pair: Pair) -> dict[str, str]:
    """The stored hash as strings ({} when Nova has never been persisted for this pair)."""
    stored = await redis.hgetall(keys.nova_state(pair))
    return {str(key): str(value) for key, value in stored.items()}


async def load(
    redis: aioredis.Redis,
    pair: Pair,
    now: float | datetime,
    *,
    is_user_turn: bool,
    nutzer_zeit: float | datetime | None = None,
    own_thought_arousal: object = None,
) -> NovaStateReload:
    """Nova's reloaded emotion and Raum, with the pause decay applied (`reload_nova_state`)."""
    stored = await read_raw(redis, pair)
    return reload_nova_state(
        stored,
        now,
        is_user_turn,
        nutzer_zeit=nutzer_zeit,
        own_thought_arousal=own_thought_arousal,
    )


async def save(
    redis: aioredis.Redis,
    pair: Pair,
    emotion: Mapping[str, Any],
    raum: object,
    now: float | datetime,
    nutzer_zeit: float | datetime | None = None,
) -> dict[str, str]:
    """HSET the 12 fields (+ `nutzer_zeit` on user turns); no TTL. Returns what was written."""
    fields = nova_state_fields(emotion, raum, now, nutzer_zeit)
    await redis.hset(keys.nova_state(pair), mapping=dict(fields))  # type: ignore[arg-type]
    return fields
