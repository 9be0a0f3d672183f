"""Start-up waits for PostgreSQL (NOVABERG_STARTUP_WAIT): a worker started while its
PostgreSQL is down waits, logging, and starts once PostgreSQL is back; past the bound
the wait gives up with the connection's own error."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from novaberg.runtime.embedded_postgres import EmbeddedPostgres
from novaberg.runtime.services import Endpoints
from novaberg.store.postgres_wait import wait_for_postgres

SRC = Path(__file__).resolve().parents[3] / "src"


@pytest.fixture
def stopped_postgres(tmp_path: Path) -> Iterator[tuple[EmbeddedPostgres, str]]:
    """A second embedded PostgreSQL, started once (for its URL) and stopped again."""
    server = EmbeddedPostgres(tmp_path / "pg-down")
    url = server.start()
    server.stop()
    try:
        yield server, url
    finally:
        server.stop()


def _wait_for_text(path: Path, text: str, proc: subprocess.Popen[bytes], bound: float) -> str:
    """The log once it holds `text` (bounded guard; the process must stay alive)."""
    deadline = time.monotonic() + bound
    while True:
        log = path.read_text(encoding="utf-8", errors="replace")
        if text in log:
            return log
        assert proc.poll() is None, f"the worker exited ({proc.returncode}):\n{log[-3000:]}"
        assert time.monotonic() < deadline, f"no {text!r} in the log:\n{log[-3000:]}"
        time.sleep(0.2)


def test_wait_gives_up_after_the_bound_with_the_connection_error(
    stopped_postgres: tuple[EmbeddedPostgres, str],
) -> None:
    _, url = stopped_postgres
    with pytest.raises(psycopg.OperationalError):
        wait_for_postgres(url, 0.5)


def test_a_worker_started_while_postgres_is_down_waits_and_starts(
    tmp_path: Path, endpoints: Endpoints, stopped_postgres: tuple[EmbeddedPostgres, str]
) -> None:
    server, url = stopped_postgres
    log_path = tmp_path / "worker.log"
    env = {
        **os.environ,
        "PYTHONPATH": str(SRC),
        "NOVABERG_HOME": str(tmp_path / "home"),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_DATABASE_URL": url,
        "NOVABERG_LLM": "scripted",
        "NOVABERG_EMBED_DIM": "384",
        "NOVABERG_PIXIE": "false",
        "NOVABERG_FOLLOW_UPS": "false",
        "NOVABERG_STARTUP_WAIT": "240",
        "NOVABERG_LOG_LEVEL": "INFO",
    }
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "novaberg.cli", "worker"],
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_for_text(log_path, "waiting for PostgreSQL", proc, 90)
        assert server.start() == url  # same socket directory: the worker's URL again
        _wait_for_text(log_path, "PostgreSQL answers after", proc, 120)
        log = _wait_for_text(log_path, "novaberg.events.worker: worker ", proc, 120)
        assert "giving up" not in log
        assert proc.poll() is None
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
