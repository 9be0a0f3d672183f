"""Leases in Redis: a key that holds its owner's token and lives for a TTL.

Only the owner may extend or release a lease, so a holder whose lease ran out can never
delete or prolong its successor's. `held` keeps a lease alive while a block of work runs,
however long that takes; a holder that dies stops extending and the lease runs out.
A release is retried through a Redis outage (store/retry.py; it is owner-checked, so a
second attempt does nothing), rather than leaving the lease to run out its TTL.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator

import redis.asyncio as aioredis

from novaberg.store import lease_lua as lua
from novaberg.store.retry import until_redis_back
from novaberg.store.scripts import script

log = logging.getLogger(__name__)


class Leases:
    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis
        self._release = script(redis, lua.RELEASE)
        self._extend = script(redis, lua.EXTEND)

    async def take(self, key: str, ttl_seconds: float) -> str | None:
        """The new lease's token, or None while someone else holds it."""
        token = uuid.uuid4().hex
        taken = await self.redis.set(key, token, nx=True, px=int(ttl_seconds * 1000))
        return token if taken else None

    async def release(self, key: str, token: str) -> bool:
        released = await until_redis_back(
            lambda: self._release(keys=[key], args=[token]), f"release of lease {key}"
        )
        return bool(released)

    async def extend(self, key: str, token: str, ttl_seconds: float) -> bool:
        return bool(await self._extend(keys=[key], args=[token, int(ttl_seconds * 1000)]))

    @contextlib.asynccontextmanager
    async def held(self, key: str, token: str, ttl_seconds: float) -> AsyncIterator[None]:
        """Extend the lease every third of its TTL while the block runs."""
        keeper = asyncio.create_task(self._keep(key, token, ttl_seconds), name=f"lease:{key}")
        try:
            yield
        finally:
            keeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await keeper

    async def _keep(self, key: str, token: str, ttl_seconds: float) -> None:
        while True:
            await asyncio.sleep(ttl_seconds / 3)
            try:
                if not await self.extend(key, token, ttl_seconds):
                    log.warning("lease %s was lost while its work ran", key)
                    return
            except aioredis.RedisError as exc:  # the next round tries again
                log.warning("lease %s not extended: %s", key, exc)
