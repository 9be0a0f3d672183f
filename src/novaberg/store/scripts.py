"""Lua scripts as redis-py `Script` objects, made once per client and source.

`redis.register_script` hashes the source and builds a new object on every call; on the
turn's path that is per-call work for nothing. `script` keeps one object per (client,
source) — the object still reloads a script the server lost (`NoScriptError`) itself.
"""

from __future__ import annotations

from weakref import WeakKeyDictionary

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

_SCRIPTS: WeakKeyDictionary[aioredis.Redis, dict[str, AsyncScript]] = WeakKeyDictionary()
"""client → {source → its Script}; an entry goes with its client."""


def script(redis: aioredis.Redis, source: str) -> AsyncScript:
    """The client's `Script` for `source` (`redis.register_script(source)` the first time)."""
    per_client = _SCRIPTS.get(redis)
    if per_client is None:
        per_client = _SCRIPTS[redis] = {}
    found = per_client.get(source)
    if found is None:
        found = per_client[source] = redis.register_script(source)
    return found
