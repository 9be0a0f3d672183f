"""The Redis client bounds every reply, not every send (store/redis_client.py), on the
embedded server: a stalled server fails the call in time and its late reply never reaches
the next command; commands run without a task each; pub/sub keeps its own read limits."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import TimeoutError as RedisTimeoutError

from novaberg.store.redis_client import (
    TcpConnection,
    TlsConnection,
    UnixConnection,
    connection_class,
    create_redis,
)

PAUSE_MS = 900
REPLY_TIMEOUT_S = 0.25


@pytest.fixture
async def short(endpoints: Any) -> AsyncIterator[aioredis.Redis]:
    client = create_redis(endpoints.redis_url, reply_timeout=REPLY_TIMEOUT_S)
    yield client
    await client.aclose()


async def test_a_stalled_server_fails_the_call_at_the_reply_timeout(
    short: aioredis.Redis, redis: aioredis.Redis
) -> None:
    await short.set("first", "one")
    await short.set("second", "two")
    await redis.execute_command("CLIENT", "PAUSE", PAUSE_MS, "ALL")
    started = time.monotonic()
    with pytest.raises(RedisTimeoutError):
        await short.get("first")
    waited = time.monotonic() - started
    assert REPLY_TIMEOUT_S <= waited < PAUSE_MS / 1000
    await asyncio.sleep(PAUSE_MS / 1000)  # the server answers "one" now, to nobody
    # the timed-out connection was dropped: the next call gets its own reply
    assert await short.get("second") == "two"
    assert await short.get("first") == "one"


async def test_commands_run_without_a_task_each(short: aioredis.Redis) -> None:
    await short.set("k", "v")
    loop = asyncio.get_running_loop()
    created: list[Any] = []
    previous = loop.get_task_factory()

    def counting(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        created.append(coro)
        return asyncio.Task(coro, loop=loop, **kwargs)

    loop.set_task_factory(counting)
    try:
        for _ in range(20):
            assert await short.get("k") == "v"
    finally:
        loop.set_task_factory(previous)
    assert created == []


async def test_a_pubsub_read_keeps_its_own_limit(short: aioredis.Redis) -> None:
    """get_message(timeout) waits its own time and answers None, not a reply timeout."""
    pubsub = short.pubsub(ignore_subscribe_messages=True)
    try:
        await pubsub.subscribe("quiet")
        assert await pubsub.get_message(timeout=1.0) is None  # the (ignored) confirmation
        started = time.monotonic()
        assert await pubsub.get_message(timeout=2 * REPLY_TIMEOUT_S) is None
        assert time.monotonic() - started >= 2 * REPLY_TIMEOUT_S * 0.9
        await short.publish("quiet", "hello")
        message = await pubsub.get_message(timeout=2.0)
        assert message is not None and message["data"] == "hello"
    finally:
        await pubsub.aclose()


def test_the_connection_class_follows_the_url_scheme() -> None:
    assert connection_class("unix:///tmp/redis.sock") is UnixConnection
    assert connection_class("redis://localhost:6379/0") is TcpConnection
    assert connection_class("REDISS://cache.example:6380") is TlsConnection
