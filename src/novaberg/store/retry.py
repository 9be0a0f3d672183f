"""Riding out a Redis outage: retry an idempotent step with backoff until Redis is back.

A Redis restart (a deploy, a failover, a crash with AOF on) makes every call fail for a
few seconds. A step that *ends* something — an outcome, the release of a turn marker or
model-gate slot, the removal of a processing entry — must not be lost to that: the
caller would stay alive with the work half done and nobody would ever finish it.
`until_redis_back` repeats such a step, pausing 0.05 s, 0.1 s, … up to `MAX_PAUSE`, for
at most `PATIENCE` seconds, so the step runs at most `MAX_PAUSE` after Redis answers
again. Only steps that may run twice are retried: a reply can be lost after the server
executed the command, and then the retry executes it once more.

The bound is kept: a step still failing after `PATIENCE` raises, and the work it belongs
to stays where the owner's housekeeping finds it (events/worker.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from redis.exceptions import AskError, ClusterError, SlotNotCoveredError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger(__name__)

T = TypeVar("T")

OUTAGE_ERRORS: tuple[type[Exception], ...] = (
    RedisConnectionError,
    RedisTimeoutError,
    ClusterError,
    TryAgainError,
    AskError,
    SlotNotCoveredError,
)
"""What a Redis outage raises: refused or lost connections, no reply in time, and a
restarted server still loading its data (`BusyLoadingError` is a ConnectionError). In a
Redis Cluster also a failover that outlasted the cluster client's own retries: CLUSTERDOWN
(`ClusterError`), TRYAGAIN, MOVED/ASK (`AskError`), a slot no live node serves — none of
them ran the command."""

FIRST_PAUSE = 0.05
"""Seconds before the first retry; each further pause doubles."""

MAX_PAUSE = 1.0
"""Longest pause between two attempts: once Redis answers again, a retried step runs
within this many seconds."""

PATIENCE = 60.0
"""Seconds a step keeps retrying before it gives up and raises its last error."""


def is_outage(exc: BaseException) -> bool:
    """The error says Redis cannot be reached (rather than that a command was wrong)."""
    return isinstance(exc, OUTAGE_ERRORS)


async def until_redis_back(
    step: Callable[[], Awaitable[T]], what: str, *, patience: float = PATIENCE
) -> T:
    """Run `step` (idempotent) until it gets through a Redis outage; `what` names it in
    the log. Errors other than an outage raise at once."""
    deadline = time.monotonic() + patience
    pause = FIRST_PAUSE
    failures = 0
    started = time.monotonic()
    while True:
        try:
            result = await step()
        except OUTAGE_ERRORS as exc:
            failures += 1
            if failures == 1:
                log.warning("Redis unreachable during %s (%s); retrying", what, exc)
            if time.monotonic() + pause > deadline:
                log.error(
                    "Redis unreachable during %s for %.0f s (%d attempts); giving up: %s",
                    what,
                    time.monotonic() - started,
                    failures,
                    exc,
                )
                raise
            await asyncio.sleep(pause)
            pause = min(pause * 2, MAX_PAUSE)
            continue
        if failures:
            log.warning(
                "%s got through after %.1f s of Redis outage (%d failed attempts)",
                what,
                time.monotonic() - started,
                failures,
            )
        return result
