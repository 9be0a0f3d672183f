"""`AppContext`: the per-process resources every router reaches through `app.state`.

Built once in the app's lifespan (or handed in by a test) so request handlers
never open connections of their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Annotated
from urllib.parse import urlsplit

import redis.asyncio as aioredis
from fastapi import Depends, Request
from psycopg_pool import AsyncConnectionPool

from novaberg.config import LLMBackend, Settings
from novaberg.llm.connection import LiveConnection
from novaberg.llm.factory import build_model_layer
from novaberg.llm.gate import ModelGate
from novaberg.llm.layer import ModelLayer
from novaberg.runtime.services import Endpoints
from novaberg.store.key_layout import ensure_layout
from novaberg.store.postgres import create_pool
from novaberg.store.redis_client import create_redis
from novaberg.store.retry import until_redis_back

log = logging.getLogger(__name__)


def gate_backend(settings: Settings) -> str:
    """Name of the model-gate key: processes using the same model server share slots."""
    backend = settings.llm_backend
    if backend is LLMBackend.OPENAI and settings.llm_url:
        return f"openai:{urlsplit(settings.llm_url).netloc}"
    return backend.value


@dataclass
class AppContext:
    settings: Settings
    endpoints: Endpoints
    redis: aioredis.Redis
    pool: AsyncConnectionPool
    model: ModelLayer
    gate: ModelGate

    def __post_init__(self) -> None:
        """The model layer follows the page's model connection (llm/connection.py)."""
        if self.model.source is None:
            self.model.source = LiveConnection(self.settings, self.redis, self.pool)

    @classmethod
    async def open(
        cls, settings: Settings, endpoints: Endpoints, *, model: ModelLayer | None = None
    ) -> AppContext:
        """Connect to Redis and PostgreSQL and build the model layer the settings name."""
        model = model or build_model_layer(settings)
        redis = create_redis(endpoints.redis_url, cluster=endpoints.redis_cluster)
        try:
            pool = await create_pool(
                endpoints.database_url,
                async_commit=settings.postgres_async_commit,
                wait=max(30.0, settings.startup_wait),
            )
        except BaseException:
            await redis.aclose()
            raise
        try:  # an installation's old keys move to the tagged layout once (either process)
            await until_redis_back(
                lambda: ensure_layout(redis),
                "the key layout",
                patience=max(30.0, settings.startup_wait),
            )
        except BaseException:
            await redis.aclose()
            await pool.close()
            raise
        gate = ModelGate(
            redis,
            gate_backend(settings),
            settings.gate_slots,
            wait_seconds=settings.gate_wait,
            lease_seconds=settings.gate_lease,
        )
        return cls(settings, endpoints, redis, pool, model, gate)

    async def warm_up(self) -> None:
        """Load in-process models now rather than in the first user's turn."""
        for part in (self.model.text, self.model.embedder):
            warm = getattr(part, "warm_up", None)
            if warm is None:
                continue
            try:
                await warm()
            except Exception as exc:  # reported by /health and `novaberg doctor`
                log.warning("warm-up of %s failed: %s", getattr(part, "name", part), exc)

    async def aclose(self) -> None:
        if isinstance(self.model.source, LiveConnection):
            await self.model.source.aclose()
        for part in (self.model.text, self.model.embedder):
            close = getattr(part, "aclose", None)
            if close is not None:
                await close()
        await self.pool.close()
        await self.redis.aclose()


def get_context(request: Request) -> AppContext:
    return request.app.state.context  # type: ignore[no-any-return]


Ctx = Annotated[AppContext, Depends(get_context)]
"""Route parameter type: `async def handler(ctx: Ctx): ...` gets the process's context."""


async def cancel_quietly(task: asyncio.Task[None] | None) -> None:
    if task is None or task.done():
        return
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
