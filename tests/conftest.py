"""Shared fixtures: the embedded Redis and PostgreSQL, started once per test session.

Tests talk to the real servers (never mocks). Each test gets a flushed Redis
database and emptied data tables; the only model double is `scripted`.
"""

from __future__ import annotations

import logging
import os
import sys
import traceback
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from novaberg.config import Settings, load_settings
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedEmbedder, ScriptedLLM
from novaberg.runtime.embedded_cluster import EmbeddedCluster
from novaberg.runtime.services import EmbeddedServices, Endpoints
from novaberg.store import long_term_search
from novaberg.store.postgres import create_pool
from novaberg.store.redis_client import create_redis

KEEP_TABLES = {"schema_migrations", "schema_settings", "characters"}
BUILT_IN_CHARACTERS = ("nova",)
"""Characters the schema creates; any other (imported by a test) is removed per test."""


@pytest.fixture(scope="session")
def test_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("novaberg-home")


REDIS_MODE = os.environ.get("NOVABERG_TEST_REDIS", "single")
"""`cluster`: the session runs on a 3+3 Valkey cluster (runtime/embedded_cluster.py) in
cluster mode (`NOVABERG_REDIS_CLUSTER`) instead of the single embedded server — what
`make test`'s cluster step does for the event-model scenarios."""


@pytest.fixture(scope="session")
def valkey_cluster(test_home: Path) -> Iterator[EmbeddedCluster]:
    """A 3+3 Valkey cluster, started when a test (or cluster mode) first asks for it."""
    cluster = EmbeddedCluster(test_home / "valkey-cluster")
    cluster.start()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def endpoints(test_home: Path, request: pytest.FixtureRequest) -> Iterator[Endpoints]:
    if REDIS_MODE == "cluster":
        cluster: EmbeddedCluster = request.getfixturevalue("valkey_cluster")
        services = EmbeddedServices(
            load_settings(home=test_home, llm="scripted", redis_url=cluster.url, redis_cluster=True)
        )
        yield services.start()
        services.stop()
        return
    services = EmbeddedServices(load_settings(home=test_home, llm="scripted"))
    yield services.start()
    services.stop()


@pytest.fixture(scope="session")
def settings(test_home: Path, endpoints: Endpoints) -> Settings:
    return load_settings(
        home=test_home,
        redis_url=endpoints.redis_url,
        redis_cluster=endpoints.redis_cluster,
        database_url=endpoints.database_url,
        llm="scripted",
        embed_dim=384,
        pixie=False,
        follow_ups=False,  # hash-derived perceptions would plan second messages at random
    )


@pytest.fixture(scope="session")
async def pg_pool(endpoints: Endpoints) -> AsyncIterator[AsyncConnectionPool]:
    pool = await create_pool(endpoints.database_url)
    yield pool
    await pool.close()


@pytest.fixture
async def db(pg_pool: AsyncConnectionPool) -> AsyncConnectionPool:
    """The pool, with every data table emptied first."""
    async with pg_pool.connection() as conn:
        rows = await conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        tables = [
            r["tablename"] for r in await rows.fetchall() if r["tablename"] not in KEEP_TABLES
        ]
        if tables:
            await conn.execute(
                "TRUNCATE " + ", ".join(f'"{t}"' for t in tables) + " RESTART IDENTITY CASCADE"
            )
        await conn.execute(
            "DELETE FROM characters WHERE NOT character_id = ANY(%s)", (list(BUILT_IN_CHARACTERS),)
        )
    long_term_search.forget_pair_sizes()  # the sizes this process remembered described the old rows
    return pg_pool


@pytest.fixture
async def redis(endpoints: Endpoints) -> AsyncIterator[aioredis.Redis]:
    """A client on a freshly flushed database (every master's, in a cluster)."""
    client = create_redis(endpoints.redis_url, cluster=endpoints.redis_cluster)
    await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture
def scripted() -> ScriptedLLM:
    return ScriptedLLM()


@pytest.fixture
def model(scripted: ScriptedLLM) -> ModelLayer:
    return ModelLayer(scripted, ScriptedEmbedder(384))


# --- the whole run's log, checked for secrets -----------------------------------------------
# Every log record the test process creates, at every level, is looked at once it exists (the
# record factory: uvicorn's loggers do not propagate to the root logger's handlers). Every API
# token issued during the run is remembered; at the end none may occur in any record.

_issued_tokens: list[str] = []
_suspect_records: list[str] = []
_records_checked = 0


def _watch_tokens() -> None:
    from novaberg.store import users

    issue = users.new_token

    def remembered() -> str:
        token = issue()
        _issued_tokens.append(token)
        return token

    users.new_token = remembered


def _watch_records() -> None:
    inner = logging.getLogRecordFactory()

    def watching(*args: Any, **kwargs: Any) -> logging.LogRecord:
        global _records_checked
        record = inner(*args, **kwargs)
        _records_checked += 1
        try:
            text = record.getMessage()
        except Exception:
            text = str(record.msg)
        if record.exc_info and record.exc_info[1] is not None:
            text += "\n" + (
                record.exc_text or "".join(traceback.format_exception(*record.exc_info))
            )
        text += record.stack_info or ""
        if "nvb_" in text:  # every issued token starts so (store/users.py TOKEN_PREFIX)
            _suspect_records.append(f"{record.levelname} {record.name}: {text}")
        return record

    logging.setLogRecordFactory(watching)


def pytest_configure(config: pytest.Config) -> None:
    _watch_tokens()
    _watch_records()
    logging.getLogger().setLevel(logging.DEBUG)  # every level is created, so every level is read


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    leaks = [r for r in _suspect_records if any(t in r for t in _issued_tokens)]
    if leaks:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        for leak in leaks[:20]:
            print(f"\nSECRET IN LOG: {leak[:2000]}", file=sys.stderr)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    leaks = sum(1 for r in _suspect_records if any(t in r for t in _issued_tokens))
    terminalreporter.write_line(
        f"log secrets: {_records_checked} log records (all levels) checked for "
        f"{len(_issued_tokens)} issued tokens: {leaks} leaked"
    )


def png_with_text(chunks: dict[str, bytes]) -> bytes:
    """A valid 1×1 PNG carrying the given tEXt chunks (keyword → text)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    texts = b"".join(
        chunk(b"tEXt", key.encode("latin-1") + b"\x00" + value) for key, value in chunks.items()
    )
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + texts
        + chunk(b"IDAT", pixels)
        + chunk(b"IEND", b"")
    )


@pytest.fixture
def card_png():  # type: ignore[no-untyped-def]
    """Build a card PNG: `card_png(card_dict, keyword="chara")` → bytes (base64 JSON chunk)."""
    import base64
    import json

    def make(card: dict, keyword: str = "chara", **more: dict) -> bytes:  # type: ignore[type-arg]
        chunks = {keyword: base64.b64encode(json.dumps(card).encode())}
        chunks.update({k: base64.b64encode(json.dumps(v).encode()) for k, v in more.items()})
        return png_with_text(chunks)

    return make


@pytest.fixture
def text_png():  # type: ignore[no-untyped-def]
    """`text_png({keyword: bytes})` → a PNG with those tEXt chunks (no card necessarily)."""
    return png_with_text
