"""Delivering scripts on a Redis Cluster: publish only what a replica already has.

On a single Redis a delivering script (events/delivery_lua.py `SEND`, events/queues_lua.py
`SUPERSEDE`) numbers, logs, claims and publishes in one step. In a cluster that step would
let a socket show an outcome that a master killed before replicating takes with it: the
worker's recovery would then claim the outcome again and the person would see a second one.
So here the script runs with its `hold` flag (number + log + claim, no PUBLISH) on a pinned
connection followed by `WAIT 1` on that same connection (events/cluster_scripts.py), and
only then is the numbered message it returns published.

Retries (the caller wraps every call in `until_redis_back`):
- the reply is lost after the script ran (before WAIT or PUBLISH): the retry finds the
  outcome claimed and the script returns the message the log holds for it (the held claim
  stores its seq), or finds the superseded entry gone and returns the message the first
  attempt logged (the same stage body, found among the user's latest log entries); it is
  published now — a socket that had it already drops it by its seq. The retry's WAIT also
  covers the first attempt's writes (same master, its replication offset is later);
- the master dies before a replica had the write: the promoted replica has neither claim nor
  log entry, the retry claims and delivers there, once — nothing was published before.
docs/behaviour/events.md "Outcomes in a Redis Cluster".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import redis.asyncio as aioredis
from redis.exceptions import TimeoutError as RedisTimeoutError

from novaberg.events.cluster_scripts import ClusterScripts
from novaberg.events.resp import Arg, LuaScript

HOLD_TIMEOUT: Final = 5.0
"""Seconds one attempt (script through a failover, WAIT) may take before the caller's
retry takes over."""

HOLD: Final = "1"
"""The scripts' `hold` argument: number and log, return the message, do not publish."""


class HeldDelivery:
    """Runs a delivering script held back, waits for a replica, then publishes."""

    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis
        self._scripts = ClusterScripts.wrapping(redis, HOLD_TIMEOUT, "delivery")

    async def run(
        self, script: LuaScript, keys: Sequence[str], args: Sequence[Arg], channel: str
    ) -> int:
        """Run `script` (its args already carry `HOLD`); publish the message it returns on
        `channel` once a replica has it (or none answered: see ClusterScripts); return the
        script's code — a seq or 0 for SEND, a `Supersede` value for SUPERSEDE."""
        try:
            reply = await self._scripts.run(script, keys, args)
        except TimeoutError as exc:  # an outage to `until_redis_back`, which retries
            raise RedisTimeoutError(f"no reply within {HOLD_TIMEOUT} s") from exc
        code, message = split(reply)
        if message:
            await self.redis.publish(channel, message)
        return code


def split(reply: Any) -> tuple[int, str | None]:
    """A held script's reply: `code` alone, `{code}` or `{code, message}`."""
    if not isinstance(reply, list):
        return int(reply), None
    message = reply[1] if len(reply) > 1 and reply[1] else None
    return int(reply[0]), None if message is None else str(message)
