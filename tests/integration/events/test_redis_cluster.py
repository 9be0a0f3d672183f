"""Novaberg's connection side on a real 3+3 Valkey cluster (runtime/embedded_cluster.py):
the cluster client, the intake's replica-confirmed writes across a master's death, and
delivery reaching API processes whatever node they subscribed on.

Runs in every test run, on the session's `valkey_cluster` (tests/conftest.py; the same one
the session runs on when `NOVABERG_TEST_REDIS=cluster`). A test that kills a node restarts
it and waits until it rejoined as a replica before it ends."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import httpx
import pytest
import redis as redis_lib
from event_helpers import WAIT, Socket
from psycopg_pool import AsyncConnectionPool
from websockets.asyncio.client import connect

from novaberg.events.resp import LuaScript, script_client
from novaberg.runtime.embedded_cluster import (
    MASTERS,
    REPLICAS_PER_MASTER,
    ClusterNode,
    EmbeddedCluster,
)
from novaberg.store import keys
from novaberg.store.redis_client import create_redis, is_cluster
from novaberg.store.users import issue_token

PUSH = LuaScript("redis.call('RPUSH', KEYS[1], ARGV[1]); return redis.call('LLEN', KEYS[1])")
"""A one-slot write, as each of the intake's enqueue calls is."""


def _master_of(cluster: EmbeddedCluster, key: str) -> int:
    """The port of the master serving `key`'s slot."""
    with redis_lib.RedisCluster(host="127.0.0.1", port=cluster.masters()[0].port) as client:
        return int(client.get_node_from_key(key).port)


def _kill_and_recover(cluster: EmbeddedCluster, port: int) -> None:
    victim = next(n for n in cluster.nodes if n.port == port)
    cluster.kill(victim)
    cluster.wait_ok(timeout=WAIT)  # its replica took over
    cluster.restart(victim)
    cluster.wait_ok(timeout=WAIT)  # and it is back, as a replica


def test_three_masters_each_with_a_replica(valkey_cluster: EmbeddedCluster) -> None:
    roles = sorted(node.role() for node in valkey_cluster.nodes)
    assert roles == ["master"] * MASTERS + ["slave"] * (MASTERS * REPLICAS_PER_MASTER)
    assert valkey_cluster.healthy()


async def test_cluster_client_reaches_every_slot(valkey_cluster: EmbeddedCluster) -> None:
    client = create_redis(valkey_cluster.url, cluster=True)
    try:
        assert is_cluster(client)
        await client.flushdb()  # every master's
        for i in range(60):
            await client.set(f"crun:{i}", str(i))
        slots = {client.keyslot(f"crun:{i}") for i in range(60)}  # type: ignore[attr-defined]
        assert len(slots) == 60  # spread over the cluster, not one node
        found = {key async for key in client.scan_iter(match="crun:*", count=500)}
        assert found == {f"crun:{i}" for i in range(60)}  # SCAN walks every master
        await client.flushdb()
        assert [key async for key in client.scan_iter(match="crun:*")] == []
    finally:
        await client.aclose()


async def test_accepted_write_survives_its_master_killed(valkey_cluster: EmbeddedCluster) -> None:
    """The intake's cluster client confirms a write only once a replica has it (WAIT): a
    master killed right after the confirmation loses nothing, and the next write finds the
    promoted replica by itself."""
    key = "crun_queue:{failover}"
    intake = script_client(valkey_cluster.url, timeout=WAIT, cluster=True)
    client = create_redis(valkey_cluster.url, cluster=True)
    try:
        await client.delete(key)
        for i in range(50):
            assert await intake.run(PUSH, [key], [f"m{i}"]) == i + 1
        port = _master_of(valkey_cluster, key)
        victim = next(n for n in valkey_cluster.nodes if n.port == port)
        valkey_cluster.kill(victim)  # SIGKILL right after the last confirmation
        await asyncio.sleep(0.1)  # the loop sees the closed connections, as between requests
        # the next write waits out the failover (MOVED/refused: nothing ran, retried)
        assert await intake.run(PUSH, [key], ["after"]) == 51
        assert await client.lrange(key, 0, -1) == [f"m{i}" for i in range(50)] + ["after"]
        assert _master_of(valkey_cluster, key) != port
        valkey_cluster.restart(victim)
        valkey_cluster.wait_ok(timeout=WAIT)
    finally:
        await intake.aclose()
        await client.aclose()


