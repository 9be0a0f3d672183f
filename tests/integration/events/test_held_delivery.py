"""An outcome is on a replica before anyone sees it (issue 37, Redis Cluster).

On a real 3+3 cluster (runtime/embedded_cluster.py) the delivering script numbers, logs and
claims without publishing, the same connection then sends WAIT, and only then is the message
published (events/held_delivery.py); a retry after a lost reply publishes what the log holds
for the outcome. On a single Redis the script still publishes itself, in one call.
docs/behaviour/events.md "Outcomes in a Redis Cluster"."""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from urllib.parse import urlparse

import pytest
import redis as redis_lib
import redis.asyncio as aioredis
from event_helpers import WAIT

from novaberg.events.delivery import (
    HELD_SEND,
    LOG_KEEP,
    LOG_MAX_AGE,
    OUTCOME_TTL,
    Delivery,
    delivery_keys,
    wire_body,
)
from novaberg.events.held_delivery import HOLD, HeldDelivery
from novaberg.events.model import (
    INTAKE_WINDOW_SECONDS,
    SUPERSEDED_STAGE,
    QueuedUtterance,
    ResponseMessage,
    StageMessage,
    build_event,
)
from novaberg.events.outcomes import outcome_key
from novaberg.events.queues import HELD_SUPERSEDE, Supersede, TurnQueues, push_event
from novaberg.pair import Pair
from novaberg.runtime.embedded_cluster import HOST, EmbeddedCluster
from novaberg.runtime.services import Endpoints
from novaberg.store import keys
from novaberg.store.redis_client import create_redis, is_cluster
from slot_check import SCRIPT_COMMANDS, parse_monitor_line


def _answer(text: str, turn_id: str) -> ResponseMessage:
    return ResponseMessage.model_validate(
        {"nachricht": text, "turn_id": turn_id, "nachrichten_ids": ["m1"], "character_id": "nova"}
    )


@dataclass
class Monitor:
    """MONITOR on one node (`redis://host:port` or `unix://path`): (origin, args) of every
    command it ran, read up to a marker sent last."""

    url: str
    seen: list[tuple[str, list[str]]] = field(default_factory=list)

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        where = urlparse(self.url)
        if where.scheme == "unix":
            return await asyncio.open_unix_connection(where.path, limit=1 << 24)
        return await asyncio.open_connection(where.hostname, where.port, limit=1 << 24)

    @contextlib.asynccontextmanager
    async def watching(self) -> AsyncIterator[Monitor]:
        reader, writer = await self._open()
        writer.write(b"MONITOR\r\n")
        await writer.drain()
        assert (await reader.readline()).startswith(b"+OK")
        try:
            yield self
            end = f"held-delivery-end-{uuid.uuid4().hex}"
            _, marker = await self._open()
            marker.write(f"*2\r\n$4\r\nECHO\r\n${len(end)}\r\n{end}\r\n".encode())
            await marker.drain()
            marker.close()
            async with asyncio.timeout(WAIT):
                while True:
                    parsed = parse_monitor_line(await reader.readline())
                    if parsed is None:
                        continue
                    origin, raw = parsed
                    args = [a.decode("utf-8", "replace") for a in raw]
                    if args[1:2] == [end]:
                        break
                    self.seen.append((origin, [args[0].upper(), *args[1:]]))
        finally:
            writer.close()

    def scripts(self) -> list[tuple[int, str]]:
        return [
            (i, origin)
            for i, (origin, args) in enumerate(self.seen)
            if args[0].encode() in SCRIPT_COMMANDS
        ]

    def published_by_lua(self) -> list[list[str]]:
        return [args for origin, args in self.seen if origin == "lua" and args[0] == "PUBLISH"]


def _master_and_replica(cluster: EmbeddedCluster, key: str) -> tuple[int, int]:
    """Ports of the master serving `key`'s slot and of its replica."""
    with redis_lib.RedisCluster(host=HOST, port=cluster.masters()[0].port) as client:
        master = int(client.get_node_from_key(key).port)
    with redis_lib.Redis(host=HOST, port=master) as plain:
        replica = plain.info("replication")["slave0"]
    port = int(replica["port"])
    return master, port


