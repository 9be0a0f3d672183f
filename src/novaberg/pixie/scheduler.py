"""The Pixie heartbeat: periodic background jobs by priority, one winner per cycle
(docs/behaviour/pixie.md#scheduler).

Every job has a base priority and an interval. Its schedule (`pixie:schedule:{name}`:
priority, interval, next_run, description, versuche) lives in Redis so every worker sees
the same plan. A cycle (`tick`) of a lane:

1. does nothing while `pixie:paused` exists (the pause switch);
2. takes the lane lock `pixie:running:{lane}` (SET NX, 600 s), so only one worker runs a
   lane's job at a time;
3. ranks the due jobs (a queue-fed job only when its queue holds work) by base priority + min(2.0, 0.5 × hours overdue) (ageing) and runs
   only the winner;
4. on success sets next_run = now + interval; on failure retries after `retry_delay`, and
   after `max_attempts` failures in a row records the job in the failed list
   `pixie:gescheitert` and waits a full interval;
5. writes one `hintergrund_log` row per run.

Jobs that call a model take the model gate with background priority themselves
(`JobContext.model_slot()`), so a waiting user turn always gets the next slot.
Time comes from an injected clock; tests never sleep.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final

import redis.asyncio as aioredis
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.gate import ModelGate, Priority
from novaberg.store import keys
from novaberg.store.lease import Leases

log = logging.getLogger(__name__)

AGEING_PER_HOUR: Final = 0.5
AGEING_CAP: Final = 2.0
"""A due job gains 0.5 priority per hour overdue, at most 2.0."""

LANE_LOCK_SECONDS: Final = 600
"""`pixie:running:{lane}` lives at most 10 minutes after its worker died mid-job; while
the job runs, however long, its worker keeps extending it."""

MAX_ATTEMPTS: Final = 3
"""Failures in a row before a job lands in the failed list."""

RETRY_DELAY: Final = 60.0
"""Seconds before a failed job is tried again."""

FAILED_KEEP: Final = 200
"""Entries kept in `pixie:gescheitert`."""

LANE_CPU: Final = "cpu"
LANE_LLM: Final = "llm"
LANE_PERIOD: Final[Mapping[str, float]] = {LANE_CPU: 30.0, LANE_LLM: 120.0}
"""Heartbeat per lane: cpu every 30 s, llm every 120 s."""

BACKGROUND_GATE_WAIT: Final = 30.0
"""How long a background job waits for a model slot before the run counts as failed."""


@dataclass
class JobContext:
    """What a job may use. `clock` returns epoch seconds."""

    redis: aioredis.Redis
    pool: AsyncConnectionPool
    model: Any
    clock: Callable[[], float] = time.time
    gate: ModelGate | None = None
    gate_wait: float = BACKGROUND_GATE_WAIT
    worker_id: str | None = None
    """Names this worker's gate slots, so they are freed if the worker dies."""
    services: dict[str, Any] = field(default_factory=dict)

    def model_slot(self) -> contextlib.AbstractAsyncContextManager[Any]:
        """A model-gate slot with background priority (no-op without a gate)."""
        if self.gate is None:
            return _nothing()
        return self.gate.slot(
            Priority.BACKGROUND, wait_seconds=self.gate_wait, holder=self.worker_id
        )


@contextlib.asynccontextmanager
async def _nothing() -> AsyncIterator[None]:
    yield None


JobFn = Callable[[JobContext], Awaitable[Mapping[str, Any] | None]]


@dataclass(frozen=True)
class Job:
    """A periodic background job. `run` returns a detail dict for the log (or None)."""

    name: str
    priority: float
    interval: float
    run: JobFn
    lane: str = LANE_CPU
    description: str = ""
    max_attempts: int = MAX_ATTEMPTS
    ready: Callable[[JobContext], Awaitable[bool]] | None = None
    """For jobs fed by a queue: False = nothing to do, so the job does not compete (a
    frequent job with an empty queue would otherwise win every cycle)."""


@dataclass(frozen=True)
class Candidate:
    job: Job
    effective_priority: float
    overdue_hours: float


@dataclass(frozen=True)
class TickResult:
    """What one cycle did: status ran|failed|idle|paused|busy, and the winner if any."""

    status: str
    job: str | None = None
    priority: float | None = None
    attempts: int = 0
    detail: Mapping[str, Any] | None = None
    error: str | None = None


def effective_priority(base: float, overdue_seconds: float) -> float:
    """base + min(2.0, 0.5 × hours overdue)."""
    hours = max(0.0, overdue_seconds) / 3600.0
    return base + min(AGEING_CAP, AGEING_PER_HOUR * hours)


async def pause(redis: aioredis.Redis) -> None:
    await redis.set(keys.pixie_paused(), "1")


async def resume(redis: aioredis.Redis) -> None:
    await redis.delete(keys.pixie_paused())


