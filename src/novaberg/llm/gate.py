"""The model gate (wire name `graph_run_lock`): bounded concurrent graph runs per backend
(docs/behaviour/llm.md#model-gate).

Slots live in a Redis sorted set shared by every process (member = holder
token, score = lease expiry), so an API and several workers respect one
bound. Waiting never blocks the event loop: a failed attempt sleeps 0.05 s and
tries again until the wait limit, then raises `GateTimeout`. A holder that dies
loses its slot when the lease expires. User turns have priority: while a user
turn is waiting, background work cannot take a slot.

A slot must not outlive its holder in a live process either: a release that a Redis
outage swallowed would keep it for the whole lease. So each gate knows the tokens its
process holds (`_held`, entered *before* the acquire script runs, left after the
release): a member of a holder's prefix that is not held here is leaked, and
`sweep` frees it (the worker's housekeeping calls it; `release_all` at its stop).
Waiting for a slot rides out an outage like a busy gate; a release is retried until
Redis is back (store/retry.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from enum import StrEnum

import redis.asyncio as aioredis

from novaberg.llm import gate_lua as lua
from novaberg.llm.errors import GateTimeout
from novaberg.store import keys
from novaberg.store.retry import OUTAGE_ERRORS, until_redis_back
from novaberg.store.scripts import script

log = logging.getLogger(__name__)

RETRY_INTERVAL = 0.05
"""Seconds between attempts: short enough that a freed slot is taken at once, long enough
not to busy the loop."""

USER_WAITING_TTL_MS = 500
"""How long one user waiter's 'I am waiting' flag lives without a refresh."""


class Priority(StrEnum):
    USER = "user"
    BACKGROUND = "background"


class ModelGate:
    def __init__(
        self,
        redis: aioredis.Redis,
        backend: str,
        slots: int,
        *,
        wait_seconds: float = 60.0,
        lease_seconds: float = 600.0,
    ) -> None:
        self.redis = redis
        self.backend = backend
        self.slots = slots
        self.wait_seconds = wait_seconds
        self.lease_ms = int(lease_seconds * 1000)
        self.key = keys.model_gate(backend)
        self.waiting_key = keys.model_gate_waiting(backend)
        self._script = script(redis, lua.ACQUIRE)
        self._held: set[str] = set()

    async def try_acquire(self, token: str, priority: Priority = Priority.USER) -> bool:
        """One attempt. An error leaves the token unheld: if the script did run (its reply
        was lost), the slot is leaked and `sweep` frees it."""
        background = "1" if priority is Priority.BACKGROUND else "0"
        self._held.add(token)
        try:
            result = await self._script(
                keys=[self.key, self.waiting_key],
                args=[token, self.slots, self.lease_ms, background],
            )
        except BaseException:
            self._held.discard(token)
            raise
        if not result:
            self._held.discard(token)
        return bool(result)

    async def acquire(
        self,
        priority: Priority = Priority.USER,
        wait_seconds: float | None = None,
        *,
        token: str | None = None,
    ) -> str:
        """Take a slot, polling without blocking the loop; return the holder token.

        `token` lets a caller name its slot (e.g. prefixed with a worker id) so a
        recovering process can free the slots of a worker that died."""
        token = token or uuid.uuid4().hex
        limit = self.wait_seconds if wait_seconds is None else wait_seconds
        deadline = time.monotonic() + limit
        unreachable: Exception | None = None
        while True:
            try:
                if await self.try_acquire(token, priority):
                    return token
                if priority is Priority.USER:
                    await self.mark_user_waiting()
            except OUTAGE_ERRORS as exc:  # Redis is restarting: wait as for a busy gate
                if unreachable is None:
                    log.warning(
                        "model gate '%s': Redis unreachable (%s); waiting", self.backend, exc
                    )
                unreachable = exc
            if time.monotonic() >= deadline:
                raise GateTimeout(
                    f"model gate '{self.backend}': no slot free within {limit:.1f}s "
                    f"({self.slots} slot(s))"
                    + (f"; Redis unreachable: {unreachable}" if unreachable else "")
                )
            await asyncio.sleep(RETRY_INTERVAL)

    async def mark_user_waiting(self) -> None:
        """Hold background work back for a moment: a user turn wants a slot. For callers
        that poll with `try_acquire` (the prompt consumer) instead of `acquire`."""
        await self.redis.set(self.waiting_key, "1", px=USER_WAITING_TTL_MS)

    async def release(self, token: str) -> None:
        """Free the slot, retried through a Redis outage; if Redis stays away longer than
        the retry's patience, the slot is no longer held here and `sweep` frees it."""
        try:
            await until_redis_back(
                lambda: self.redis.zrem(self.key, token), f"release of a '{self.backend}' slot"
            )
        finally:
            self._held.discard(token)

    async def sweep(self, holder: str) -> int:
        """Free the slots named `{holder}:…` that this process does not hold (a release
        an outage swallowed, an acquire whose reply was lost); return how many."""
        prefix = f"{holder}:"
        members = [str(m) for m in await self.redis.zrange(self.key, 0, -1)]
        leaked = [m for m in members if m.startswith(prefix) and m not in self._held]
        if leaked:
            await self.redis.zrem(self.key, *leaked)
            log.warning(
                "model gate '%s': freed %d leaked slot(s) of %s", self.backend, len(leaked), holder
            )
        return len(leaked)

    async def release_all(self, holder: str) -> int:
        """Free every slot named `{holder}:…` (a holder that stops, or one that died);
        return how many."""
        prefix = f"{holder}:"
        members = [str(m) for m in await self.redis.zrange(self.key, 0, -1)]
        mine = [m for m in members if m.startswith(prefix)]
        if mine:
            await self.redis.zrem(self.key, *mine)
        self._held.difference_update(mine)
        return len(mine)

    async def held(self) -> int:
        now_ms = int(time.time() * 1000)
        await self.redis.zremrangebyscore(self.key, "-inf", now_ms)
        return int(await self.redis.zcard(self.key))

    @asynccontextmanager
    async def slot(
        self,
        priority: Priority = Priority.USER,
        wait_seconds: float | None = None,
        *,
        holder: str | None = None,
    ) -> AsyncIterator[str]:
        """`async with gate.slot(): ...` — the slot is released however the block ends.
        `holder` (a worker id) names the slot `{holder}:…`, so the slot is freed at once
        if that worker dies, instead of blocking the gate until its lease runs out."""
        token = await self.acquire(
            priority, wait_seconds, token=f"{holder}:{uuid.uuid4().hex}" if holder else None
        )
        try:
            yield token
        finally:
            await self.release(token)
