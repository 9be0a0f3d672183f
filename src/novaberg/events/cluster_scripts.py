"""Scripts on a Redis Cluster, confirmed by a replica: run the script on the master of its
slot, then wait until a replica has it. The intake answers 202 only after that; a delivering
script (events/held_delivery.py) publishes its message only after that.

Replication in a Redis Cluster is asynchronous: a master that acknowledged a write and died
before sending it on takes the write with it, and its replica takes over without it. An
utterance the intake confirmed must not vanish that way, so after the enqueue script the
same connection sends `WAIT 1 <REPLICA_WAIT_MS>`: WAIT counts the replicas that have every
write this *connection* made (it must be the script's own connection; redis-py's command
methods take any pooled connection, hence the explicit one here).

A master without a live replica (right after a failover, until the old master rejoins as
its replica) would make WAIT time out on every write. The write is then accepted anyway
and a warning logged once per node and minute: refusing every message of a third of the
users until an operator restores a replica would be worse than the guarantee it keeps. The
guarantee therefore reads: an accepted message survives the death of its master while that
master has a replica (docs/behaviour/events.md, "Redis Cluster").

The script runs where the first key's slot lives (every key of one call shares a slot —
store/keys.py's hash tags). MOVED/ASK/CLUSTERDOWN/TRYAGAIN and a refused connection mean
nothing ran: the slot map is refreshed and the call retried until the timeout. A connection
lost after the command was sent is not retried (the script may have run): the caller
answers 503, as with a single Redis.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any, Final

from redis.exceptions import (
    AskError,
    ClusterDownError,
    ConnectionError,
    MovedError,
    NoScriptError,
    ResponseError,
    TryAgainError,
)

from novaberg.events.resp import Arg, LuaScript
from novaberg.store.redis_client import create_cluster

log = logging.getLogger(__name__)

REPLICA_WAIT_MS: Final = 500
"""Longest wait for a replica's acknowledgement. A live replica on the same network answers
within a millisecond or two; this long means there is none (see the module docstring)."""
RETRY_PAUSE: Final = 0.05
NO_REPLICA_WARNING_S: Final = 60.0

_WARNED: dict[tuple[str, str], float] = {}
"""(caller, node) → when the last "no replica" warning was logged: once a minute per process,
however many clients run scripts."""

_NOTHING_RAN = (MovedError, AskError, ClusterDownError, TryAgainError)


class ClusterScripts:
    """`ScriptClient` (events/resp.py) on a Redis Cluster, confirmed by a replica.

    `ClusterScripts(url, timeout)` opens a cluster client of its own (the intake);
    `ClusterScripts.wrapping(client, timeout, what)` runs on a process's existing one and
    leaves it open on `aclose` (delivery: the scripts of delivery_lua/queues_lua as
    `LuaScript(source)`). `what` names the caller in the log."""

    def __init__(self, url: str, timeout: float) -> None:
        self._timeout = timeout
        self._redis: Any = create_cluster(url, reply_timeout=timeout)
        self._owned = True
        self._what = "intake"

    @classmethod
    def wrapping(cls, client: Any, timeout: float, what: str) -> ClusterScripts:
        made = cls.__new__(cls)
        made._timeout = timeout
        made._redis = client
        made._owned = False
        made._what = what
        return made

    async def run(self, script: LuaScript, keys: Sequence[str], args: Sequence[Arg]) -> Any:
        async with asyncio.timeout(self._timeout):
            while True:
                try:
                    return await self._run_once(script, keys, args)
                except _NOTHING_RAN as exc:
                    log.info("%s: cluster moved or failing over (%s); retrying", self._what, exc)
                except _Unreachable as exc:
                    log.info("%s: node unreachable (%s); retrying", self._what, exc)
                await self._refresh()
                await asyncio.sleep(RETRY_PAUSE)

    async def aclose(self) -> None:
        if self._owned:
            await self._redis.aclose()

    async def _run_once(self, script: LuaScript, keys: Sequence[str], args: Sequence[Arg]) -> Any:
        if not self._redis.nodes_manager.slots_cache:
            await self._redis.initialize()
        node = self._redis.get_node_from_key(keys[0])
        conn = node.acquire_connection()
        try:
            try:
                await conn.connect()
                # a pooled connection whose node died since: its FIN is already here,
                # so nothing is sent on it (after a send, a lost reply is not retried)
                if await conn.can_read():
                    raise ConnectionError("the node closed the connection")
            except (ConnectionError, OSError) as exc:
                raise _Unreachable(str(exc)) from exc
            reply = await self._call(conn, "EVALSHA", script.sha, len(keys), *keys, *args)
            if isinstance(reply, NoScriptError):  # a restarted or new master: EVAL loads it
                reply = await self._call(conn, "EVAL", script.source, len(keys), *keys, *args)
            if isinstance(reply, ResponseError):
                raise reply
            replicas = await self._call(conn, "WAIT", 1, REPLICA_WAIT_MS)
            if not isinstance(replicas, int) or replicas < 1:
                self._no_replica(node.name)
            return reply
        except BaseException:
            await conn.disconnect()
            raise
        finally:
            node.release(conn)

    @staticmethod
    async def _call(conn: Any, *command: Arg) -> Any:
        await conn.send_command(*command)
        try:
            return await conn.read_response()
        except _NOTHING_RAN:
            raise
        except ResponseError as exc:
            return exc

    async def _refresh(self) -> None:
        try:
            await self._redis.nodes_manager.initialize()
        except Exception as exc:  # every node may be failing over; the next attempt retries
            log.debug("%s: slot map refresh failed (%s)", self._what, exc)

    def _no_replica(self, node: str) -> None:
        now = time.monotonic()
        if now - _WARNED.get((self._what, node), -NO_REPLICA_WARNING_S) >= NO_REPLICA_WARNING_S:
            _WARNED[self._what, node] = now
            log.warning(
                "%s: no replica of %s acknowledged within %d ms; writes to its slots go on "
                "without a copy until a replica is back",
                self._what,
                node,
                REPLICA_WAIT_MS,
            )


class _Unreachable(Exception):
    """The node refused the connection: nothing was sent."""
