"""Round-trip counters for tests that hold a store call to a number of round trips: each
round trip costs this CPU-bound server more than the work it carries."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
import redis.asyncio.connection as redis_connection
from psycopg_pool import AsyncConnectionPool


@dataclass
class PgTrips:
    """Pool checkouts and waits for PostgreSQL's answer since the fixture started."""

    checkouts: int = 0
    trips: list[str] = field(default_factory=list)


@pytest.fixture
def pg_trips(db: AsyncConnectionPool, monkeypatch: pytest.MonkeyPatch) -> Iterator[PgTrips]:
    """Count `db`'s checkouts and every wait for the server: a pipeline's end or a read
    inside it, or a statement outside a pipeline (the pool's autocommit connections
    send nothing for the commit at a checkout's end)."""
    counted = PgTrips()
    connection = db.connection
    wait = psycopg.AsyncConnection.wait

    def checkout(*args: Any, **kwargs: Any) -> Any:
        counted.checkouts += 1
        return connection(*args, **kwargs)

    async def waiting(self: psycopg.AsyncConnection, gen: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(gen, "__name__", "")
        if name in ("_exit_gen", "_fetch_gen", "_sync_gen") or (
            self._pipeline is None and name not in ("_enter_gen", "_commit_gen")
        ):
            counted.trips.append(name)
        return await wait(self, gen, *args, **kwargs)

    monkeypatch.setattr(db, "connection", checkout)
    monkeypatch.setattr(psycopg.AsyncConnection, "wait", waiting)
    yield counted


@pytest.fixture
def redis_trips(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[bytes]]:
    """Every packet redis-py sends (one per command, one per pipeline): its first bytes."""
    sent: list[bytes] = []
    send = redis_connection.AbstractConnection.send_packed_command

    async def sending(self: Any, command: Any, check_health: bool = True) -> None:
        first = command if isinstance(command, bytes) else b"".join(command)
        sent.append(bytes(first[:60]))
        await send(self, command, check_health)

    monkeypatch.setattr(redis_connection.AbstractConnection, "send_packed_command", sending)
    yield sent
