"""A Novaberg cluster for benchmarks: the project's embedded Valkey and PostgreSQL in a
fresh home, and `novaberg api` / `novaberg worker` processes on them.

The bench owns the servers (it starts them through `novaberg.runtime`, then hands their
URLs to every process), so it can stop and restart them under running processes —
which a process that started them itself would not allow. Each process logs to
`<home>/logs/<name>.log`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis

from novaberg.pair import Pair
from novaberg.runtime.embedded_postgres import EmbeddedPostgres
from novaberg.runtime.embedded_redis import EmbeddedRedis
from novaberg.store import keys
from novaberg.store.migrate import migrate

SRC = Path(__file__).resolve().parent.parent / "src"
EMBED_DIM = 384
START_TIMEOUT = 120.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Proc:
    """One `novaberg` process."""

    name: str
    popen: subprocess.Popen[bytes]
    started_at: float
    worker_id: str | None = None

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None


@dataclass
class Cluster:
    home: Path
    rules: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    redis_server: EmbeddedRedis = field(init=False)
    postgres: EmbeddedPostgres = field(init=False)
    redis_url: str = ""
    database_url: str = ""
    port: int = field(default_factory=free_port)
    api: Proc | None = None
    workers: list[Proc] = field(default_factory=list)
    procs: list[Proc] = field(default_factory=list)
    """Every process started, for the report."""
    killed: set[int] = field(default_factory=set)
    """Pids the bench killed (not crashes)."""
    _count: int = 0

    def __post_init__(self) -> None:
        self.redis_server = EmbeddedRedis(self.home / "redis")
        self.postgres = EmbeddedPostgres(self.home / "postgres", shared_buffers="128MB")
        (self.home / "logs").mkdir(parents=True, exist_ok=True)

    # -- servers ------------------------------------------------------------------------------

    def start_servers(self) -> None:
        self.redis_url = self.redis_server.start()
        self.database_url = self.postgres.start()
        migrate(self.database_url, EMBED_DIM)

    def stop_servers(self) -> None:
        try:
            self.postgres.stop()
        finally:
            self.redis_server.stop()

    def postgres_pid(self) -> int | None:
        try:
            return int((self.postgres.data_dir / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def redis(self) -> redis.Redis:
        return redis.Redis.from_url(self.redis_url, decode_responses=True, socket_timeout=5)

    # -- processes ----------------------------------------------------------------------------

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "PYTHONPATH": str(SRC),
            "NOVABERG_HOME": str(self.home),
            "NOVABERG_REDIS_URL": self.redis_url,
            "NOVABERG_DATABASE_URL": self.database_url,
            "NOVABERG_LLM": "scripted",
            "NOVABERG_SCRIPT": str(self.rules),
            "NOVABERG_EMBED_DIM": str(EMBED_DIM),
            "NOVABERG_PIXIE": "false",
            "NOVABERG_PORT": str(self.port),
            "NOVABERG_LOG_LEVEL": "WARNING",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            **self.extra_env,
        }

    def _spawn(self, command: str) -> Proc:
        self._count += 1
        name = f"{command}-{self._count}"
        log = open(self.home / "logs" / f"{name}.log", "wb")  # noqa: SIM115 (the child owns it)
        popen = subprocess.Popen(
            [sys.executable, "-m", "novaberg.cli", command],
            env=self.env(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        proc = Proc(name, popen, time.monotonic())
        self.procs.append(proc)
        return proc

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start_api(self) -> Proc:
        self.api = self._spawn("api")
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if not self.api.alive():
                raise RuntimeError(f"novaberg api exited; see {self.home}/logs/{self.api.name}.log")
            try:
                if httpx.get(f"{self.url}/web/style.css", timeout=1).status_code == 200:
                    return self.api
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("novaberg api did not come up")
            time.sleep(0.1)

    def start_worker(self) -> Proc:
        proc = self._spawn("worker")
        self.workers.append(proc)
        return proc

    def wait_registered(self, procs: list[Proc], timeout: float = START_TIMEOUT) -> None:
        """Until every process in `procs` has registered its worker id."""
        deadline = time.monotonic() + timeout
        client = self.redis()
        try:
            while any(p.worker_id is None for p in procs):
                try:
                    members = [str(m) for m in client.smembers(keys.worker_registry())]
                except redis.RedisError:  # Redis is being restarted: ask again
                    members = []
                for proc in procs:
                    if not proc.alive():
                        raise RuntimeError(f"{proc.name} exited; see its log in {self.home}/logs")
                    proc.worker_id = proc.worker_id or next(
                        (m for m in members if f"-{proc.pid}-" in m), None
                    )
                if time.monotonic() > deadline:
                    raise RuntimeError(f"workers did not register within {timeout:.0f} s")
                time.sleep(0.1)
        finally:
            client.close()

    def live_workers(self) -> list[Proc]:
        return [p for p in self.workers if p.alive()]

    def kill(self, proc: Proc) -> None:
        self.killed.add(proc.pid)
        proc.popen.send_signal(signal.SIGKILL)
        proc.popen.wait(30)

    def stop_processes(self) -> None:
        procs = [p for p in [self.api, *self.workers] if p is not None and p.alive()]
        for proc in procs:
            self.killed.add(proc.pid)
            proc.popen.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.popen.wait(60)
            except subprocess.TimeoutExpired:
                proc.popen.kill()
                proc.popen.wait(10)
        self.workers = []
        self.api = None


def in_flight(client: redis.Redis, worker_ids: list[str] | None = None) -> list[str]:
    """The nachrichten_ids of every run now in the processing lists of `worker_ids`
    (default: every registered worker)."""
    workers = worker_ids or [str(m) for m in client.smembers(keys.worker_registry())]
    ids: list[str] = []
    for worker in workers:  # a worker's lists are per pair, named by its index
        for member in client.smembers(keys.processing_index(worker)):
            user_id, _, character_id = str(member).partition(":")
            lst = keys.processing_list(Pair(user_id, character_id), worker)
            for raw in client.lrange(lst, 0, -1):
                ids += entry_ids(str(raw))
    return ids


def entry_ids(raw: str) -> list[str]:
    """The ids a processing entry stands for (a block: its carried ids and its items)."""
    try:
        entry: dict[str, Any] = json.loads(raw)
        if entry.get("art") == "block":
            items = [json.loads(i)["nachrichten_id"] for i in entry.get("items", [])]
            return [str(i) for i in [*entry.get("uebertragen", []), *items]]
        event = json.loads(entry.get("raw", "{}"))
        return [str(i) for i in (event.get("payload") or {}).get("nachrichten_ids") or []]
    except (ValueError, KeyError, TypeError, AttributeError):
        return []


def tree_cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) of `pid` and its children (PostgreSQL's backends), read
    from /proc; None if the process is gone."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    found = False
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        own, parent = int(entry.name), int(fields[1])
        if own == pid:  # with its children that have exited (cutime, cstime)
            found = True
            total += sum(int(v) for v in fields[11:15]) / ticks
        elif parent == pid:
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total if found else None
