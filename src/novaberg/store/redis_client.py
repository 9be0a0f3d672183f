"""Redis access: one asyncio client per process, strings decoded as UTF-8.

Every reply is awaited at most `SOCKET_TIMEOUT_S`, but the limit sits on the *reply*, not
on the whole command. redis-py's `socket_timeout` would also bound every send with
`asyncio.wait_for`, which on Python 3.11 runs each command's send as a task of its own: a
task and an event-loop pass more per command (a GET took 116 against 62 µs of CPU on the
embedded Valkey), ~16 commands a turn, ~0.8 ms of a turn's CPU. A
send only waits when the socket's buffer is full, and a stalled server that fills it
(hundreds of KiB of commands unread) has long failed a reply's limit by then, so the
connections here (`ReplyTimeout`) bound the replies and send without a timer, as the
intake's script client already does (`events/resp.py`).
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

import redis.asyncio as aioredis
from redis.asyncio.connection import (
    AbstractConnection,
    Connection,
    SSLConnection,
    UnixDomainSocketConnection,
)
from redis.exceptions import TimeoutError as ReplyTimeoutError

SOCKET_TIMEOUT_S: Final = 5.0
"""Longest wait for one reply. Every command we send answers in milliseconds, so a reply
this late means a dead or stalled server: fail the call and let the caller's retry or
reconnect take over instead of hanging a turn. Blocking reads stay below it by slicing
(`store/human_tail.py`); pub/sub reads block without a limit (redis-py passes them their
own read limit, which `ReplyTimeout` leaves alone)."""

CONNECT_TIMEOUT_S: Final = 2.0
"""A local server accepts at once; longer means it is down or restarting."""


class ReplyTimeout(AbstractConnection):
    """Connection mixin: a reply that takes longer than `reply_timeout` seconds fails the
    call with redis-py's `TimeoutError`, and the connection is dropped (its reply may still
    come), as with redis-py's own `socket_timeout`. A read that brings its own limit
    (pub/sub) keeps redis-py's meaning of it."""

    def __init__(self, *, reply_timeout: float = SOCKET_TIMEOUT_S, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.reply_timeout = reply_timeout

    async def read_response(
        self, disable_decoding: bool = False, timeout: float | None = None, **kwargs: Any
    ) -> Any:
        read = super().read_response
        if timeout is not None:
            return await read(disable_decoding, timeout, **kwargs)
        limit = asyncio.timeout(self.reply_timeout)
        try:
            async with limit:
                # cancelled at the limit, redis-py drops the connection as it does for
                # any interrupted read (unless the caller asked it not to)
                return await read(disable_decoding, None, **kwargs)
        except TimeoutError:
            if not limit.expired():
                raise
            raise ReplyTimeoutError(f"no reply from Redis within {self.reply_timeout} s") from None


class TcpConnection(ReplyTimeout, Connection):
    """redis:// — replies bounded by `ReplyTimeout`."""


class TlsConnection(ReplyTimeout, SSLConnection):
    """rediss:// — replies bounded by `ReplyTimeout`."""


class UnixConnection(ReplyTimeout, UnixDomainSocketConnection):
    """unix:// (the embedded server) — replies bounded by `ReplyTimeout`."""


def connection_class(redis_url: str) -> type[AbstractConnection]:
    """The `ReplyTimeout` connection for the URL's scheme."""
    scheme = redis_url.partition("://")[0].lower()
    if scheme == "unix":
        return UnixConnection
    if scheme == "rediss":
        return TlsConnection
    return TcpConnection


def create_redis(redis_url: str, *, reply_timeout: float = SOCKET_TIMEOUT_S) -> aioredis.Redis:
    pool = aioredis.ConnectionPool.from_url(
        redis_url,
        connection_class=connection_class(redis_url),
        reply_timeout=reply_timeout,
        decode_responses=True,
        health_check_interval=30,
        socket_timeout=None,
        socket_connect_timeout=CONNECT_TIMEOUT_S,
    )
    return aioredis.Redis.from_pool(pool)
