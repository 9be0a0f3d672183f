"""The intake's minimal Redis client (events/resp.py) against the real embedded Valkey: it
runs scripts like redis-py does, reloads a flushed script, keeps replies in order under
pipelining, fails a call cleanly (lost, refused, silent server) and recovers after."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError, RedisError, ResponseError

from novaberg.events.resp import (
    LuaScript,
    RedisPyScripts,
    RespScripts,
    _handshake,
    script_client,
)
from novaberg.runtime.services import Endpoints

PUSH = LuaScript("redis.call('RPUSH', KEYS[1], unpack(ARGV)); return redis.call('LLEN', KEYS[1])")
ECHO = LuaScript("return ARGV[1]")
BROKEN = LuaScript("return redis.call('NO_SUCH_COMMAND')")


@pytest.fixture
async def client(endpoints: Endpoints, redis: aioredis.Redis) -> AsyncIterator[RespScripts]:
    scripts = RespScripts(endpoints.redis_url, timeout=5.0)
    yield scripts
    await scripts.aclose()


async def test_a_script_runs_with_its_keys_and_args(
    client: RespScripts, redis: aioredis.Redis
) -> None:
    entry = '{"prompt":"Grüße 👋"}'.encode()
    assert await client.run(PUSH, ["liste"], [entry, "zwei", 3]) == 3
    assert await redis.lrange("liste", 0, -1) == [entry.decode(), "zwei", "3"]


async def test_a_flushed_script_is_loaded_again(client: RespScripts, redis: aioredis.Redis) -> None:
    assert await client.run(PUSH, ["liste"], ["a"]) == 1
    await redis.script_flush()
    assert await client.run(PUSH, ["liste"], ["b"]) == 2
    assert await redis.script_exists(PUSH.sha) == [True]


async def test_a_script_error_is_a_response_error_and_the_connection_stays(
    client: RespScripts,
) -> None:
    with pytest.raises(ResponseError):
        await client.run(BROKEN, [], [])
    assert await client.run(ECHO, [], ["weiter"]) == b"weiter"


async def test_pipelined_calls_get_their_own_replies(client: RespScripts) -> None:
    replies = await asyncio.gather(*(client.run(ECHO, [], [str(n)]) for n in range(200)))
    assert replies == [str(n).encode() for n in range(200)]


async def test_a_killed_connection_is_reopened(client: RespScripts, redis: aioredis.Redis) -> None:
    assert await client.run(ECHO, [], ["eins"]) == b"eins"
    await redis.execute_command("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
    for _ in range(100):  # the EOF arrives on the next loop passes
        await asyncio.sleep(0.01)
        if client._conn is None or client._conn.lost:
            break
    assert await client.run(ECHO, [], ["zwei"]) == b"zwei"


async def test_the_url_selects_the_database(endpoints: Endpoints) -> None:
    url = f"{endpoints.redis_url}?db=3"
    scripts = RespScripts(url, timeout=5.0)
    other = aioredis.from_url(url, decode_responses=True)
    try:
        await other.flushdb()
        await scripts.run(PUSH, ["in_db_3"], ["x"])
        assert await other.lrange("in_db_3", 0, -1) == ["x"]
    finally:
        await other.flushdb()
        await other.aclose()
        await scripts.aclose()


async def test_a_refused_password_is_a_connection_error(endpoints: Endpoints) -> None:
    path = endpoints.redis_url.removeprefix("unix://")
    scripts = RespScripts(f"unix://:geheim@{path}", timeout=5.0)
    with pytest.raises(ConnectionError, match="refused"):
        await scripts.run(ECHO, [], ["x"])
    await scripts.aclose()


def test_the_handshake_follows_the_url() -> None:
    assert _handshake({}) == []
    assert _handshake({"password": "p", "db": 2}) == [("AUTH", "p"), ("SELECT", 2)]
    assert _handshake({"username": "u", "password": "p", "db": 0}) == [("AUTH", "u", "p")]


async def test_nothing_listening_is_a_connection_error() -> None:
    scripts = RespScripts("redis://127.0.0.1:1", timeout=5.0)
    with pytest.raises(ConnectionError):
        await scripts.run(ECHO, [], ["x"])


async def _silent_after(answers: int) -> tuple[asyncio.Server, int]:
    """A TCP server that answers `answers` commands with `:1` and then says nothing."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(answers):
            if not await reader.read(65536):
                return
            writer.write(b":1\r\n")
        await reader.read()  # until the client hangs up

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


async def test_a_silent_server_times_out_and_the_next_call_reconnects() -> None:
    server, port = await _silent_after(answers=1)
    scripts = RespScripts(f"redis://127.0.0.1:{port}", timeout=0.2)
    try:
        assert await scripts.run(ECHO, [], ["x"]) == 1  # the watchdog is re-armed after this
        with pytest.raises(TimeoutError):
            await scripts.run(ECHO, [], ["x"])
        assert await scripts.run(ECHO, [], ["x"]) == 1  # a fresh connection answers again
    finally:
        await scripts.aclose()
        server.close()


async def test_a_cancelled_call_drops_the_connection(client: RespScripts) -> None:
    """Replies are matched by order: a call abandoned in flight must not shift them."""
    assert await client.run(ECHO, [], ["vorher"]) == b"vorher"
    first = client._conn
    task = asyncio.create_task(client.run(ECHO, [], ["abgebrochen"]))
    await asyncio.sleep(0)  # sent, not yet answered
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert first is not None and first.lost
    assert await client.run(ECHO, [], ["nachher"]) == b"nachher"


async def test_tls_urls_go_through_redis_py(endpoints: Endpoints, redis: aioredis.Redis) -> None:
    assert isinstance(script_client("rediss://example.org:6380/0", 5.0), RedisPyScripts)
    assert isinstance(script_client(endpoints.redis_url, 5.0), RespScripts)
    fallback = RedisPyScripts(endpoints.redis_url, timeout=5.0)
    try:
        assert await fallback.run(PUSH, ["liste"], ["a", 2]) == 2
        await redis.script_flush()
        assert await fallback.run(PUSH, ["liste"], ["b"]) == 3
    finally:
        await fallback.aclose()
    assert issubclass(ConnectionError, RedisError), "callers answer 503 on any RedisError"
