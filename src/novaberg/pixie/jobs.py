"""The background jobs Pixie runs (docs/behaviour/pixie.md#jobs).

| job | priority / interval | lane | model |
|---|---|---|---|
| synapsen_promotion | 0.9 / 300 s | cpu | embedding, per job |
| synapsen_decay | 0.2 / daily | cpu | embedding of archived turns stored without vectors |
| ziel_decay | 0.2 / daily | cpu | none |
| charakter | 0.3 / 600 s | llm | structured, per dirty pair |
| bibliothek | 0.4 / 900 s | cpu | embedding of changed library files |

plus the impulse jobs of impulses/jobs.py (nachfragen, recherche, wissensluecken,
wissen_rueckweg, wiedervorlage, schatten_decay).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.config import Settings
from novaberg.impulses.jobs import impulse_jobs
from novaberg.llm.gate import ModelGate
from novaberg.memory.archive import fill_missing_vectors, purge_expired
from novaberg.memory.jobs.character import run_distillation
from novaberg.memory.jobs.promotion import run_promotions
from novaberg.memory.library.indexer import LibraryLimits
from novaberg.memory.library.watcher import approved_roots, pass_all
from novaberg.memory.long_term.decay import decay
from novaberg.memory.long_term.promotion import Promotion
from novaberg.pixie.scheduler import LANE_CPU, LANE_LLM, Job, JobContext, Scheduler
from novaberg.store import goals
from novaberg.store.short_term import ShortTermStore
from novaberg.websearch import WebSearchProvider

DAY: int = 86_400


def _short_term(ctx: JobContext) -> ShortTermStore:
    store = ctx.services.get("short_term")
    if store is None:
        store = ctx.services["short_term"] = ShortTermStore(ctx.redis)
    return store


def _promotion(ctx: JobContext) -> Promotion:
    promotion = ctx.services.get("promotion")
    if promotion is None:
        promotion = ctx.services["promotion"] = Promotion(
            ctx.pool, ctx.redis, ctx.model, short_term=_short_term(ctx), clock=ctx.clock
        )
    return promotion


async def promotion_job(ctx: JobContext) -> Mapping[str, Any]:
    counts = await run_promotions(ctx.redis, _promotion(ctx), slot=ctx.model_slot)
    if counts.get("fehler"):
        raise RuntimeError(f"{counts['fehler']} promotion(s) failed: {counts}")
    return counts


async def decay_job(ctx: JobContext) -> Mapping[str, Any]:
    """Long-term decay, the yearly purge of the pipeline log and of the archive (pinned
    turns stay), and vectors for archived turns whose embedding had failed."""
    outcome = await decay(ctx.pool, ctx.clock())
    return {
        "aktualisiert": outcome.updated,
        "deaktiviert": outcome.deactivated,
        "log_geloescht": outcome.log_rows_deleted,
        "archiv_geloescht": await purge_expired(ctx.pool, ctx.clock()),
        "archiv_vektoren": await fill_missing_vectors(ctx.pool, ctx.model),
    }


async def goal_decay_job(ctx: JobContext) -> Mapping[str, Any]:
    async with ctx.pool.connection() as conn:
        updated, deactivated = await goals.decay_all(conn, datetime.fromtimestamp(ctx.clock(), UTC))
    return {"aktualisiert": updated, "deaktiviert": deactivated}


async def character_job(ctx: JobContext) -> Mapping[str, Any]:
    return await run_distillation(
        ctx.redis,
        ctx.pool,
        ctx.model,
        now=ctx.clock(),
        short_term=_short_term(ctx),
        slot=ctx.model_slot,
    )


async def library_job(ctx: JobContext) -> Mapping[str, Any]:
    """An incremental pass over every approved library folder: what the watcher missed
    (a worker that was down, a network drive without change events)."""
    limits = ctx.services.get("library_limits") or LibraryLimits.default()
    return await pass_all(ctx.pool, ctx.redis, ctx.model, limits)


async def library_ready(ctx: JobContext) -> bool:
    """Only with an approved folder does the library job compete."""
    return bool(await approved_roots(ctx.pool))


def default_jobs(periods: Mapping[str, float] | None = None) -> list[Job]:
    """Every job; the queue-fed impulse jobs take their lane's heartbeat as interval."""
    lanes = {LANE_CPU: 30.0, LANE_LLM: 120.0, **(periods or {})}
    return [
        Job(
            "synapsen_promotion",
            0.9,
            300,
            promotion_job,
            LANE_CPU,
            "short-term entries past the gate become long-term nodes and edges",
        ),
        Job(
            "synapsen_decay",
            0.2,
            DAY,
            decay_job,
            LANE_CPU,
            "long-term node decay, log and archive purge",
        ),
        Job("ziel_decay", 0.2, DAY, goal_decay_job, LANE_CPU, "motivation decay of goals"),
        Job("charakter", 0.3, 600, character_job, LANE_LLM, "distil the five profile layers"),
        Job(
            "bibliothek",
            0.4,
            900,
            library_job,
            LANE_CPU,
            "index changed files of the approved library folders",
            ready=library_ready,
        ),
        *impulse_jobs(lanes[LANE_CPU], lanes[LANE_LLM]),
    ]


def lane_periods(settings: Settings) -> dict[str, float]:
    """Heartbeat per lane from NOVABERG_PIXIE_LLM_INTERVAL / NOVABERG_PIXIE_CPU_INTERVAL."""
    return {LANE_LLM: settings.pixie_llm_interval, LANE_CPU: settings.pixie_cpu_interval}


def build_scheduler(
    redis: aioredis.Redis,
    pool: AsyncConnectionPool,
    model: Any,
    *,
    gate: ModelGate | None = None,
    clock: Callable[[], float] = time.time,
    worker_id: str | None = None,
    character: str = "nova",
    periods: Mapping[str, float] | None = None,
    web: WebSearchProvider | None = None,
    library_limits: LibraryLimits | None = None,
) -> Scheduler:
    """The Pixie scheduler with its jobs. Start it (when `settings.pixie` is on) with
    `asyncio.create_task(scheduler.run(stop_event))`; set the event to stop it. `web` is
    the search provider research uses (None: memory and own knowledge)."""
    context = JobContext(redis, pool, model, clock=clock, gate=gate, worker_id=worker_id)
    context.services["character"] = character
    if web is not None:
        context.services["web"] = web
    if library_limits is not None:
        context.services["library_limits"] = library_limits
    return Scheduler(context, default_jobs(periods))
