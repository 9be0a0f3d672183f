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
import contextlib
from typing import Any, Final, cast

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


def create_redis(
    redis_url: str, *, cluster: bool = False, reply_timeout: float = SOCKET_TIMEOUT_S
) -> aioredis.Redis:
    """The process's client; with `cluster`, redis-py's `RedisCluster` started from the one
    node the URL names (see `create_cluster`)."""
    if cluster:
        return create_cluster(redis_url, reply_timeout=reply_timeout)
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


CLUSTER_RETRIES: Final = 8
"""Attempts of one command in a cluster. A killed master is replaced by its replica after the
cluster's node timeout plus an election (seconds); meanwhile its slots answer CLUSTERDOWN or
refuse connections. redis-py retries those (and MOVED/ASK, refreshing its slot map) with
exponential backoff; 8 attempts of ≤ 1 s backoff span such a failover, and a caller that still
fails falls back to its own handling of a Redis outage (store/retry.py, the consumers' loops)."""


def create_cluster(redis_url: str, *, reply_timeout: float = SOCKET_TIMEOUT_S) -> aioredis.Redis:
    """redis-py's asyncio `RedisCluster` from one node's URL, on the same `ReplyTimeout`
    connections as a single Redis. Typed as `Redis`: the cluster client offers the same
    command methods, so callers keep one type; what differs in a cluster (pub/sub, SCAN,
    FLUSHDB, INFO) is handled where it is used (`is_cluster`)."""
    from redis.asyncio.cluster import RedisCluster
    from redis.asyncio.retry import Retry
    from redis.backoff import ExponentialWithJitterBackoff

    if redis_url.partition("://")[0].lower() == "unix":
        raise ValueError(
            "a Redis Cluster is reached over TCP: NOVABERG_REDIS_URL=redis://host:port"
        )
    client = RedisCluster.from_url(
        redis_url,
        decode_responses=True,
        health_check_interval=30,
        socket_timeout=None,
        socket_connect_timeout=CONNECT_TIMEOUT_S,
        retry=Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), CLUSTER_RETRIES),
    )
    # RedisCluster builds plain connections; the reply limit is a connection class of ours.
    # Nodes found later are made from `connection_kwargs`; the start-up nodes were made
    # already and get the same settings here.
    client.connection_kwargs["connection_class"] = connection_class(redis_url)
    client.connection_kwargs["reply_timeout"] = reply_timeout
    for node in client.startup_nodes:
        node.connection_class = connection_class(redis_url)  # type: ignore[assignment]  # ours subclass Connection
        node.connection_kwargs["reply_timeout"] = reply_timeout
    return cast(aioredis.Redis, client)


def is_cluster(client: object) -> bool:
    """Whether a client from `create_redis` talks to a Redis Cluster."""
    from redis.asyncio.cluster import RedisCluster

    return isinstance(client, RedisCluster)


async def subscriber(client: aioredis.Redis, attempt: int) -> tuple[aioredis.Redis, bool]:
    """The client to subscribe on, and whether the caller must close it.

    A single Redis: `client` itself. A cluster: a plain client on one of its nodes, the
    `attempt`-th in turn (masters and replicas alike). Classic PUBLISH in a cluster is
    broadcast to every node, so a subscriber on any one node hears every channel and
    pattern; a subscriber whose node died moves on to the next one at its next attempt
    (the slot map is refreshed first, so a failed-over node drops out)."""
    if not is_cluster(client):
        return client, False
    cluster: Any = client
    with contextlib.suppress(Exception):  # mid-failover: the last known map will do
        await cluster.nodes_manager.initialize()
    nodes = sorted(cluster.get_nodes(), key=lambda n: n.name)
    node = nodes[attempt % len(nodes)]
    options = cluster.connection_kwargs
    pool = aioredis.ConnectionPool(
        connection_class=node.connection_class,
        host=node.host,
        port=int(node.port),
        username=options.get("username"),
        password=options.get("password"),
        reply_timeout=options.get("reply_timeout", SOCKET_TIMEOUT_S),
        decode_responses=True,
        health_check_interval=30,
        socket_timeout=None,
        socket_connect_timeout=CONNECT_TIMEOUT_S,
        # rediss://: the node's TLS settings as the cluster client got them from the URL
        **{key: value for key, value in options.items() if key.startswith("ssl_")},
    )
    return aioredis.Redis.from_pool(pool), True
