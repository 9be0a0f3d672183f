"""Fixtures for the event-model tests: the real app under uvicorn in the test's loop,
real Redis/PostgreSQL, the real GraphRuntime; the only double is the scripted model."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
import uvicorn
from event_helpers import WAIT, Running, Socket, free_port
from psycopg_pool import AsyncConnectionPool
from websockets.asyncio.client import connect

from novaberg.api.app import create_app
from novaberg.api.context import AppContext
from novaberg.config import Settings
from novaberg.events.worker import Worker
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.gate import ModelGate
from novaberg.llm.layer import ModelLayer
from novaberg.runtime.services import Endpoints
from novaberg.store.users import issue_token
from slot_check import SlotWatch, watching_transactions

SRC = Path(__file__).resolve().parents[3] / "src"


@pytest.fixture
async def slot_watch(endpoints: Endpoints, redis: aioredis.Redis) -> AsyncIterator[SlotWatch]:
    """Watch every script and transaction of the test for keys in more than one cluster
    slot (tests/slot_check.py); the test fails at its end if one did."""
    watch = SlotWatch(endpoints.redis_url, redis)
    await watch.start()
    with watching_transactions(watch):
        yield watch
    await watch.stop()
    assert watch.violations() == [], "cross-slot in a Redis Cluster:\n" + "\n".join(
        watch.violations()
    )


@pytest.fixture(autouse=True)
def _slot_check_all(request: pytest.FixtureRequest) -> None:
    """`NOVABERG_SLOT_CHECK=1`: every event scenario runs under `slot_watch`."""
    if os.environ.get("NOVABERG_SLOT_CHECK") == "1":
        request.getfixturevalue("slot_watch")


@pytest.fixture
def gate(redis: aioredis.Redis) -> ModelGate:
    return ModelGate(redis, "scripted-events", 2, wait_seconds=10, lease_seconds=120)


@pytest.fixture
async def runtime(
    settings: Settings, redis: aioredis.Redis, db: AsyncConnectionPool, model: ModelLayer
) -> AsyncIterator[GraphRuntime]:
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model)
    yield GraphRuntime(deps)
    assert deps.log is not None
    await deps.log.close()


@pytest.fixture
async def server(
    settings: Settings,
    endpoints: Endpoints,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    gate: ModelGate,
) -> AsyncIterator[Running]:
    """The real app (no consumers: tests start workers themselves) on a free port."""
    ctx = AppContext(settings, endpoints, redis, db, model, gate)
    app = create_app(context=ctx)
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    srv = uvicorn.Server(config)
    task = asyncio.create_task(srv.serve())
    for _ in range(500):
        if srv.started:
            break
        await asyncio.sleep(0.01)
    assert srv.started, "uvicorn did not start"
    yield Running(f"http://127.0.0.1:{port}", app)
    srv.should_exit = True
    await asyncio.wait_for(task, 15)


@pytest.fixture
async def http(server: Running) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=WAIT) as client:
        yield client


@pytest.fixture
def token(db: AsyncConnectionPool) -> Callable[[str], Awaitable[str]]:
    async def make(user_id: str) -> str:
        return (await issue_token(db, user_id, "test")).token

    return make


@pytest.fixture
async def workers(
    redis: aioredis.Redis, runtime: GraphRuntime, gate: ModelGate
) -> AsyncIterator[Callable[..., Awaitable[Worker]]]:
    """Start workers on demand (fast heartbeats; no fast sweep: pairs reach them through
    the ready list); all are stopped at the end."""
    started: list[Worker] = []

    async def start(**kwargs: Any) -> Worker:
        options: dict[str, Any] = {
            "heartbeat_interval": 0.2,
            "heartbeat_ttl": 1.0,
            "drain_seconds": 5.0,
        }
        options.update(kwargs)
        worker = Worker(redis, runtime, gate, **options)
        await worker.start()
        started.append(worker)
        return worker

    yield start
    for worker in started:
        await worker.stop()


@pytest.fixture
async def sockets(server: Running) -> AsyncIterator[Callable[..., Awaitable[Socket]]]:
    opened: list[Socket] = []

    async def open_socket(token: str, **params: Any) -> Socket:
        query = "&".join(f"{k}={v}" for k, v in {"token": token, **params}.items())
        sock = Socket(await connect(f"{server.ws_url}?{query}"))
        await sock.wait_typ("verbindung")
        opened.append(sock)
        return sock

    yield open_socket
    for sock in opened:
        await sock.close()


@pytest.fixture
def api_process(tmp_path: Path, endpoints: Endpoints) -> Iterator[Callable[..., tuple[str, Path]]]:
    """Start `novaberg api` as shipped (its own process, logging and uvicorn setup) on the
    test's Redis and PostgreSQL; returns (url, file holding its whole output)."""
    started: list[subprocess.Popen[bytes]] = []

    def start(**overrides: str) -> tuple[str, Path]:
        port = free_port()
        out = tmp_path / f"api-{port}.log"
        env = {
            **os.environ,
            "PYTHONPATH": str(SRC),
            "NOVABERG_HOME": str(tmp_path),
            "NOVABERG_REDIS_URL": endpoints.redis_url,
            "NOVABERG_DATABASE_URL": endpoints.database_url,
            "NOVABERG_LLM": "scripted",
            "NOVABERG_EMBED_DIM": "384",
            "NOVABERG_PIXIE": "false",
            "NOVABERG_FOLLOW_UPS": "false",
            "NOVABERG_PORT": str(port),
            **overrides,
        }
        with out.open("wb") as sink:
            proc = subprocess.Popen(
                [sys.executable, "-m", "novaberg.cli", "api"], env=env, stdout=sink, stderr=sink
            )
        started.append(proc)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, out.read_text(errors="replace")[-3000:]
            try:
                if httpx.get(f"{url}/web/style.css", timeout=1).status_code == 200:
                    return url, out
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "novaberg api did not come up"
            time.sleep(0.2)

    yield start
    for proc in started:
        proc.send_signal(signal.SIGTERM)
    for proc in started:
        try:
            proc.wait(40)
        except subprocess.TimeoutExpired:
            proc.kill()
