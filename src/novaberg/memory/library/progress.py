"""A pass over a library root started by the person (the page, the API): it runs in the
background, so the request that approved the folder answers at once, and it reports how far
it got into Redis (store/library_progress.py), so every API process can show the progress
line while it runs and the outcome for a while after (docs/behaviour/library.md#on-the-page).

The root's lease (`keys.library_pass`, as the watcher's and the job's passes) is taken
before the request answers: a pass already running is said at once (`PassBusy`), and the
progress the request marks belongs to the pass that will really run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.base import LLM
from novaberg.memory.library.indexer import IndexReport, LibraryLimits, RootMissing, index_root
from novaberg.memory.library.watcher import PASS_LEASE_SECONDS
from novaberg.store import keys
from novaberg.store.lease import Leases
from novaberg.store.library import Root
from novaberg.store.library_progress import (
    PROGRESS_DONE,
    PROGRESS_FAILED,
    PROGRESS_RUNNING,
    Progress,
    write_progress,
)

log = logging.getLogger(__name__)

_running: set[asyncio.Task[IndexReport | None]] = set()
"""The passes this process runs (a task nobody holds could be collected mid-pass)."""


class PassBusy(Exception):
    """Another pass over the root is running (a worker's watcher, the job, another request)."""


async def start_pass(
    pool: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: LLM,
    root: Root,
    limits: LibraryLimits,
) -> asyncio.Task[IndexReport | None]:
    """Take `root`'s lease, mark its progress as running and start the pass in a task of
    this process; `PassBusy` while another pass holds the lease."""
    leases = Leases(redis)
    key = keys.library_pass(root.id)
    token = await leases.take(key, PASS_LEASE_SECONDS)
    if token is None:
        raise PassBusy(f"{root.path}: a pass over this folder is running already")
    try:
        await write_progress(redis, root.id, Progress(PROGRESS_RUNNING))
    except BaseException:
        await leases.release(key, token)
        raise
    task = asyncio.create_task(
        _run(pool, redis, model, root, limits, leases, token), name=f"library-pass:{root.id}"
    )
    _running.add(task)
    task.add_done_callback(_running.discard)
    return task


async def stop_passes() -> None:
    """Cancel the passes of this process (its shutdown); each releases its lease, and the
    files it finished stay indexed (a pass is resumable)."""
    tasks = list(_running)
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task


async def _run(
    pool: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: LLM,
    root: Root,
    limits: LibraryLimits,
    leases: Leases,
    token: str,
) -> IndexReport | None:
    key = keys.library_pass(root.id)

    async def report(done: int, total: int) -> None:
        await _quietly(redis, root.id, Progress(PROGRESS_RUNNING, done, total))

    try:
        async with leases.held(key, token, PASS_LEASE_SECONDS):
            result = await index_root(pool, model, root, limits, progress=report)
    except RootMissing as exc:
        log.warning("library: %s", exc)
        await _quietly(redis, root.id, Progress(PROGRESS_FAILED, message=str(exc)))
        return None
    except Exception as exc:  # the request has answered; the progress line tells the person
        log.exception("library: a pass over %s failed", root.path)
        await _quietly(redis, root.id, Progress(PROGRESS_FAILED, message=type(exc).__name__))
        return None
    finally:
        await leases.release(key, token)
    await _quietly(redis, root.id, Progress(PROGRESS_DONE, result.files, result.files))
    return result


async def _quietly(redis: aioredis.Redis, root_id: int, progress: Progress) -> None:
    """Write the progress; Redis away costs the line on the page, never the pass."""
    try:
        await write_progress(redis, root_id, progress)
    except Exception as exc:
        log.warning("library: progress of root %s not written (%s)", root_id, exc)