@pytest.fixture
async def two_apis(
    valkey_cluster: EmbeddedCluster,
    api_process: Callable[..., tuple[str, object]],
    pg_pool: AsyncConnectionPool,
) -> tuple[list[str], str]:
    """Two `novaberg api` processes on the cluster; a token of a fresh user."""
    env = {"NOVABERG_REDIS_URL": valkey_cluster.url, "NOVABERG_REDIS_CLUSTER": "true"}
    urls = [api_process(**env)[0], api_process(**env)[0]]
    token = (await issue_token(pg_pool, "crun_user", "test")).token
    return urls, token


async def _socket(url: str, token: str) -> Socket:
    ws_url = url.replace("http://", "ws://") + f"/ws?token={token}"
    sock = Socket(await connect(ws_url))
    await sock.wait_typ("verbindung")
    return sock


def _publish_everywhere(cluster: EmbeddedCluster, user: str, seq: int) -> None:
    """One message per node, each PUBLISHed on that node only."""
    for number, node in enumerate(n for n in cluster.nodes if n.alive()):
        body = {"seq": seq + number, "typ": "crun_probe", "knoten": node.address}
        with node.client() as plain:
            plain.publish(keys.delivery_channel(user), json.dumps(body, separators=(",", ":")))


async def test_delivery_reaches_every_api_process_from_every_node(
    valkey_cluster: EmbeddedCluster, two_apis: tuple[list[str], str]
) -> None:
    """Each API process subscribes on one node; a message published on any node reaches the
    sockets of both (classic pub/sub is broadcast over the cluster bus)."""
    urls, token = two_apis
    sockets = [await _socket(url, token) for url in urls]
    try:
        _publish_everywhere(valkey_cluster, "crun_user", 1000)
        expected = {node.address for node in valkey_cluster.nodes}
        for sock in sockets:
            async with asyncio.timeout(WAIT):
                while {m["knoten"] for m in sock.of("crun_probe")} != expected:
                    await asyncio.sleep(0.05)
    finally:
        for sock in sockets:
            await sock.close()


async def test_delivery_moves_to_another_node_when_its_node_dies(
    valkey_cluster: EmbeddedCluster, two_apis: tuple[list[str], str]
) -> None:
    """Kill the node an API process listens on (PUBSUB NUMPAT tells which): afterwards,
    messages published on the surviving nodes reach both processes' sockets again."""
    urls, token = two_apis
    sockets = [await _socket(url, token) for url in urls]
    seq = 2000
    try:
        listened = [n for n in valkey_cluster.nodes if _patterns(n) > 0]
        assert listened, "no node holds a hub's PSUBSCRIBE"
        victim = listened[0]
        valkey_cluster.kill(victim)
        valkey_cluster.wait_ok(timeout=WAIT)
        async with asyncio.timeout(WAIT):
            while not all(sock.of("crun_probe") for sock in sockets):
                # a hub that listened on the dead node resubscribes elsewhere; publish
                # until both heard one (the resubscription is not instant)
                seq += 10
                _publish_everywhere(valkey_cluster, "crun_user", seq)
                await asyncio.sleep(0.2)
        valkey_cluster.restart(victim)
        valkey_cluster.wait_ok(timeout=WAIT)
    finally:
        for sock in sockets:
            await sock.close()


def _patterns(node: ClusterNode) -> int:
    with node.client() as plain:
        return int(plain.execute_command("PUBSUB", "NUMPAT"))


def test_api_answers_on_the_cluster(two_apis: tuple[list[str], str]) -> None:
    urls, token = two_apis
    for url in urls:
        reply = httpx.get(f"{url}/chat/me", headers={"Authorization": f"Bearer {token}"})
        assert reply.status_code == 200, reply.text
