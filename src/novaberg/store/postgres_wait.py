"""Waiting at start-up until PostgreSQL answers, as a starting worker waits for Redis.

A process started while PostgreSQL restarts (a deploy, a crash, a replacement worker
brought up by a supervisor at the same moment) would otherwise fail its first connection
and exit — and a supervisor restarting it in a loop only adds noise. So a starting
process tries to connect, pausing 0.1 s, 0.2 s, … up to `MAX_PAUSE`, for at most
`NOVABERG_STARTUP_WAIT` seconds, and logs once when it starts waiting, every
`LOG_EVERY` seconds while it waits and once when PostgreSQL answers. Past the bound it
raises the last error: a wrong URL or password is not hidden forever.
"""

from __future__ import annotations

import logging
import time
from typing import Final

import psycopg

log = logging.getLogger(__name__)

FIRST_PAUSE: Final = 0.1
MAX_PAUSE: Final = 1.0
"""Once PostgreSQL accepts connections, the waiting process notices within this long."""
LOG_EVERY: Final = 10.0
"""Seconds between two "still waiting" lines."""
CONNECT_TIMEOUT: Final = 5
"""Seconds one connection attempt may take (a host that swallows packets)."""


def wait_for_postgres(database_url: str, patience: float) -> None:
    """Return once a connection to `database_url` succeeds; raise its last error after
    `patience` seconds (0 = one attempt)."""
    started = time.monotonic()
    deadline = started + patience
    pause = FIRST_PAUSE
    failures = 0
    next_log = 0.0
    while True:
        try:
            with psycopg.connect(database_url, connect_timeout=CONNECT_TIMEOUT) as conn:
                conn.execute("SELECT 1")
        except psycopg.OperationalError as exc:
            failures += 1
            now = time.monotonic()
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if now + pause > deadline:
                log.error(
                    "PostgreSQL did not answer within %.0f s (%d attempts); giving up: %s",
                    now - started,
                    failures,
                    reason,
                )
                raise
            if now >= next_log:
                log.warning(
                    "waiting for PostgreSQL (%.0f s of at most %.0f s): %s",
                    now - started,
                    patience,
                    reason,
                )
                next_log = now + LOG_EVERY
            time.sleep(pause)
            pause = min(pause * 2, MAX_PAUSE)
            continue
        if failures:
            log.warning(
                "PostgreSQL answers after %.1f s of waiting (%d failed attempts)",
                time.monotonic() - started,
                failures,
            )
        return
