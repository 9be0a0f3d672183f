"""Keeping the library current: a pass per root under a lease, the Pixie job that passes
over every root, and the watcher that passes over a root as soon as its files change
(docs/behaviour/library.md#watching).

The watcher (`watchfiles`, inotify where available) waits for changes below the approved
roots, lets them settle (`DEBOUNCE_MS`) and runs an incremental pass over each root that
changed: a changed file is read again, a deleted one forgotten, the rest only stat'ed. It
re-reads the approved roots every `ROOTS_RECHECK` seconds, so a folder approved or revoked
meanwhile is watched or dropped. A pass holds the root's lease (`keys.library_pass`), so
the job and the watchers of several workers never index one root twice at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Final

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.base import LLM
from novaberg.memory.library.indexer import (
    IndexReport,
    LibraryLimits,
    ProgressCallback,
    RootMissing,
    index_root,
)
from novaberg.memory.library.paths import inside
from novaberg.store import keys, library
from novaberg.store.lease import Leases
from novaberg.store.library import Root

log = logging.getLogger(__name__)

PASS_LEASE_SECONDS: Final = 120.0
"""TTL of a root's pass lease, renewed every third while the pass runs."""

DEBOUNCE_MS: Final = 1_600
"""Changes are gathered this long before a pass (a saving editor writes several times)."""

ROOTS_RECHECK: Final = 30.0
"""Seconds between two reads of the approved roots while watching."""


async def locked_pass(
    pool: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: LLM,
    root: Root,
    limits: LibraryLimits,
    *,
    progress: ProgressCallback | None = None,
) -> IndexReport | None:
    """An incremental pass over `root` under its lease; None while another pass holds it.
    `RootMissing` when the folder is gone (its index stays until the root is revoked)."""
    leases = Leases(redis)
    key = keys.library_pass(root.id)
    token = await leases.take(key, PASS_LEASE_SECONDS)
    if token is None:
        return None
    try:
        async with leases.held(key, token, PASS_LEASE_SECONDS):
            return await index_root(pool, model, root, limits, progress=progress)
    finally:
        await leases.release(key, token)


async def _quiet_pass(
    pool: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: LLM,
    root: Root,
    limits: LibraryLimits,
) -> IndexReport | None:
    """`locked_pass` for the background: a missing folder is logged, not raised."""
    try:
        return await locked_pass(pool, redis, model, root, limits)
    except RootMissing as exc:
        log.warning("library: %s", exc)
        return None


async def approved_roots(pool: AsyncConnectionPool) -> list[Root]:
    async with pool.connection() as conn:
        return await library.roots(conn)


def roots_touched(roots: Iterable[Root], changed: Iterable[str]) -> list[Root]:
    """The roots below which a changed path lies (pure)."""
    paths = [Path(path) for path in changed]
    return [root for root in roots if any(inside(Path(root.path), path) for path in paths)]


async def watch(
    pool: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: LLM,
    limits: LibraryLimits,
    stop: asyncio.Event,
    *,
    recheck: float = ROOTS_RECHECK,
) -> None:
    """Watch the approved roots until `stop` is set (the module docstring)."""
    from watchfiles import awatch

    while not stop.is_set():
        roots = [root for root in await approved_roots(pool) if Path(root.path).is_dir()]
        restart = asyncio.Event()
        checker = asyncio.create_task(_recheck(pool, roots, stop, restart, recheck))
        try:
            if not roots:
                await restart.wait()
                continue
            async for changes in awatch(
                *(root.path for root in roots),
                stop_event=restart,
                debounce=DEBOUNCE_MS,
                recursive=True,
            ):
                for root in roots_touched(roots, (path for _, path in changes)):
                    try:
                        await _quiet_pass(pool, redis, model, root, limits)
                    except Exception:  # one root's failure must not end the watching
                        log.exception("library: a pass over %s failed", root.path)
        finally:
            checker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await checker


async def _recheck(
    pool: AsyncConnectionPool,
    roots: list[Root],
    stop: asyncio.Event,
    restart: asyncio.Event,
    every: float,
) -> None:
    """Set `restart` when `stop` is set or the approved roots changed."""
    watched = {(root.id, root.path) for root in roots}
    while True:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), every)
        if stop.is_set():
            restart.set()
            return
        try:
            now = {(r.id, r.path) for r in await approved_roots(pool) if Path(r.path).is_dir()}
        except Exception:  # the database is away: keep watching what we watch
            log.warning("library: the approved roots could not be read; checked again later")
            continue
        if now != watched:
            restart.set()
            return


async def pass_all(
    pool: AsyncConnectionPool, redis: aioredis.Redis, model: LLM, limits: LibraryLimits
) -> dict[str, int]:
    """A pass over every approved root (the Pixie job): counts for the job's log."""
    totals = {"wurzeln": 0, "indiziert": 0, "entfernt": 0, "fehler": 0, "belegt": 0}
    for root in await approved_roots(pool):
        report = await _quiet_pass(pool, redis, model, root, limits)
        if report is None:
            totals["belegt"] += 1
            continue
        totals["wurzeln"] += 1
        totals["indiziert"] += report.indexed
        totals["entfernt"] += report.removed
        totals["fehler"] += len(report.failed)
    return totals
