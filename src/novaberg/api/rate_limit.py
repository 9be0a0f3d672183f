"""A token bucket per API token for the intake: one user's flood is refused with 429 before
it reaches the queue, and never costs another user anything.

In-process (per API process), by design: the check runs on the intake's hot path, where a
Redis round trip per request would cost more than the intake itself (bench/intake.py). With
several API processes behind a balancer a token may get up to that many times the rate.
"""

from __future__ import annotations

import math
import time

MAX_TRACKED = 100_000
"""Buckets kept; beyond that the least recently used is dropped (it starts full again)."""


class RateLimiter:
    """`rate` requests per second sustained, up to `burst` at once, per key."""

    def __init__(self, rate: float, burst: int, *, size: int = MAX_TRACKED) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.size = size
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, stamped at)

    def retry_after(self, key: str, now: float | None = None) -> float:
        """Take one request from `key`'s bucket: 0.0 if allowed, else the seconds until the
        next request would be (nothing is taken then)."""
        if self.rate <= 0:
            return 0.0
        now = time.monotonic() if now is None else now
        entry = self._buckets.pop(key, None)
        if entry is None:
            tokens = self.burst
        else:
            tokens = min(self.burst, entry[0] + (now - entry[1]) * self.rate)
        if tokens >= 1.0:
            self._buckets[key] = (tokens - 1.0, now)  # re-inserted: most recently used last
            if len(self._buckets) > self.size:
                del self._buckets[next(iter(self._buckets))]
            return 0.0
        self._buckets[key] = (tokens, now)
        return (1.0 - tokens) / self.rate


def retry_after_header(seconds: float) -> str:
    """`Retry-After` in whole seconds (HTTP allows no fractions), at least 1."""
    return str(max(1, math.ceil(seconds)))
