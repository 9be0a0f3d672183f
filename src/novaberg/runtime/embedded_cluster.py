"""A local Valkey cluster of 3 masters and 3 replicas from the bundled `valkey-server`.

What tests (`NOVABERG_TEST_REDIS=cluster`) and `bench/chaos.py --cluster` run Novaberg's
cluster mode against. It lives in the package, next to the embedded single server, because
both the tests and the benches need it and neither may import the other; it is not wired
into `novaberg serve` (a production cluster spans machines and is run by its operator).

Each node gets its own directory under `data_dir` (config, AOF, `nodes.conf`, pid file, log)
and a free TCP port on 127.0.0.1 (a cluster's nodes announce host:port to clients, unix
sockets cannot). `cluster-node-timeout` is short (1.5 s) so a killed master's replica takes
over within a few seconds. `valkey-cli --cluster create … --cluster-replicas 1` joins them;
`start` returns once every node reports `cluster_state:ok`.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis

from novaberg.runtime.embedded_redis import valkey_binary
from novaberg.runtime.pids import pid_alive

MASTERS = 3
REPLICAS_PER_MASTER = 1
NODE_TIMEOUT_MS = 1500
"""How long a master may be unreachable before its replica is promoted. Short, for tests:
failover then takes ~2–4 s (the timeout plus an election)."""
START_TIMEOUT = 60.0
STOP_TIMEOUT = 10.0
HOST = "127.0.0.1"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@dataclass
class ClusterNode:
    """One `valkey-server` of the cluster."""

    data_dir: Path
    port: int
    bus_port: int

    @property
    def pid_file(self) -> Path:
        return self.data_dir / "valkey.pid"

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    def pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None

    def alive(self) -> bool:
        pid = self.pid()
        return pid is not None and pid_alive(pid)

    def client(self) -> redis.Redis:
        return redis.Redis(host=HOST, port=self.port, socket_timeout=2, decode_responses=True)

    def info(self, section: str) -> dict[str, str]:
        """`CLUSTER INFO` or `INFO replication` as a dict; empty when the node is down."""
        command = ("CLUSTER", "INFO") if section == "cluster" else ("INFO", section)
        with self.client() as client:
            try:
                raw = client.execute_command(*command)
            except redis.RedisError:
                return {}
        if isinstance(raw, dict):
            return {str(k): str(v) for k, v in raw.items()}
        pairs = (line.split(":", 1) for line in str(raw).splitlines() if ":" in line)
        return {k.strip(): v.strip() for k, v in pairs}

    def role(self) -> str:
        return self.info("replication").get("role", "")

    def config_text(self) -> str:
        lines = {
            "daemonize": "yes",
            "bind": HOST,
            "port": str(self.port),
            "cluster-port": str(self.bus_port),  # the default port+10000 may not exist
            "dir": str(self.data_dir),
            "pidfile": str(self.pid_file),
            "logfile": str(self.data_dir / "valkey.log"),
            "cluster-enabled": "yes",
            "cluster-config-file": "nodes.conf",
            "cluster-node-timeout": str(NODE_TIMEOUT_MS),
            # A lost master's replica may take over even if it lagged a little; a replica
            # that never reached its master stays a replica (the default validity factor 10
            # would refuse it after 15 s of lost contact, which a test's kill never reaches).
            "cluster-replica-validity-factor": "0",
            "appendonly": "yes",
            "appendfsync": "everysec",
            "save": "60 1 300 10",
            "dbfilename": "dump.rdb",
        }
        return "".join(f"{key} {value}\n" for key, value in lines.items())

    def launch(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        config = self.data_dir / "valkey.conf"
        config.write_text(self.config_text())
        subprocess.run(
            [str(valkey_binary()), str(config)],
            check=True,
            capture_output=True,
            timeout=START_TIMEOUT,
        )


@dataclass
class EmbeddedCluster:
    """3 masters + 3 replicas under one directory; `start()` returns a node's URL (any node
    names the whole cluster to a cluster client)."""

    data_dir: Path
    nodes: list[ClusterNode] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"redis://{self.nodes[0].address}"

    def start(self) -> str:
        size = MASTERS * (1 + REPLICAS_PER_MASTER)
        self.nodes = [
            ClusterNode(self.data_dir / f"node-{i}", _free_port(), _free_port())
            for i in range(size)
        ]
        try:
            for node in self.nodes:
                node.launch()
            self._wait(lambda: all(self._pings(n) for n in self.nodes), "nodes answering")
        except Exception:
            self.stop()
            raise
        created = subprocess.run(
            [
                str(valkey_binary().with_name("valkey-cli")),
                "--cluster",
                "create",
                *(node.address for node in self.nodes),
                "--cluster-replicas",
                str(REPLICAS_PER_MASTER),
                "--cluster-yes",
            ],
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT,
        )
        if created.returncode != 0:
            self.stop()
            raise RuntimeError(f"valkey-cli --cluster create failed: {created.stdout[-2000:]}")
        self.wait_ok()
        return self.url

    def wait_ok(self, timeout: float = START_TIMEOUT) -> None:
        """Until every live node says `cluster_state:ok` and there are `MASTERS` masters
        with every slot served (after start, and after a failover)."""
        self._wait(self.healthy, "cluster_state:ok", timeout)

    def healthy(self) -> bool:
        live = [n for n in self.nodes if n.alive()]
        if not live:
            return False
        if len(self.masters()) != MASTERS:
            return False  # a dead master's replica not promoted yet, or a node rejoining
        states = [n.info("cluster") for n in live]
        if not all(
            s.get("cluster_state") == "ok" and s.get("cluster_slots_ok") == "16384" for s in states
        ):
            return False
        # every replica in sync with its master (a write's WAIT 1 answers at once)
        replication = [n.info("replication") for n in live]
        replicas = [r for r in replication if r.get("role") == "slave"]
        return len(replicas) == len(live) - MASTERS and all(
            r.get("master_link_status") == "up" for r in replicas
        )

    def masters(self) -> list[ClusterNode]:
        return [n for n in self.nodes if n.alive() and n.role() == "master"]

    def kill(self, node: ClusterNode) -> int | None:
        """SIGKILL one node (no AOF rewrite, no goodbye to the others): a crash."""
        pid = node.pid()
        if pid is not None and pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + STOP_TIMEOUT
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.02)
        return pid

    def restart(self, node: ClusterNode) -> None:
        """Start a killed node again from its own directory; it rejoins (as a replica of
        whoever took over its slots)."""
        subprocess.run(
            [str(valkey_binary()), str(node.data_dir / "valkey.conf")],
            check=True,
            capture_output=True,
            timeout=START_TIMEOUT,
        )

    def stop(self) -> None:
        for node in self.nodes:
            pid = node.pid()
            if pid is not None and pid_alive(pid):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        for node in self.nodes:
            pid = node.pid()
            while pid is not None and pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if pid is not None and pid_alive(pid):
                os.kill(pid, signal.SIGKILL)

    @staticmethod
    def _pings(node: ClusterNode) -> bool:
        with node.client() as client:
            try:
                return bool(client.ping())
            except redis.RedisError:
                return False

    @staticmethod
    def _wait(ready: Callable[[], bool], what: str, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if time.monotonic() > deadline:
                raise RuntimeError(f"embedded cluster: no {what} within {timeout:.0f} s")
            time.sleep(0.1)