def _on_replica(port: int, user_id: str, seq: int) -> list[str]:
    """The user's log entry `seq` as the replica holds it (READONLY on one connection)."""
    with redis_lib.Redis(
        host=HOST, port=port, decode_responses=True, single_connection_client=True
    ) as replica:
        replica.execute_command("READONLY")
        return [str(m) for m in replica.zrangebyscore(keys.delivery_log(user_id), seq, seq)]


async def _next_message(pubsub: aioredis.client.PubSub) -> str:
    async with asyncio.timeout(WAIT):  # a guard: the message comes or the test fails
        while True:
            item = await pubsub.get_message(ignore_subscribe_messages=True, timeout=WAIT)
            if item is not None and item["type"] == "message":
                return str(item["data"])


@pytest.fixture
async def cluster_client(valkey_cluster: EmbeddedCluster) -> AsyncIterator[aioredis.Redis]:
    client = create_redis(valkey_cluster.url, cluster=True)
    await client.flushdb()
    yield client
    await client.aclose()


async def test_outcome_is_on_a_replica_before_a_subscriber_hears_it(
    valkey_cluster: EmbeddedCluster, cluster_client: aioredis.Redis
) -> None:
    user_id = "held_anna"
    key = outcome_key(user_id, "t-held", 0)
    master, replica = _master_and_replica(valkey_cluster, keys.delivery_log(user_id))
    listener = aioredis.Redis(host=HOST, port=replica, decode_responses=True)
    pubsub = listener.pubsub()
    await pubsub.subscribe(keys.delivery_channel(user_id))
    try:
        async with Monitor(f"redis://{HOST}:{master}").watching() as monitor:
            sending = asyncio.create_task(
                Delivery(cluster_client).send(user_id, _answer("Hallo", "t-held"), outcome_key=key)
            )
            message = await _next_message(pubsub)
            seq = json.loads(message)["seq"]
            # at the moment a socket could show it, the replica already has it
            assert _on_replica(replica, user_id, seq) == [message]
            assert await sending == seq
    finally:
        await pubsub.aclose()
        await listener.aclose()
    assert monitor.published_by_lua() == []  # the script did not publish it itself
    scripts = monitor.scripts()  # EVALSHA, and EVAL if the node did not know the script yet
    assert 1 <= len(scripts) <= 2
    at, origin = scripts[-1]
    after = [args for o, args in monitor.seen[at + 1 :] if o == origin]
    assert after[0][0] == "WAIT"  # the script's own connection waited for the replica
    assert await cluster_client.get(key) == str(seq)  # the claim names its message


async def test_retry_after_a_lost_reply_publishes_the_logged_outcome(
    valkey_cluster: EmbeddedCluster, cluster_client: aioredis.Redis
) -> None:
    """The script ran (claimed, numbered, logged) but its reply was lost before WAIT and
    PUBLISH: the retry claims nothing new and publishes what the log holds for the outcome."""
    user_id = "held_ben"
    key = outcome_key(user_id, "t-lost", 0)
    unused = keys.delivery_seq(user_id)
    first = await cluster_client.eval(  # type: ignore[misc]
        HELD_SEND.source,
        5,
        *delivery_keys(user_id),
        key,
        unused,
        wire_body(_answer("Erster Versuch", "t-lost")),
        LOG_KEEP,
        LOG_MAX_AGE,
        OUTCOME_TTL,
        user_id,
        "1",
        "",
        HOLD,
    )
    seq, logged = int(first[0]), str(first[1])
    listener = aioredis.Redis(
        host=HOST, port=valkey_cluster.masters()[0].port, decode_responses=True
    )
    pubsub = listener.pubsub()
    await pubsub.subscribe(keys.delivery_channel(user_id))
    try:
        retry = await Delivery(cluster_client).send(
            user_id, _answer("Erster Versuch", "t-lost"), outcome_key=key
        )
        assert retry == 0  # no second outcome
        assert await _next_message(pubsub) == logged  # but the logged one reaches sockets
    finally:
        await pubsub.aclose()
        await listener.aclose()
    assert await cluster_client.zcard(keys.delivery_log(user_id)) == 1
    assert await cluster_client.get(keys.delivery_seq(user_id)) == str(seq)


