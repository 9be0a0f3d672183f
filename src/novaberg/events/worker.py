"""A worker: both consumers, a heartbeat, and recovery of dead workers' turns and its own.

Every worker registers its id and refreshes `worker_alive:{id}`. A worker whose heartbeat
expired left its processing list behind; any live worker adopts it entry by entry (LMOVE, so
each orphan has exactly one rescuer) and ends each turn in an outcome: an answer that
already left stays, everything else becomes `turn_gescheitert` naming the turn's ids
(docs/behaviour/events.md#recovery). The dead worker's model gate slots and turn markers are
freed on the way.

Redis outages — the invariant: *once Redis answers again (with its data: AOF on, or a
clean restart), every id of a run that was going on during the outage ends in exactly
one outcome within `OUTAGE_RECOVERY_BOUND` seconds, plus the time the run still needs
for its model calls (and for a free model-gate slot).* Three things keep it:

1. Every step that ends a run is retried until Redis is back (store/retry.py: at most
   `MAX_PAUSE` after it answers again) and does nothing when run a second time — the
   outcome is claimed once (events/outcomes.py), and finishing, superseding and
   handing back act only while the entry is still in the processing list.
2. A run whose ending steps gave up (Redis gone longer than `PATIENCE`), or an entry a
   start step put in the list while its reply was lost, is an entry no running task
   owns. The worker's own housekeeping finds such an entry in two scans in a row and
   ends it as a rescuer would: an event that never started goes back to the front of
   its queue, any other run gets its outcome (`lauf_verwaist`, or the answer that had
   left is kept) and its marker is freed. Gate slots of this worker that no task holds
   are freed in the same pass (`ModelGate.sweep`), and all of them when it stops.
3. After an outage a worker judges no other worker dead until it has itself been
   connected for a heartbeat TTL: every live worker has beaten again by then, so an
   outage alone never makes live turns look orphaned.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import time
import uuid
from typing import Any

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.config import Settings
from novaberg.events.activation import PauseGuard
from novaberg.events.delivery import Delivery
from novaberg.events.event_consumer import EventConsumer, raw_identity, raw_prompts
from novaberg.events.outcomes import (
    RUN_STRANDED,
    WORKER_DIED,
    WORKER_STOPPED,
    FailureRecorder,
    Outcomes,
)
from novaberg.events.prompt_consumer import PromptConsumer, block_message_ids, block_prompts
from novaberg.events.queues import Claimed, TurnQueues
from novaberg.events.ready import ReadyPairs, give_back
from novaberg.graph.contract import TurnGraphs
from novaberg.llm.gate import ModelGate
from novaberg.llm.layer import ModelLayer
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.key_layout import ensure_layout
from novaberg.store.retry import MAX_PAUSE, is_outage, until_redis_back

log = logging.getLogger(__name__)

HEARTBEAT_INTERVAL = 3.0
"""Seconds between heartbeat refreshes (and orphan scans)."""

HEARTBEAT_TTL = 15.0
"""A worker silent this long is dead; its turns are recovered."""

DRAIN_SECONDS = 30.0
"""On shutdown, running turns get this long to finish before they are failed."""

STARTUP_PATIENCE = 300.0
"""Seconds a starting worker waits for Redis before it gives up and exits (the default of
`NOVABERG_STARTUP_WAIT`, which `novaberg worker` hands in)."""

OUTAGE_RECOVERY_BOUND = MAX_PAUSE + 2 * HEARTBEAT_INTERVAL + 1.0
"""Seconds after Redis answers again by which every id of a run caught in the outage has
its outcome, beyond the time its model calls still need (see the module docstring): a
retried ending step runs within `MAX_PAUSE`, and a stranded entry is ended by the second
housekeeping scan that sees it (≤ 2 heartbeat intervals), plus a second for the steps."""


def new_worker_id() -> str:
    host = socket.gethostname().replace("@", "_").replace(":", "_")[:40]
    return f"{host}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


async def any_worker_alive(redis: aioredis.Redis) -> bool:
    """Some registered worker still beats: an utterance queued now will be taken up. (A
    caller that waits for the answer asks first instead of waiting for nothing.)"""
    for member in await redis.smembers(keys.worker_registry()):
        if await redis.exists(keys.worker_heartbeat(str(member))):
            return True
    return False


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
        failures: FailureRecorder | None = None,
        startup_patience: float = STARTUP_PATIENCE,
        consume: bool = True,
    ) -> None:
        """`poll_interval`: seconds between sweeps over every active pair (the safety net
        of the ready list, events/ready.py). `consume=False`: a worker that beats and
        recovers but starts nothing (tests)."""
        self.redis = redis
        self.graphs = graphs
        self.gate = gate
        self.worker_id = worker_id or new_worker_id()
        self.heartbeat_interval = heartbeat_interval
        self.heartbeat_ttl = heartbeat_ttl
        self.drain_seconds = drain_seconds
        self.startup_patience = startup_patience
        self.delivery = Delivery(redis)
        self.outcomes = Outcomes(redis, self.delivery, failures)
        self.queues = TurnQueues(redis, self.worker_id)
        shared: dict[str, Any] = {"delivery": self.delivery, "failures": failures}
        self.prompts = PromptConsumer(redis, graphs, gate, worker_id=self.worker_id, **shared)
        self.events = EventConsumer(redis, graphs, gate, worker_id=self.worker_id, **shared)
        self.pauses = _pause_guard(redis, graphs, self.queues, self.outcomes)
        self.events.pauses = self.pauses
        self.consume = consume
        self.ready = ReadyPairs(
            redis,
            self.worker_id,
            [self.prompts, self.events],
            **({} if poll_interval is None else {"sweep_seconds": poll_interval}),
        )
        self._stop = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._heartbeat: asyncio.Task[None] | None = None
        self._unowned: set[str] = set()
        """Own processing entries no task owned at the last scan (stranded at the next)."""
        self._connected_since = float("-inf")
        """When housekeeping last got through to Redis after failing (monotonic)."""
        self._outage = False

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        # heartbeat first, then registered: never seen dead at start; a worker started
        # while Redis restarts waits for it instead of exiting
        # (the old keys move to the tagged layout first, once per installation)
        await until_redis_back(
            lambda: ensure_layout(self.redis), "the key layout", patience=self.startup_patience
        )
        await until_redis_back(self._beat, "the first heartbeat", patience=self.startup_patience)
        self._stop.clear()
        self._heartbeat = asyncio.create_task(self._housekeeping(), name="worker-heartbeat")
        self._tasks = (
            [asyncio.create_task(self.ready.run(self._stop), name="ready-pairs")]
            if self.consume
            else []
        )
        deps = getattr(self.graphs, "deps", None)
        if deps is not None:
            from novaberg.events.reminders import reminder_loop

            reminders = reminder_loop(deps, self.graphs.agent_graph, self._stop)
            self._tasks.append(asyncio.create_task(reminders, name="reminders"))
            if deps.settings.pixie:
                from novaberg.impulses.delivery import ImpulseDelivery
                from novaberg.memory.library.indexer import LibraryLimits
                from novaberg.memory.library.watcher import watch
                from novaberg.pixie.jobs import build_scheduler, lane_periods

                periods = lane_periods(deps.settings)
                scheduler = build_scheduler(
                    deps.redis,
                    deps.pool,
                    deps.model,
                    gate=self.gate,
                    worker_id=self.worker_id,
                    character=deps.settings.character,
                    periods=periods,
                    web=deps.web,
                    library_limits=LibraryLimits.of(deps.settings),
                )
                self._tasks.append(
                    asyncio.create_task(scheduler.run(self._stop, periods), name="pixie")
                )
                library_watch = watch(
                    deps.pool, deps.redis, deps.model, LibraryLimits.of(deps.settings), self._stop
                )
                self._tasks.append(asyncio.create_task(library_watch, name="library-watch"))
                impulses = ImpulseDelivery(
                    deps, self.graphs.agent_graph, self.gate, worker_id=self.worker_id
                )
                self._tasks.append(
                    asyncio.create_task(impulses.run(self._stop), name="impulse-delivery")
                )
        log.info("worker %s started", self.worker_id)

    async def stop(self) -> None:
        """Stop taking pairs, let running turns finish (bounded), fail what is left.

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
            freed = await until_redis_back(
                lambda: self.gate.release_all(self.worker_id), "release of the gate slots"
            )
            if freed:
                log.warning(
                    "worker %s stopped holding %d gate slot(s); freed", self.worker_id, freed
                )
        finally:
            await self._stop_heartbeat()
        await until_redis_back(
            lambda: give_back(self.redis, self.worker_id), "returning taken ready hints"
        )
        await until_redis_back(self._unregister, "unregistering the worker")
        log.info("worker %s stopped", self.worker_id)

    async def _stop_heartbeat(self) -> None:
        """End the housekeeping task. Its loop also ends by itself at its next round, should
        a cancellation be lost inside a Redis call (the client turns some into errors)."""
        beat, self._heartbeat = self._heartbeat, None
        if beat is None:
            return
        beat.cancel()
        await asyncio.wait({beat}, timeout=self.heartbeat_interval + 5.0)
        if not beat.done():
            log.error("worker %s: housekeeping did not end when cancelled", self.worker_id)

    async def _unregister(self) -> None:
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.srem(keys.worker_registry(), self.worker_id)
            pipe.delete(keys.worker_heartbeat(self.worker_id))
            await pipe.execute()

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
        recovered = await self._recover_own_lists(reason=WORKER_STOPPED)
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
        """Beat and recover until `stop` ends this task, after the drain (the loop also
        ends by itself once `stop` let go of it)."""
        while self._heartbeat is not None:
            try:
                await self._beat()
                if self._outage:
                    log.warning("worker %s: Redis answers again", self.worker_id)
                    self._outage = False
                    self._connected_since = time.monotonic()
                await self.recover_own()
                if self.pauses is not None and not self._stop.is_set():
                    await self.pauses.sweep(time.time())
                if time.monotonic() - self._connected_since >= self.heartbeat_ttl:
                    await self.recover_orphans()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if not is_outage(exc):
                    log.exception("worker heartbeat/recovery failed")
                elif not self._outage:
                    self._outage = True
                    log.warning("worker %s: Redis unreachable (%s)", self.worker_id, exc)
            await asyncio.sleep(self.heartbeat_interval)

    # -- recovery ---------------------------------------------------------------------------

    async def recover_own(self) -> int:
        """End this worker's stranded entries — in its processing list, owned by no running
        task, at this scan and the one before (an entry whose start is still being
        registered is owned by the next scan) — and free its leaked gate slots. Returns
        how many entries it ended or handed back."""
        if self._stop.is_set():  # stopping: the drain ends what is left (worker_beendet)
            return 0
        owned = self.prompts.owned_entries() | self.events.owned_entries()
        unowned = {entry.raw: (pair, entry) for pair, entry in await self.queues.entries()}
        for raw in owned:
            unowned.pop(raw, None)
        stranded = [found for raw, found in unowned.items() if raw in self._unowned]
        self._unowned = set(unowned) - {entry.raw for _, entry in stranded}
        for list_pair, entry in stranded:
            await self._recover_stranded(list_pair, entry)
        await self.queues.prune()
        await self.gate.sweep(self.worker_id)
        return len(stranded)

    async def _recover_stranded(self, list_pair: Pair, entry: Claimed) -> None:
        pair = entry.pair
        if entry.kind == "event" and pair is not None:
            event_id = _event_id(str(entry.data.get("raw", "")))
            seen = event_id is not None and await until_redis_back(
                lambda: self._exists(keys.event_seen(event_id)), "event start check"
            )
            if event_id is not None and not seen:
                if await self.queues.hand_back(pair, entry):
                    log.warning(
                        "worker %s: a claimed event of %s never ran (its claim's reply was "
                        "lost); handed back to its queue",
                        self.worker_id,
                        pair,
                    )
                return
        log.warning(
            "worker %s: a %s of %s was left unended; ending it", self.worker_id, entry.kind, pair
        )
        await self._recover_entry(entry, RUN_STRANDED, list_pair)

    async def _exists(self, key: str) -> bool:
        return bool(await self.redis.exists(key))

    async def recover_orphans(self) -> int:
        """Adopt and end the turns of every registered worker whose heartbeat expired."""
        recovered = 0
        for member in await self.redis.smembers(keys.worker_registry()):
            other = str(member)
            if other == self.worker_id or await self.redis.exists(keys.worker_heartbeat(other)):
                continue
            log.warning("worker %s is dead (no heartbeat); recovering its turns", other)
            freed = await self.gate.release_all(other)
            if freed:
                log.warning("freed %d model-gate slot(s) of dead worker %s", freed, other)
            for list_pair in await self.queues.indexed(other):
                # The dead worker's list of a pair moves into ours (one slot: the pair's).
                orphan_list = keys.processing_list(list_pair, other)
                async with self.queues.claiming(list_pair):
                    while True:
                        raw = await self.redis.lmove(
                            orphan_list, self.queues.processing(list_pair), "RIGHT", "LEFT"
                        )
                        if raw is None:
                            break
                        await self._recover_entry(Claimed.parse(str(raw)), WORKER_DIED, list_pair)
                        recovered += 1
            await self.redis.delete(keys.processing_index(other))
            await give_back(self.redis, other)
            await self.redis.srem(keys.worker_registry(), other)
        return recovered

    async def _recover_own_lists(self, *, reason: str) -> int:
        count = 0
        for list_pair, entry in await self.queues.entries():
            await self._recover_entry(entry, reason, list_pair)
            count += 1
        return count

    async def _recover_entry(self, entry: Claimed, reason: str, list_pair: Pair) -> None:
        pair = entry.pair
        if pair is None:
            log.error("unreadable processing entry dropped: %s", entry.raw[:300])
            processing = self.queues.processing(list_pair)
            await until_redis_back(
                lambda: self.redis.lrem(processing, 1, entry.raw), "dropping an entry"
            )
            return
        prompts: list[str] = []
        if entry.kind == "block":
            turn_id, ids, count = str(entry.data.get("turn_id", "")), block_message_ids(entry), 0
            prompts = block_prompts(entry)
        else:
            maybe_turn, ids, count = raw_identity(str(entry.data.get("raw", "")))
            turn_id = maybe_turn or ""
            prompts = raw_prompts(str(entry.data.get("raw", "")))
        if turn_id and await self.outcomes.decided(pair.user_id, turn_id, count):
            log.warning("turn %s of %s: answer had left; its post-run was lost", turn_id, pair)
        elif turn_id:
            await self.outcomes.fail(
                pair.user_id, pair.character_id, turn_id, count, ids, reason, prompts
            )
        await self.queues.finish(pair, entry, release_marker=True)


def _pause_guard(
    redis: aioredis.Redis, graphs: TurnGraphs, queues: TurnQueues, outcomes: Outcomes
) -> PauseGuard | None:
    """Paused characters need the database their flags live in: the graphs' (absent from a
    test double without one, where no character is ever paused)."""
    deps = getattr(graphs, "deps", None)
    if deps is None:
        return None
    return PauseGuard(redis, deps.pool, queues, outcomes, deps.settings.pause_hold)


def _event_id(raw: str) -> str | None:
    """The `event_id` of a raw event, if it has one."""
    try:
        value = json.loads(raw).get("event_id")
    except (ValueError, AttributeError):
        return None
    return str(value) if value else None


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
