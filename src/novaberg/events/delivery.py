"""Delivery of server messages to every connection of a user, across processes.

`Delivery.send` (any process: API or worker) numbers a message with the user's
next sequence number, keeps it in a bounded per-user log for catch-up, and
publishes it on the user's Redis channel — one atomic script, so a numbered
message is always both logged and published. Optionally the same script claims
a turn's outcome marker first, so a duplicate outcome is never sent.

`DeliveryHub` (API processes) holds the WebSocket connections. One pattern
subscription per process receives every user's messages and forwards them to
that user's local connections; a connection that reconnects with `since=SEQ`
first gets what it missed from the log, then the live stream, without gaps or
duplicates (messages are filtered by `seq`).

Catch-up window: the last `LOG_KEEP` (500) messages per user, none older than
`LOG_MAX_AGE` (24 h). A client asking for older messages gets what is left and
can tell from the first `seq` that something was lost.

The same subscription hears revoked tokens (`token_widerrufen`): the hub closes every
connection opened with one of them (4401) and tells its `RevocationListener`, in the order
Redis published — no message published after a revocation reaches that token's sockets
(docs/behaviour/events.md#revoked-tokens).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import time
from collections import defaultdict, deque
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any, Protocol

import redis.asyncio as aioredis

from novaberg.events import delivery_lua as lua
from novaberg.events.held_delivery import HOLD, HeldDelivery
from novaberg.events.model import WireMessage
from novaberg.events.resp import LuaScript
from novaberg.store import keys, token_revocation
from novaberg.store.redis_client import is_cluster, subscriber
from novaberg.store.scripts import script
from novaberg.wire import MSG_HELLO, MSG_UTTERANCE

log = logging.getLogger(__name__)

LOG_KEEP = 500
"""Messages per user kept for reconnect catch-up (docs/behaviour/events.md#delivery)."""

LOG_MAX_AGE = 86_400
"""Seconds a logged message stays eligible for catch-up."""

OUTCOME_TTL = 86_400
"""How long a turn's outcome marker suppresses duplicates (docs/behaviour/events.md#outcomes)."""

CONNECTION_BUFFER_BYTES = 4 * 1024 * 1024
"""Unsent bytes a slow connection may fall behind before it is closed with 4408 (it then
reconnects with `since` and catches up). Bytes, not messages: one block's `user_utterance`
can be megabytes. Set by NOVABERG_SOCKET_BUFFER_BYTES."""

MAX_CONNECTIONS_PER_USER = 20
"""WebSockets one user may hold in one API process (NOVABERG_MAX_SOCKETS_PER_USER)."""

RECONNECT_DELAY = 0.5
"""Pause before the hub re-subscribes after losing its Redis connection."""

CLOSE_BAD_REQUEST = 4400
CLOSE_UNAUTHORIZED = 4401
CLOSE_FOREIGN_ORIGIN = 4403
CLOSE_TOO_SLOW = 4408
CLOSE_TOO_MANY = 4429
"""WebSocket close codes: a bad query parameter, a missing, unknown or revoked token (the
page asks for one), a page of another origin (neither this server's nor one in
NOVABERG_ALLOWED_ORIGINS), a connection too slow to keep up (it reconnects and catches
up), one connection more than a user may hold (close another one first)."""

TOO_SLOW_REASON = "zu langsam, bitte neu verbinden"
TOO_MANY_REASON = "zu viele Verbindungen für diesen Nutzer"
REVOKED_REASON = "token widerrufen"
FOREIGN_ORIGIN_REASON = "Ursprung nicht erlaubt"


class TooManyConnections(Exception):
    """The user already holds as many connections as allowed in this process."""


class RevocationListener(Protocol):
    """What an API process does about revoked tokens besides closing their sockets (the
    hub does that): forget them in its token cache; and after the hub lost its
    subscription and listens again, distrust everything (revocations may have been missed)."""

    def revoked(self, digests: list[str]) -> None: ...

    def resubscribed(self) -> None: ...


def delivery_keys(user_id: str) -> list[str]:
    """The keys `delivery_lua.DELIVER_LUA` touches for one user: seq, log, channel."""
    return [keys.delivery_seq(user_id), keys.delivery_log(user_id), keys.delivery_channel(user_id)]


def wire_body(message: WireMessage | dict[str, Any]) -> str:
    """The JSON text `delivery_lua.DELIVER_LUA` numbers: the message without `seq`, stamped now."""
    body = message.wire_dict() if isinstance(message, WireMessage) else dict(message)
    body.pop("seq", None)
    body.setdefault("gesendet_am", time.time())
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


async def forward_outbox(redis: aioredis.Redis, user_id: str) -> int:
    """Move the items of the user's channel outbox (the user's slot) on to the channel
    outbox (the `{kanal}` slot): two slots, so no script can do it in one step. Copy, then
    trim what was copied: a crash in between leaves an item in both, and the channel
    sender sends a message once per link anyway (`kanal_gesendet`)."""
    own = keys.channel_user_outbox(user_id)
    items = [str(raw) for raw in await redis.lrange(own, 0, -1)]
    if not items:
        return 0
    await redis.rpush(keys.channel_outbox(), *items)
    await redis.ltrim(own, len(items), -1)
    return len(items)


HELD_SEND = LuaScript(lua.SEND)
"""`SEND` as the cluster path runs it (events/held_delivery.py)."""


class Delivery:
    """Publishes numbered messages to a user's connections (any process may send). On a
    Redis Cluster a message is published only once a replica has it (events/held_delivery.py);
    on a single Redis the script publishes it itself."""

    def __init__(self, redis: aioredis.Redis) -> None:
        self.redis = redis
        self._script = script(redis, lua.SEND)
        self._held = HeldDelivery(redis) if is_cluster(redis) else None

    async def send(
        self,
        user_id: str,
        message: WireMessage | dict[str, Any],
        *,
        outcome_key: str | None = None,
    ) -> int:
        """Deliver `message`; return its seq, or 0 if `outcome_key` was already claimed.
        An outcome (`outcome_key` given) also enters the channel outbox when the user has a
        linked channel (docs/behaviour/reach.md)."""
        outbox = ""
        if outcome_key and await self.redis.sismember(keys.channel_users(), user_id):
            # Before the script: the sweep of the outbox users then finds whatever the
            # script leaves in the user's outbox, should this process die after it.
            await self.redis.sadd(keys.channel_outbox_users(), user_id)
            outbox = keys.channel_user_outbox(user_id)
        unused = keys.delivery_seq(user_id)  # a key of the user's slot the script leaves alone
        script_keys = [*delivery_keys(user_id), outcome_key or unused, outbox or unused]
        args: list[str | int] = [
            wire_body(message),
            LOG_KEEP,
            LOG_MAX_AGE,
            OUTCOME_TTL,
            user_id,
            "1" if outcome_key else "",
            "1" if outbox else "",
        ]
        if self._held is None:
            seq = await self._script(keys=script_keys, args=args)
        else:
            seq = await self._held.run(
                HELD_SEND, script_keys, [*args, HOLD], keys.delivery_channel(user_id)
            )
        if outbox and seq:
            await forward_outbox(self.redis, user_id)
        return int(seq)

    async def current_seq(self, user_id: str) -> int:
        return int(await self.redis.get(keys.delivery_seq(user_id)) or 0)

    async def logged(self, user_id: str, seq: int) -> str | None:
        """The logged message `seq`, or None once it left the catch-up log."""
        raw = await self.redis.zrangebyscore(keys.delivery_log(user_id), seq, seq)
        return str(raw[0]) if raw else None

    async def since(self, user_id: str, seq: int, *, now: float | None = None) -> list[str]:
        """Logged messages after `seq`, oldest first, within the catch-up window."""
        raw = await self.redis.zrangebyscore(keys.delivery_log(user_id), f"({seq}", "+inf")
        oldest = (now or time.time()) - LOG_MAX_AGE
        return [str(m) for m in raw if _sent_at(str(m)) >= oldest]


def _sent_at(message: str) -> float:
    try:
        return float(json.loads(message).get("gesendet_am", 0.0))
    except (ValueError, AttributeError):
        return 0.0


def _seq_of(message: str) -> int:
    """Messages start with '{"seq":N,' (see `lua.SEND`): read N without parsing the rest."""
    end = message.find(",", 7)
    return int(message[7:end])


class Socket(Protocol):
    async def send_text(self, data: str) -> None: ...

    async def close(self, code: int = 1000, reason: str | None = None) -> None: ...


@dataclass(eq=False)
class Connection:
    """One WebSocket of one user, with its own outgoing queue (a slow peer stalls no one).

    The queue is capped by bytes. A connection that falls further behind is `overflowed`:
    what it had queued is dropped at once (the memory returns now, not when the peer
    reads), nothing more is queued, and its pump ends so the socket handler closes it with
    4408 - the close frame follows the data the peer has not read yet."""

    socket: Socket
    user_id: str
    client_id: str | None
    buffer_bytes: int = CONNECTION_BUFFER_BYTES
    token_digest: str = ""
    last_seq: int = 0
    replaying: bool = True
    held: list[tuple[int, str, int]] = field(default_factory=list)
    overflowed: bool = False
    revoked: bool = False
    stopped: bool = False
    queued_bytes: int = 0
    queue: deque[tuple[str, int]] = field(default_factory=deque)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    pump_task: asyncio.Task[None] | None = None

    def offer(self, seq: int, message: str, size: int | None = None) -> None:
        size = len(message.encode("utf-8")) if size is None else size
        if self.replaying:
            self.held.append((seq, message, size))
            return
        if seq <= self.last_seq:
            return
        self.last_seq = seq
        self.put(message, size)

    def put(self, message: str, size: int) -> None:
        """Queue a message; past the byte cap (one message always fits) the connection is
        given up instead."""
        if self.ended or self.stopped:
            return
        if self.queued_bytes and self.queued_bytes + size > self.buffer_bytes:
            self.overflow()
            return
        self.queue.append((message, size))
        self.queued_bytes += size
        self.ready.set()

    def overflow(self) -> None:
        self.overflowed = True
        self._give_up()

    def revoke(self) -> None:
        """Its token was revoked: nothing more is sent, the socket handler closes it with
        4401."""
        self.revoked = True
        self._give_up()

    @property
    def ended(self) -> bool:
        return self.overflowed or self.revoked

    def _give_up(self) -> None:
        self.queue.clear()
        self.queued_bytes = 0
        self.ready.set()
        if self.pump_task is not None and not self.pump_task.done():
            # blocked in a send the peer does not read: nothing of that message was
            # written yet (the server waits for a writable transport first)
            self.pump_task.cancel()

    def stop(self) -> None:
        """End the pump after what is queued (server shutdown)."""
        self.stopped = True
        self.ready.set()

    def wants(self, message: str) -> bool:
        """The user's own utterance is not echoed to the client that sent it."""
        if self.client_id is None or f'"typ":"{MSG_UTTERANCE}"' not in message:
            return True
        try:
            senders = json.loads(message).get("client_ids") or []
        except ValueError:
            return True
        return self.client_id not in senders


class DeliveryHub:
    """Per API process: the user's live connections, fed from Redis pub/sub."""

    def __init__(
        self,
        redis: aioredis.Redis,
        *,
        max_per_user: int = MAX_CONNECTIONS_PER_USER,
        buffer_bytes: int = CONNECTION_BUFFER_BYTES,
    ) -> None:
        self.redis = redis
        self.max_per_user = max_per_user
        self.buffer_bytes = buffer_bytes
        self.delivery = Delivery(redis)
        self._connections: dict[str, set[Connection]] = defaultdict(set)
        self._task: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self.revocations: RevocationListener | None = None
        """Told about revoked tokens (set before `start`); None: only sockets are closed."""

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._listen(), name="delivery-hub")
            await asyncio.wait_for(self._subscribed.wait(), timeout=10)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for conns in list(self._connections.values()):
            for conn in list(conns):
                conn.stop()

    def connection_count(self, user_id: str | None = None) -> int:
        """Sockets attached to this process, for one user or in all; what a test observes to
        see the socket limit and the slow-reader close take effect."""
        if user_id is not None:
            return len(self._connections.get(user_id, ()))
        return sum(len(c) for c in self._connections.values())

    async def _listen(self) -> None:
        attempt = random.randrange(1 << 16)  # API processes spread over a cluster's nodes
        while True:
            # on a cluster, a node of its own each attempt (store/redis_client.subscriber)
            source, own = await subscriber(self.redis, attempt)
            attempt += 1
            pubsub = source.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.psubscribe(keys.delivery_channel_pattern())
                await pubsub.subscribe(keys.token_revoked_channel())
                if self._subscribed.is_set():  # a reconnect: fill what we may have missed
                    if self.revocations is not None:
                        self.revocations.resubscribed()
                    await self._replay_all()
                self._subscribed.set()
                async for item in pubsub.listen():
                    kind = item.get("type")
                    if kind == "pmessage":
                        self._dispatch(
                            keys.user_of_delivery_channel(str(item["channel"])), str(item["data"])
                        )
                    elif kind == "message":
                        self._revoked(token_revocation.decode(str(item["data"])))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                log.warning("delivery hub lost its Redis subscription (%s); reconnecting", exc)
                await asyncio.sleep(RECONNECT_DELAY)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                if own:
                    with contextlib.suppress(Exception):
                        await source.aclose()

    def _dispatch(self, user_id: str, message: str) -> None:
        conns = self._connections.get(user_id)
        if not conns:
            return
        seq = _seq_of(message)
        size = len(message.encode("utf-8"))  # once, not per connection
        for conn in conns:
            if conn.wants(message):
                conn.offer(seq, message, size)
            elif not conn.replaying:
                conn.last_seq = max(conn.last_seq, seq)

    def _revoked(self, digests: list[str]) -> None:
        if self.revocations is not None:
            self.revocations.revoked(digests)
        self.close_tokens(digests)

    def close_tokens(self, digests: Collection[str]) -> int:
        """End every connection opened with one of these token digests (closed with 4401);
        returns how many."""
        wanted = set(digests)
        ended = 0
        for conns in list(self._connections.values()):
            for conn in list(conns):
                if conn.token_digest and conn.token_digest in wanted and not conn.revoked:
                    conn.revoke()
                    ended += 1
        if ended:
            log.info("closed %d socket(s) of revoked tokens", ended)
        return ended

    def token_digests(self) -> set[str]:
        """The tokens the open connections were opened with."""
        return {
            conn.token_digest
            for conns in self._connections.values()
            for conn in conns
            if conn.token_digest
        }

    async def _replay_all(self) -> None:
        for conns in list(self._connections.values()):
            for conn in list(conns):
                for message in await self.delivery.since(conn.user_id, conn.last_seq):
                    if conn.wants(message):
                        conn.offer(_seq_of(message), message)

    # -- one connection ----------------------------------------------------------------------

    async def attach(
        self,
        socket: Socket,
        user_id: str,
        client_id: str | None,
        since: int | None,
        *,
        token_digest: str = "",
    ) -> Connection:
        """Register a connection; replay the log after `since` (if given) before live messages.
        `token_digest`: the token it was opened with, so revoking that token closes it.
        TooManyConnections if the user already holds `max_per_user` here."""
        if len(self._connections.get(user_id, ())) >= self.max_per_user:
            raise TooManyConnections(user_id)
        conn = Connection(socket, user_id, client_id, self.buffer_bytes, token_digest)
        self._connections[user_id].add(conn)
        try:
            return await self._start(conn, since)
        except BaseException:
            self.detach(conn)  # else it would hold every later message of the user
            raise

    async def _start(self, conn: Connection, since: int | None) -> Connection:
        user_id = conn.user_id
        current = await self.delivery.current_seq(user_id)
        hello = {"typ": MSG_HELLO, "user_id": user_id, "seq_aktuell": current}
        if since is not None and since > current:
            hello["hinweis"] = (
                "since liegt hinter dem aktuellen Stand; der Zähler wurde neu gestartet"
            )
            since = 0
        greeting = json.dumps(hello, ensure_ascii=False)
        conn.put(greeting, len(greeting.encode("utf-8")))
        if since is None:
            conn.last_seq = current
            replay: list[str] = []
        else:
            conn.last_seq = since
            replay = await self.delivery.since(user_id, since)
        conn.replaying = False
        for message in replay:
            if conn.wants(message):
                conn.offer(_seq_of(message), message)
        held, conn.held = conn.held, []
        for seq, message, size in held:
            conn.offer(seq, message, size)
        return conn

    def detach(self, conn: Connection) -> None:
        conns = self._connections.get(conn.user_id)
        if conns is not None:
            conns.discard(conn)
            if not conns:
                self._connections.pop(conn.user_id, None)

    async def pump(self, conn: Connection) -> None:
        """Write the connection's queue to its socket until it is stopped, falls behind
        (`conn.overflowed`: the caller closes the socket with 4408) or its token is revoked
        (`conn.revoked`: 4401)."""
        conn.pump_task = asyncio.current_task()
        try:
            while not conn.ended:
                if not conn.queue:
                    if conn.stopped:
                        return
                    conn.ready.clear()
                    await conn.ready.wait()
                    continue
                message, size = conn.queue.popleft()
                conn.queued_bytes -= size
                await conn.socket.send_text(message)
        except asyncio.CancelledError:
            if not conn.ended:
                raise
        if conn.revoked:
            return
        log.warning(
            "closing a slow connection of %s (over %d unsent bytes); it will catch up",
            conn.user_id,
            conn.buffer_bytes,
        )
