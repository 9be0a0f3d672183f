"""Leases: only the owner releases or extends; `held` outlives the TTL while work runs."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from novaberg.store.lease import Leases


async def test_only_the_owner_releases_or_extends(redis: aioredis.Redis) -> None:
    leases = Leases(redis)
    mine = await leases.take("lease:t", 5)
    assert mine is not None
    assert await leases.take("lease:t", 5) is None  # held
    assert not await leases.release("lease:t", "someone-else")
    assert not await leases.extend("lease:t", "someone-else", 60)
    assert await redis.pttl("lease:t") <= 5000
    assert await leases.extend("lease:t", mine, 60)
    assert await redis.pttl("lease:t") > 5000
    assert await leases.release("lease:t", mine)
    assert await leases.take("lease:t", 5) is not None


async def test_a_lost_lease_is_not_released_by_its_old_owner(redis: aioredis.Redis) -> None:
    leases = Leases(redis)
    old = await leases.take("lease:t2", 0.05)
    assert old is not None
    await asyncio.sleep(0.1)  # ran out while its owner still worked
    new = await leases.take("lease:t2", 5)
    assert new is not None
    assert not await leases.release("lease:t2", old)
    assert await redis.get("lease:t2") == new


async def test_held_keeps_the_lease_while_the_work_runs(redis: aioredis.Redis) -> None:
    leases = Leases(redis)
    token = await leases.take("lease:t3", 1.0)
    assert token is not None
    async with leases.held("lease:t3", token, 1.0):
        await asyncio.sleep(2.5)  # well past its TTL
        assert await redis.get("lease:t3") == token
    await asyncio.sleep(1.2)  # no longer extended: it runs out
    assert await redis.get("lease:t3") is None
