"""Redis access: one asyncio client per process, strings decoded as UTF-8."""

from __future__ import annotations

from typing import Final

import redis.asyncio as aioredis

SOCKET_TIMEOUT_S: Final = 5.0
"""Longest wait for one reply. Every command we send answers in milliseconds, so a reply
this late means a dead or stalled server: fail the call and let the caller's retry or
reconnect take over instead of hanging a turn. Blocking reads stay below it by slicing
(`store/human_tail.py`); pub/sub reads block without a limit (redis-py exempts them)."""

CONNECT_TIMEOUT_S: Final = 2.0
"""A local server accepts at once; longer means it is down or restarting."""


def create_redis(redis_url: str) -> aioredis.Redis:
    return aioredis.from_url(
        redis_url,
        decode_responses=True,
        health_check_interval=30,
        socket_timeout=SOCKET_TIMEOUT_S,
        socket_connect_timeout=CONNECT_TIMEOUT_S,
    )