class Scheduler:
    """Runs registered jobs; call `register()` once, then `tick()` per cycle or `run()`."""

    def __init__(
        self,
        context: JobContext,
        jobs: Sequence[Job],
        *,
        retry_delay: float = RETRY_DELAY,
    ) -> None:
        names = [job.name for job in jobs]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate job names in {names}")
        self.context = context
        self.redis = context.redis
        self.jobs = {job.name: job for job in jobs}
        self.retry_delay = retry_delay
        self.leases = Leases(self.redis)

    @property
    def clock(self) -> Callable[[], float]:
        return self.context.clock

    async def register(self) -> None:
        """Write each job's schedule; a job never scheduled before is due now."""
        now = self.clock()
        for job in self.jobs.values():
            key = keys.pixie_schedule(job.name)
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hsetnx(key, "next_run", repr(now))
                pipe.hsetnx(key, "versuche", 0)
                pipe.hset(
                    key,
                    mapping={
                        "priority": repr(job.priority),
                        "interval": repr(job.interval),
                        "description": job.description,
                        "lane": job.lane,
                    },
                )
                await pipe.execute()

    async def paused(self) -> bool:
        return bool(await self.redis.exists(keys.pixie_paused()))

    async def candidates(self, lane: str | None = None) -> list[Candidate]:
        """Due jobs of a lane (all lanes when None), best first."""
        now = self.clock()
        jobs = [j for j in self.jobs.values() if lane is None or j.lane == lane]
        if not jobs:
            return []
        async with self.redis.pipeline(transaction=False) as pipe:
            for job in jobs:
                pipe.hget(keys.pixie_schedule(job.name), "next_run")
            next_runs = await pipe.execute()
        due: list[Candidate] = []
        for job, raw in zip(jobs, next_runs, strict=True):
            next_run = float(raw) if raw is not None else now
            if next_run > now:
                continue
            if job.ready is not None and not await job.ready(self.context):
                continue
            overdue = now - next_run
            due.append(Candidate(job, effective_priority(job.priority, overdue), overdue / 3600))
        due.sort(key=lambda c: (-c.effective_priority, c.job.name))
        return due

    async def tick(self, lane: str | None = None) -> TickResult:
        """One cycle: run the best due job of the lane (or of all jobs when None)."""
        if await self.paused():
            return TickResult("paused")
        lock = keys.pixie_running(lane or "alle")
        token = await self.leases.take(lock, LANE_LOCK_SECONDS)
        if token is None:
            return TickResult("busy")
        try:
            due = await self.candidates(lane)
            if not due:
                return TickResult("idle")
            async with self.leases.held(lock, token, LANE_LOCK_SECONDS):
                return await self._run(due[0])
        finally:
            await self.leases.release(lock, token)

    async def run_now(self, name: str) -> TickResult:
        """Run one job at once, due or not (the operator's `novaberg pixie run`); it is
        recorded and rescheduled like any run."""
        job = self.jobs.get(name)
        if job is None:
            raise KeyError(f"unknown job {name!r}; known: {sorted(self.jobs)}")
        return await self._run(Candidate(job, job.priority, 0.0))

    async def _run(self, winner: Candidate) -> TickResult:
        job = winner.job
        key = keys.pixie_schedule(job.name)
        started = self.clock()
        perf = time.perf_counter()
        detail: Mapping[str, Any] | None = None
        error: str | None = None
        try:
            detail = await job.run(self.context) or {}
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            log.error("pixie job %s failed: %s", job.name, error)
        duration_ms = (time.perf_counter() - perf) * 1000
        now = self.clock()
        if error is None:
            await self.redis.hset(
                key,
                mapping={
                    "next_run": repr(now + job.interval),
                    "versuche": 0,
                    "letzter_lauf": repr(now),
                },
            )
            await self._log(job, "ok", duration_ms, started, dict(detail or {}))
            return TickResult("ran", job.name, winner.effective_priority, 0, detail)

        attempts = int(await self.redis.hincrby(key, "versuche", 1))
        if attempts >= job.max_attempts:
            record = {"job": job.name, "fehler": error, "versuche": attempts, "zeit": now}
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.lpush(keys.pixie_failed(), json.dumps(record, ensure_ascii=False))
                pipe.ltrim(keys.pixie_failed(), 0, FAILED_KEEP - 1)
                pipe.hset(key, mapping={"next_run": repr(now + job.interval), "versuche": 0})
                await pipe.execute()
            result = "gescheitert"
        else:
            await self.redis.hset(key, "next_run", repr(now + min(self.retry_delay, job.interval)))
            result = "fehler"
        await self._log(job, result, duration_ms, started, {"fehler": error, "versuch": attempts})
        return TickResult("failed", job.name, winner.effective_priority, attempts, None, error)

    async def _log(
        self, job: Job, result: str, duration_ms: float, started: float, detail: dict[str, Any]
    ) -> None:
        try:
            async with self.context.pool.connection() as conn:
                await conn.execute(
                    "INSERT INTO hintergrund_log (erstellt_am, job, user_id, ergebnis, dauer_ms,"
                    " detail) VALUES (%s, %s, %s, %s, %s, %s)",
                    (
                        datetime.fromtimestamp(started, UTC),
                        job.name,
                        detail.pop("user_id", None),
                        result,
                        duration_ms,
                        Jsonb(
                            detail, dumps=lambda o: json.dumps(o, ensure_ascii=False, default=str)
                        ),
                    ),
                )
        except Exception as exc:  # the run happened; a lost log row is reported, not fatal
            log.error("pixie: hintergrund_log row for %s not written: %s", job.name, exc)

    async def run(self, stop: asyncio.Event, periods: Mapping[str, float] = LANE_PERIOD) -> None:
        """Heartbeat until `stop` is set: each lane ticks on its own period."""
        await self.register()
        lanes = sorted({job.lane for job in self.jobs.values()})

        async def lane_loop(lane: str) -> None:
            period = periods.get(lane, LANE_PERIOD[LANE_CPU])
            while not stop.is_set():
                try:
                    await self.tick(lane)
                except Exception:  # Redis hiccup: log and keep the heartbeat alive
                    log.exception("pixie lane %s: tick failed", lane)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=period)

        await asyncio.gather(*(lane_loop(lane) for lane in lanes))
