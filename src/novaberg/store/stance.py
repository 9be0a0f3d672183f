"""The turn's stance hash `haltung:{u}:{c}` (docs/behaviour/nodes.md#stance): written whole
by the stance node every CharacterGraph run, read by the impulse delivery's gates.
"""

from __future__ import annotations

from collections.abc import Mapping

import redis.asyncio as aioredis

from novaberg.pair import Pair
from novaberg.store import keys


async def replace(redis: aioredis.Redis, pair: Pair, fields: Mapping[str, str]) -> None:
    """The hash holds exactly `fields` afterwards: DEL and HSET in one MULTI/EXEC, because
    the impulse snapshot reads the hash from another process, and an empty hash between the
    two would read as "haltung fehlt"."""
    async with redis.pipeline(transaction=True) as pipe:
        pipe.delete(keys.stance(pair))
        pipe.hset(keys.stance(pair), mapping=dict(fields))  # type: ignore[arg-type]
        await pipe.execute()
