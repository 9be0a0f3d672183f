"""An index pass started now and left to run: a folder approved in chat is read at once,
while the answer that confirms it goes out (docs/behaviour/library.md#roots).

Why a task of the running process and not the watcher or the Pixie job: the watcher passes
over a root only when one of its files changes, the job only every 15 minutes and only
with Pixie on — a freshly approved folder would stay unread. Why not a queue: the pass is
incremental and resumable (indexer.py), so a pass cut short by the process stopping loses
nothing; the job, the watcher or `novaberg library reindex` finish it later. The pass holds
the root's lease (`watcher.locked_pass`): while another pass holds it, this one does
nothing.
"""

from __future__ import annotations

import asyncio
import logging

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.base import LLM
from novaberg.memory.library.indexer import IndexReport, LibraryLimits, RootMissing
from novaberg.memory.library.watcher import locked_pass
from novaberg.store.library import Root

log = logging.getLogger(__name__)

_RUNNING: set[asyncio.Task[IndexReport | None]] = set()
"""Strong references: the event loop keeps only weak ones to a task nobody awaits."""


async def _pass(
    pool: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: LLM,
    root: Root,
    limits: LibraryLimits,
) -> IndexReport | None:
    try:
        report = await locked_pass(pool, redis, model, root, limits)
    except RootMissing as exc:
        log.warning("library: %s", exc)
        return None
    except Exception:  # nobody awaits this task: a failure must reach the log
        log.exception("library: the first pass over %s failed", root.path)
        return None
    if report is None:
        log.info("library: %s is being indexed by another pass", root.path)
    else:
        log.info("library: first pass over %s: %d files indexed", root.path, report.indexed)
    return report


def start_pass(
    pool: AsyncConnectionPool,
    redis: aioredis.Redis,
    model: LLM,
    root: Root,
    limits: LibraryLimits,
) -> asyncio.Task[IndexReport | None]:
    """Start an incremental pass over `root` in the running loop and return at once."""
    task = asyncio.create_task(
        _pass(pool, redis, model, root, limits), name=f"library-pass:{root.id}"
    )
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)
    return task
