"""The turn's stance hash `haltung:{u}:{c}` (docs/behaviour/nodes.md#stance): written whole
by the stance node every CharacterGraph run, read by the impulse delivery's gates.
"""

from __future__ import annotations

from typing import Final

import redis.asyncio as aioredis

from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.scripts import script

_REPLACE_HASH_LUA: Final = """
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""
"""KEYS[1]=hash; ARGV=field, value, field, value, … → the hash holds exactly these."""


async def replace(redis: aioredis.Redis, pair: Pair, fields: dict[str, str]) -> None:
    """The hash holds exactly `fields` afterwards."""
    # Atomic on purpose: the impulse snapshot reads the hash from another process, and an
    # empty hash between DEL and HSET reads as "haltung fehlt". One script keeps that (as
    # MULTI/EXEC did) in one command, without a reply to parse per queued command.
    flat = [part for field in fields.items() for part in field]
    await script(redis, _REPLACE_HASH_LUA)(keys=[keys.stance(pair)], args=flat)