async def test_single_redis_publishes_inside_the_one_script(
    redis: aioredis.Redis, endpoints: Endpoints
) -> None:
    """A single Redis keeps today's path: one script call that publishes itself, no WAIT."""
    if is_cluster(redis):
        pytest.skip("the single-Redis path")
    user_id = "single_cleo"
    await Delivery(redis).send(user_id, _answer("vorab", "t0"))  # the server knows the script
    pubsub = redis.pubsub()
    await pubsub.subscribe(keys.delivery_channel(user_id))
    try:
        async with Monitor(endpoints.redis_url).watching() as monitor:
            seq = await Delivery(redis).send(
                user_id, _answer("Hallo", "t-single"), outcome_key=outcome_key(user_id, "t1", 0)
            )
            message = await _next_message(pubsub)
    finally:
        await pubsub.aclose()
    assert json.loads(message)["seq"] == seq
    assert len(monitor.scripts()) == 1
    assert [a[1] for a in monitor.published_by_lua()] == [keys.delivery_channel(user_id)]
    others = [args[0] for origin, args in monitor.seen if origin != "lua"]
    assert "WAIT" not in others
    assert "PUBLISH" not in others


async def test_retried_supersede_publishes_its_logged_stage_message(
    valkey_cluster: EmbeddedCluster, cluster_client: aioredis.Redis
) -> None:
    """A supersede whose reply was lost before WAIT and PUBLISH: the retry (same stage body)
    finds its entry gone but its own stage message in the log, counts as superseded and
    publishes that message — once in the log."""
    pair = Pair("held_dora", "nova")
    queues = TurnQueues(cluster_client, "w-held")
    event = build_event(
        user_id=pair.user_id,
        character_id=pair.character_id,
        source="user",
        typ="message",
        payload={"turn_id": "t-1", "nachrichten_ids": ["m1"], "user_prompt": "m1"},
    )
    await push_event(cluster_client, event)
    entry = await queues.claim_event(pair)
    assert entry is not None
    queued = QueuedUtterance(nachrichten_id="m2", prompt="m2", empfangen_am=1001.0).wire()
    await cluster_client.rpush(keys.prompt_queue(pair), queued)  # type: ignore[misc]
    stage = StageMessage(
        character_id="nova", turn_id="t-1", node=SUPERSEDED_STAGE, label="x", graph="character"
    )
    script_keys = [
        keys.prompt_queue(pair),
        keys.turn_marker(pair),
        keys.processing_list(pair, "w-held"),
        keys.carried_ids(pair),
        keys.pending_agent(pair.user_id),
        *delivery_keys(pair.user_id),
        keys.carried_rounds(pair),
    ]
    args = [
        entry.marker,
        entry.raw,
        repr(1000.0),
        INTAKE_WINDOW_SECONDS,
        keys.QUEUE_TTL,
        wire_body(stage),
        LOG_KEEP,
        LOG_MAX_AGE,
        keys.TURN_MARKER_TTL,
        1,
        HOLD,
        "m1",
    ]
    first = await cluster_client.eval(HELD_SUPERSEDE.source, len(script_keys), *script_keys, *args)  # type: ignore[misc]
    assert int(first[0]) == Supersede.SUPERSEDED  # ran, but its reply is "lost"
    listener = aioredis.Redis(
        host=HOST, port=valkey_cluster.masters()[-1].port, decode_responses=True
    )
    pubsub = listener.pubsub()
    await pubsub.subscribe(keys.delivery_channel(pair.user_id))
    try:
        channel = keys.delivery_channel(pair.user_id)
        retry = await HeldDelivery(cluster_client).run(HELD_SUPERSEDE, script_keys, args, channel)
        assert retry == Supersede.SUPERSEDED
        assert await _next_message(pubsub) == str(first[1])
    finally:
        await pubsub.aclose()
        await listener.aclose()
    assert await cluster_client.zcard(keys.delivery_log(pair.user_id)) == 1
    assert await cluster_client.lrange(keys.carried_ids(pair), 0, -1) == ["m1"]  # type: ignore[misc]
