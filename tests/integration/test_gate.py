"""The model gate against the real embedded Redis: two OS processes never share one
slot, a slot is released on exception and after its lease, and background work
yields to a waiting user turn."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from novaberg.llm.errors import GateTimeout
from novaberg.llm.gate import ModelGate, Priority
from novaberg.runtime.services import Endpoints

SRC = Path(__file__).resolve().parents[2] / "src"

# One contender: wait until both are ready, then take the 1-slot gate 3 times,
# logging enter/exit into a Redis list (Redis orders the pushes of both processes).
CONTENDER = """
import asyncio, os, sys
from novaberg.llm.gate import ModelGate
from novaberg.store.redis_client import create_redis

async def main(url, backend, log_key, ready_key):
    client = create_redis(url)
    gate = ModelGate(client, backend, 1, wait_seconds=30, lease_seconds=30)
    await client.incr(ready_key)
    while int(await client.get(ready_key)) < 2:
        await asyncio.sleep(0.01)
    me = str(os.getpid())
    for _ in range(3):
        async with gate.slot():
            await client.rpush(log_key, "enter:" + me)
            await asyncio.sleep(0.15)
            await client.rpush(log_key, "exit:" + me)
    await client.aclose()

asyncio.run(main(*sys.argv[1:]))
"""


def _gate(client: aioredis.Redis, slots: int = 1, lease: float = 30.0) -> ModelGate:
    return ModelGate(
        client, f"test-{uuid.uuid4().hex[:8]}", slots, wait_seconds=10, lease_seconds=lease
    )


async def _run_contenders(endpoints: Endpoints, backend: str, log_key: str) -> None:
    ready_key = f"{log_key}:ready"
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            CONTENDER,
            endpoints.redis_url,
            backend,
            log_key,
            ready_key,
            env={**os.environ, "PYTHONPATH": str(SRC)},
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    for proc in procs:
        _, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()


async def test_two_processes_never_hold_one_slot_together(
    endpoints: Endpoints, redis: aioredis.Redis
) -> None:
    log_key = f"gate-log-{uuid.uuid4().hex[:8]}"
    await _run_contenders(endpoints, f"test-{uuid.uuid4().hex[:8]}", log_key)
    events = await redis.lrange(log_key, 0, -1)
    assert len(events) == 12
    assert len({e.split(":")[1] for e in events}) == 2  # both processes ran
    # Strictly enter/exit of the same holder, pair after pair: no overlap.
    for enter, leave in zip(events[::2], events[1::2], strict=True):
        assert enter.startswith("enter:")
        assert leave == "exit:" + enter.split(":")[1]


async def test_slot_is_released_when_the_block_raises(redis: aioredis.Redis) -> None:
    gate = _gate(redis)
    with pytest.raises(RuntimeError, match="boom"):
        async with gate.slot():
            assert await gate.held() == 1
            raise RuntimeError("boom")
    assert await gate.held() == 0
    async with gate.slot(wait_seconds=0.2):
        assert await gate.held() == 1


async def test_a_slot_never_released_frees_itself_after_the_lease(redis: aioredis.Redis) -> None:
    gate = _gate(redis, lease=1.0)
    await gate.acquire()  # a holder that dies without releasing
    with pytest.raises(GateTimeout, match="no slot free"):
        await gate.acquire(wait_seconds=0.1)
    token = await gate.acquire(wait_seconds=10)  # succeeds once the lease ran out
    assert await gate.held() == 1
    await gate.release(token)


async def test_background_yields_to_a_waiting_user(redis: aioredis.Redis) -> None:
    gate = _gate(redis)
    holder = await gate.acquire()
    order: list[str] = []

    async def run(name: str, priority: Priority) -> None:
        async with gate.slot(priority, wait_seconds=10):
            order.append(name)
            await asyncio.sleep(0.1)

    user = asyncio.create_task(run("user", Priority.USER))
    while not await redis.exists(gate.waiting_key):  # the user is now waiting
        await asyncio.sleep(0.01)
    background = asyncio.create_task(run("background", Priority.BACKGROUND))
    await asyncio.sleep(0.2)  # background has polled (and been refused) a few times
    assert order == []
    await gate.release(holder)
    await asyncio.gather(user, background)
    assert order == ["user", "background"]
