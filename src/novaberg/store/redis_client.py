"""Redis access: one asyncio client per process, strings decoded as UTF-8."""

from __future__ import annotations

import redis.asyncio as aioredis


def create_redis(redis_url: str) -> aioredis.Redis:
    return aioredis.from_url(redis_url, decode_responses=True, health_check_interval=30)
