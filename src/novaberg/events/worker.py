"""A worker: both consumers, a heartbeat, and recovery of dead workers' turns.

Every worker registers its id and refreshes `worker_alive:{id}`. A worker whose heartbeat
expired left its processing list behind; any live worker adopts it entry by entry (LMOVE, so
each orphan has exactly one rescuer) and ends each turn in an outcome: an answer that
already left stays, everything else becomes `turn_gescheitert` naming the turn's ids
(docs/behaviour/events.md#recovery). The dead worker's model gate slots and turn markers are
freed on the way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import uuid

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.config import Settings
from novaberg.events.delivery import Delivery
from novaberg.events.event_consumer import EventConsumer, raw_identity
from novaberg.events.outcomes import WORKER_DIED, Outcomes
from novaberg.events.prompt_consumer import PromptConsumer, block_message_ids
from novaberg.events.queues import Claimed, TurnQueues
from novaberg.graph.contract import TurnGraphs
from novaberg.llm.gate import ModelGate
from novaberg.llm.layer import ModelLayer
from novaberg.store import keys

log = logging.getLogger(__name__)

HEARTBEAT_INTERVAL = 3.0
"""Seconds between heartbeat refreshes (and orphan scans)."""

HEARTBEAT_TTL = 15.0
"""A worker silent this long is dead; its turns are recovered."""

DRAIN_SECONDS = 30.0
"""On shutdown, running turns get this long to finish before they are failed."""


def new_worker_id() -> str:
    host = socket.gethostname().replace("@", "_").replace(":", "_")[:40]
    return f"{host}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


class Worker:
    def __init__(
        self,
        redis: aioredis.Redis,
        graphs: TurnGraphs,
        gate: ModelGate,
        *,
        worker_id: str | None = None,
        heartbeat_interval: float = HEARTBEAT_INTERVAL,
        heartbeat_ttl: float = HEARTBEAT_TTL,
        poll_interval: float | None = None,
        drain_seconds: float = DRAIN_SECONDS,
    ) -> None:
        self.redis = redis
        self.graphs = graphs
        self.gate = gate
        self.worker_id = worker_id or new_worker_id()
        self.heartbeat_interval = heartbeat_interval
        self.heartbeat_ttl = heartbeat_ttl
        self.drain_seconds = drain_seconds
        self.delivery = Delivery(redis)
        self.outcomes = Outcomes(redis, self.delivery)
        self.queues = TurnQueues(redis, self.worker_id)
        poll = {} if poll_interval is None else {"poll_interval": poll_interval}
        self.prompts = PromptConsumer(
            redis, graphs, gate, worker_id=self.worker_id, delivery=self.delivery, **poll
        )
        self.events = EventConsumer(
            redis, graphs, gate, worker_id=self.worker_id, delivery=self.delivery, **poll
        )
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._heartbeat: asyncio.Task[None] | None = None

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        await self._beat()  # heartbeat first, then registered: never seen dead at start
        self._stop.clear()
        self._heartbeat = asyncio.create_task(self._housekeeping(), name="worker-heartbeat")
        self._tasks = [
            asyncio.create_task(self.prompts.run(self._stop), name="prompt-consumer"),
            asyncio.create_task(self.events.run(self._stop), name="event-consumer"),
        ]
        deps = getattr(self.graphs, "deps", None)
        if deps is not None:
            from novaberg.events.reminders import reminder_loop

            reminders = reminder_loop(deps, self.graphs.agent_graph, self._stop)
            self._tasks.append(asyncio.create_task(reminders, name="reminders"))
            if deps.settings.pixie:
                from novaberg.pixie.jobs import build_scheduler

                scheduler = build_scheduler(
                    deps.redis, deps.pool, deps.model, gate=self.gate, worker_id=self.worker_id
                )
                self._tasks.append(asyncio.create_task(scheduler.run(self._stop), name="pixie"))
        log.info("worker %s started", self.worker_id)

    async def stop(self) -> None:
        """Stop polling, let running turns finish (bounded), fail what is left.

        The heartbeat beats on until the end: a worker that is draining its turns is not
        dead, and no other worker may adopt the turns it is still running."""
        self._stop.set()
        for task in self._tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        try:
            await self._drain_and_fail()
        finally:
            if self._heartbeat is not None:
                self._heartbeat.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._heartbeat
                self._heartbeat = None
        await self.redis.srem(keys.worker_registry(), self.worker_id)
        await self.redis.delete(keys.worker_heartbeat(self.worker_id))
        log.info("worker %s stopped", self.worker_id)

    async def _drain_and_fail(self) -> None:
        running = [*self.prompts._running.values(), *self.events._running.values()]
        if running:
            log.info(
                "worker %s stopping: waiting up to %.0f s for %d running turn(s)",
                self.worker_id,
                self.drain_seconds,
                len(running),
            )
            _done, pending = await asyncio.wait(running, timeout=self.drain_seconds)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
        recovered = await self._recover_list(self.queues.processing, reason="worker_beendet")
        if recovered:
            log.warning(
                "worker %s stopped with %d unfinished turn(s); failed them",
                self.worker_id,
                recovered,
            )

    async def _beat(self) -> None:
        """Refresh the heartbeat and the registration: a worker that was taken for dead
        (a stalled loop, a lost connection) is watched again from its next beat."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.set(keys.worker_heartbeat(self.worker_id), "1", px=int(self.heartbeat_ttl * 1000))
            pipe.sadd(keys.worker_registry(), self.worker_id)
            await pipe.execute()

    async def _housekeeping(self) -> None:
        """Beat and recover until `stop` cancels this task, after the drain."""
        while True:
            try:
                await self._beat()
                await self.recover_orphans()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("worker heartbeat/recovery failed")
            await asyncio.sleep(self.heartbeat_interval)

    # -- recovery ---------------------------------------------------------------------------

    async def recover_orphans(self) -> int:
        """Adopt and end the turns of every registered worker whose heartbeat expired."""
        recovered = 0
        for member in await self.redis.smembers(keys.worker_registry()):
            other = str(member)
            if other == self.worker_id or await self.redis.exists(keys.worker_heartbeat(other)):
                continue
            log.warning("worker %s is dead (no heartbeat); recovering its turns", other)
            await self._free_gate_slots(other)
            orphan_list = keys.processing_list(other)
            while True:
                raw = await self.redis.lmove(orphan_list, self.queues.processing, "RIGHT", "LEFT")
                if raw is None:
                    break
                await self._recover_entry(Claimed.parse(str(raw)), WORKER_DIED)
                recovered += 1
            await self.redis.srem(keys.worker_registry(), other)
        return recovered

    async def _recover_list(self, processing: str, *, reason: str) -> int:
        count = 0
        for raw in await self.redis.lrange(processing, 0, -1):
            await self._recover_entry(Claimed.parse(str(raw)), reason)
            count += 1
        return count

    async def _recover_entry(self, entry: Claimed, reason: str) -> None:
        pair = entry.pair
        if pair is None:
            log.error("unreadable processing entry dropped: %s", entry.raw[:300])
            await self.redis.lrem(self.queues.processing, 1, entry.raw)
            return
        if entry.kind == "block":
            turn_id, ids, count = str(entry.data["turn_id"]), block_message_ids(entry), 0
        else:
            maybe_turn, ids, count = raw_identity(str(entry.data.get("raw", "")))
            turn_id = maybe_turn or ""
        if turn_id and await self.outcomes.decided(turn_id, count):
            log.warning("turn %s of %s: answer had left; its post-run was lost", turn_id, pair)
        elif turn_id:
            await self.outcomes.fail(pair.user_id, pair.character_id, turn_id, count, ids, reason)
        await self.queues.finish(pair, entry, release_marker=True)

    async def _free_gate_slots(self, dead_worker: str) -> None:
        prefix = f"{dead_worker}:"
        members = [str(m) for m in await self.redis.zrange(self.gate.key, 0, -1)]
        stale = [m for m in members if m.startswith(prefix)]
        if stale:
            await self.redis.zrem(self.gate.key, *stale)
            log.warning("freed %d model-gate slot(s) of dead worker %s", len(stale), dead_worker)


def graph_runtime(
    settings: Settings, redis: aioredis.Redis, pool: AsyncConnectionPool, model: ModelLayer
) -> TurnGraphs:
    """The real graphs, compiled (imported lazily: the API-only process never loads them)."""
    from novaberg.agents.deps import GraphDeps
    from novaberg.agents.registry import discover_agents
    from novaberg.graph.runner import GraphRuntime

    runtime: TurnGraphs = GraphRuntime(
        GraphDeps(settings, redis, pool, model), registry=discover_agents()
    ).compile()
    return runtime


async def close_graphs(graphs: TurnGraphs) -> None:
    """Flush the graphs' pipeline-log writer (if they have one)."""
    pipeline_log = getattr(getattr(graphs, "deps", None), "log", None)
    if pipeline_log is not None:
        await pipeline_log.close()
