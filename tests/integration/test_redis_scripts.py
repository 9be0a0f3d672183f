"""Lua scripts made once per client (store/scripts.py)."""

from __future__ import annotations

from typing import Any

import pytest
import redis.asyncio as aioredis

from novaberg.pair import Pair
from novaberg.store import keys, session
from novaberg.store.redis_client import create_redis
from novaberg.store.scripts import script

PAIR = Pair("meister", "nova")
ECHO = "return ARGV[1]"


def _count_registrations(redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    made: list[str] = []
    register = redis.register_script

    def counting(source: str) -> Any:
        made.append(source)
        return register(source)

    monkeypatch.setattr(redis, "register_script", counting)
    return made


async def test_one_script_object_per_client_and_source(
    redis: aioredis.Redis, endpoints: Any
) -> None:
    """The same object for the same client and source; another client gets its own."""
    assert script(redis, ECHO) is script(redis, ECHO)
    assert script(redis, ECHO) is not script(redis, "return ARGV[2]")
    other = create_redis(endpoints.redis_url)
    try:
        assert script(other, ECHO) is not script(redis, ECHO)
    finally:
        await other.aclose()


async def test_a_kept_script_still_runs_after_the_server_forgot_it(redis: aioredis.Redis) -> None:
    """A kept object reloads a script the server no longer knows (redis-py's own retry)."""
    echo = script(redis, ECHO)
    assert await echo(keys=[], args=["a"]) == "a"
    await redis.script_flush()
    assert await script(redis, ECHO)(keys=[], args=["b"]) == "b"


async def test_completing_turns_makes_no_script_per_call(
    redis: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Appending and completing turns, open and read ones: each script made once at most."""
    made = _count_registrations(redis, monkeypatch)
    for i in range(3):
        turn = {"rolle": "user", "inhalt": f"u{i}", "turn_id": f"t{i}"}
        await session.append_open_turn(redis, PAIR, turn)
    await session.append_turn(redis, PAIR, {"rolle": "user", "inhalt": "r", "turn_id": "r0"})
    await session.append_turn(redis, PAIR, {"rolle": "user", "inhalt": "s", "turn_id": "r1"})
    for turn_id in ("t0", "t1", "t2", "r0", "r1"):
        done, _ = await session.complete_turn_counted(redis, PAIR, turn_id, "user", {"kern": "k"})
        assert done is not None and done["kern"] == "k"
    assert sorted(made) == sorted(set(made)), "a script made twice for one client"
    assert len(made) <= 4  # append, set-stored, find, swap
    assert all(t["kern"] == "k" for t in await session.read_turns(redis, PAIR))
    assert await redis.llen(keys.session_turns(PAIR)) == 5
