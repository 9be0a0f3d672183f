"""A minimal Redis client for the intake's one Lua script: EVALSHA over one connection.

Every other Lua script runs on redis-py through `store/scripts.py`; this client exists only
for the intake's latency goal (p99 ≤ 5 ms at 1,000 msg/s, `bench/intake.py`). The intake
runs one script per group commit (events/intake.py). Measured per call, redis-py's asyncio
client (connection pool, retry wrapper, stream reader, observability hooks) costs about
80 µs of CPU; this client — an `asyncio.Protocol` that writes a command packed by hiredis in
C and resolves one future per reply in order — about 20 µs, the socket write included. With
redis-py behind the intake instead, `bench/intake.py` measured 333 against 150 µs of server
CPU a request on one connection (2,200 against 4,800 msg/s) and an open-loop p99 of
6.0–6.5 ms against 4.9–5.2 ms at 1,000 msg/s on the same machine.

It speaks RESP2 over TCP or a unix socket, authenticates and selects the database the
URL names, and nothing else. A URL it does not serve (TLS) gets redis-py behind the same
two methods (`RedisPyScripts`). Errors are redis-py's exception types, so callers handle
both alike: a reply error is `ResponseError`, a lost or refused connection
`ConnectionError`, no reply within the client's timeout `TimeoutError`. The timeout is
one watchdog timer per connection, re-armed for the oldest unanswered command, not a
timer per call (`asyncio.timeout` costs ~8 µs a call). A command that times out or whose
caller is cancelled closes the connection (replies are matched by order, and an
abandoned one would shift them); the next call opens a fresh one.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import hashlib
import socket
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import hiredis
import redis.asyncio as aioredis
from redis.asyncio.connection import UnixDomainSocketConnection, parse_url
from redis.exceptions import ConnectionError, InvalidResponse, ResponseError

from novaberg.store.scripts import script as run_script

Arg = str | bytes | int


class LuaScript:
    """A script's source and its SHA1 (what EVALSHA names it by)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode("utf-8"), usedforsecurity=False).hexdigest()


class ScriptClient(Protocol):
    """What the intake needs from Redis: run a script, close."""

    async def run(self, script: LuaScript, keys: Sequence[str], args: Sequence[Arg]) -> Any: ...

    async def aclose(self) -> None: ...


class _Replies(asyncio.Protocol):
    """One connection: commands go out as written, replies resolve futures in order."""

    def __init__(self, timeout: float) -> None:
        self._timeout = timeout
        self._reader = hiredis.Reader(protocolError=InvalidResponse, replyError=ResponseError)
        self._waiting: collections.deque[tuple[asyncio.Future[Any], float]] = collections.deque()
        self._transport: asyncio.Transport | None = None
        self._watchdog: asyncio.TimerHandle | None = None
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]  # uvloop's is no subclass
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def send(self, packed: bytes) -> asyncio.Future[Any]:
        if self.lost or self._transport is None:
            raise ConnectionError("the intake's Redis connection is closed")
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        now = loop.time()
        self._waiting.append((future, now))
        if self._watchdog is None:
            self._watchdog = loop.call_at(now + self._timeout, self._check, loop)
        self._transport.write(packed)
        return future

    def _check(self, loop: asyncio.AbstractEventLoop) -> None:
        """The watchdog: fail everything if the oldest command waited `timeout`."""
        self._watchdog = None
        if not self._waiting or self.lost:
            return
        due = self._waiting[0][1] + self._timeout
        if loop.time() >= due:
            self.close(TimeoutError(f"Redis did not answer the intake within {self._timeout} s"))
        else:
            self._watchdog = loop.call_at(due, self._check, loop)

    def data_received(self, data: bytes) -> None:
        self._reader.feed(data)
        while True:
            try:
                reply = self._reader.gets()
            except InvalidResponse as exc:
                self.close(exc)
                return
            if reply is False:
                return
            if not self._waiting:
                self.close(InvalidResponse("a reply nobody asked for"))
                return
            future = self._waiting.popleft()[0]
            if not future.done():
                future.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.close(ConnectionError(f"the intake's Redis connection was lost: {exc or 'EOF'}"))

    def close(self, reason: Exception | None = None) -> None:
        """Drop the connection; every pending call fails with `reason` (or ConnectionError)."""
        self.lost = True
        if self._transport is not None:
            self._transport.close()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        self._fail(reason or ConnectionError("the intake's Redis connection was closed"))

    def _fail(self, exc: Exception) -> None:
        while self._waiting:
            future = self._waiting.popleft()[0]
            if not future.done():
                future.set_exception(exc)


