"""The model gate (wire name `graph_run_lock`): bounded concurrent graph runs per backend
(docs/behaviour/llm.md#model-gate).

Slots live in a Redis sorted set shared by every process (member = holder
token, score = lease expiry), so an API and several workers respect one
bound. Waiting never blocks the event loop: a failed attempt sleeps 0.05 s and
tries again until the wait limit, then raises `GateTimeout`. A holder that dies
loses its slot when the lease expires. User turns have priority: while a user
turn is waiting, background work cannot take a slot.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from enum import StrEnum

import redis.asyncio as aioredis

from novaberg.llm import gate_lua as lua
from novaberg.llm.errors import GateTimeout
from novaberg.store import keys

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
        self.waiting_key = f"{self.key}:nutzer_wartet"
        self._script = redis.register_script(lua.ACQUIRE)

    async def try_acquire(self, token: str, priority: Priority = Priority.USER) -> bool:
        background = "1" if priority is Priority.BACKGROUND else "0"
        result = await self._script(
            keys=[self.key, self.waiting_key],
            args=[token, self.slots, self.lease_ms, background],
        )
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
        while True:
            if await self.try_acquire(token, priority):
                return token
            if time.monotonic() >= deadline:
                raise GateTimeout(
                    f"model gate '{self.backend}': no slot free within {limit:.1f}s "
                    f"({self.slots} slot(s))"
                )
            if priority is Priority.USER:
                await self.redis.set(self.waiting_key, "1", px=USER_WAITING_TTL_MS)
            await asyncio.sleep(RETRY_INTERVAL)

    async def mark_user_waiting(self) -> None:
        """Hold background work back for a moment: a user turn wants a slot. For callers
        that poll with `try_acquire` (the prompt consumer) instead of `acquire`."""
        await self.redis.set(self.waiting_key, "1", px=USER_WAITING_TTL_MS)

    async def release(self, token: str) -> None:
        await self.redis.zrem(self.key, token)

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
