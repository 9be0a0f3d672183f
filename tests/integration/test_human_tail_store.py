"""Path 1's late salience results reach the CharacterGraph even when scoring takes longer
than the Redis client's socket timeout (redis-py's default is 5 s)."""

from __future__ import annotations

import asyncio
from typing import Any

from novaberg.store import keys
from novaberg.store.human_tail import await_tail, publish_tail


async def test_a_tail_later_than_the_socket_timeout_still_arrives(redis: Any) -> None:
    async def publish_late() -> None:
        await asyncio.sleep(6.0)
        await publish_tail(redis, "turn-late", {"salienz_human": 0.4})

    publisher = asyncio.create_task(publish_late())
    result = await await_tail(redis, "turn-late", timeout_s=20.0)
    await publisher
    assert result == {"salienz_human": 0.4}


async def test_no_tail_within_the_timeout_is_none(redis: Any) -> None:
    assert await await_tail(redis, "turn-never", timeout_s=0.5) is None


async def test_a_published_tail_waits_with_its_ttl(redis: Any) -> None:
    await publish_tail(redis, "turn-kept", {"salienz_human": 0.7})
    key = keys.human_tail("turn-kept")
    assert await redis.lrange(key, 0, -1) == ['{"salienz_human":0.7}']
    assert 0 < await redis.ttl(key) <= keys.HUMAN_TAIL_TTL
    assert await await_tail(redis, "turn-kept", timeout_s=1.0) == {"salienz_human": 0.7}
    assert await redis.exists(key) == 0