class RespScripts:
    """Runs Lua scripts over one lazily opened connection (see the module docstring)."""

    def __init__(self, url: str, timeout: float) -> None:
        options = parse_url(url)
        self._timeout = timeout
        self._path: str | None = options.get("path")
        self._host: str = options.get("host", "localhost")
        self._port: int = int(options.get("port", 6379))
        self._handshake = _handshake(options)
        self._conn: _Replies | None = None
        self._lock = asyncio.Lock()

    async def run(self, script: LuaScript, keys: Sequence[str], args: Sequence[Arg]) -> Any:
        """EVALSHA; on NOSCRIPT (a restarted or flushed server) EVAL, which also loads it."""
        reply = await self._call(("EVALSHA", script.sha, len(keys), *keys, *args))
        if isinstance(reply, ResponseError) and str(reply).startswith("NOSCRIPT"):
            reply = await self._call(("EVAL", script.source, len(keys), *keys, *args))
        if isinstance(reply, ResponseError):
            raise reply
        return reply

    async def aclose(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    async def _call(self, command: tuple[Arg, ...]) -> Any:
        conn = self._conn
        if conn is None or conn.lost:
            conn = await self._connect()
        future = conn.send(_pack(command))
        try:
            return await future
        except asyncio.CancelledError:
            conn.close()
            raise

    async def _connect(self) -> _Replies:
        async with self._lock, asyncio.timeout(self._timeout):
            if self._conn is not None and not self._conn.lost:
                return self._conn
            loop = asyncio.get_running_loop()
            factory = functools.partial(_Replies, self._timeout)
            try:
                if self._path is not None:
                    _, conn = await loop.create_unix_connection(factory, self._path)
                else:
                    _, conn = await loop.create_connection(factory, self._host, self._port)
            except OSError as exc:
                raise ConnectionError(f"cannot reach Redis for the intake: {exc}") from exc
            try:
                replies = [await conn.send(_pack(c)) for c in self._handshake]
            except BaseException:
                conn.close()
                raise
            for reply in replies:
                if isinstance(reply, ResponseError):
                    conn.close()
                    raise ConnectionError(f"Redis refused the intake's connection: {reply}")
            self._conn = conn
            return conn


def _pack(command: tuple[Arg, ...]) -> bytes:
    """RESP bytes of one command, packed in C."""
    return hiredis.pack_command(command)  # type: ignore[arg-type]  # the stub says 1-tuple


def _handshake(options: Mapping[str, Any]) -> list[tuple[Arg, ...]]:
    """AUTH and SELECT as the URL asks (what redis-py sends on connect, minus metadata)."""
    commands: list[tuple[Arg, ...]] = []
    password, username = options.get("password"), options.get("username")
    if password is not None:
        commands.append(("AUTH", username, password) if username else ("AUTH", password))
    if options.get("db"):
        commands.append(("SELECT", int(options["db"])))
    return commands


class RedisPyScripts:
    """The same two methods on redis-py, for URLs `RespScripts` does not serve (TLS)."""

    def __init__(self, url: str, timeout: float) -> None:
        # No per-command socket timeout: with one, redis-py sends every command under
        # `asyncio.wait_for` (a task and a loop pass more); `run` bounds the whole call.
        self._timeout = timeout
        self._redis = aioredis.from_url(
            url,
            socket_timeout=None,
            socket_connect_timeout=timeout,
            health_check_interval=30,
        )

    async def run(self, script: LuaScript, keys: Sequence[str], args: Sequence[Arg]) -> Any:
        async with asyncio.timeout(self._timeout):
            return await run_script(self._redis, script.source)(keys=list(keys), args=list(args))

    async def aclose(self) -> None:
        await self._redis.aclose()


def script_client(url: str, timeout: float, *, cluster: bool = False) -> ScriptClient:
    """`RespScripts` for plain TCP and unix-socket URLs, redis-py for anything else, and on a
    Redis Cluster redis-py's cluster client (events/cluster_scripts.py); each fails a call
    with TimeoutError after `timeout` seconds without a reply."""
    if cluster:
        from novaberg.events.cluster_scripts import ClusterScripts

        return ClusterScripts(url, timeout)
    options = parse_url(url)
    plain = options.get("connection_class") in (None, UnixDomainSocketConnection)
    return RespScripts(url, timeout) if plain else RedisPyScripts(url, timeout)
