"""The one way to run a Lua script on a redis-py client: `script(redis, source)(keys, args)`.

The sources live in a `*_lua.py` module next to the store that runs them. `script` keeps one
redis-py `Script` per (client, source), so a call neither hashes the source nor builds an
object; the kept object reloads a script the server lost (`NoScriptError`) itself. The
intake alone runs its script over its own protocol client (events/resp.py), for its latency
goal.
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
