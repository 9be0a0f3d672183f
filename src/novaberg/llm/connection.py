"""The model connection a person sets in the page, followed by every process without a
restart (docs/behaviour/web.md#model-connection).

The connection (URL, model, key of an OpenAI-compatible server) is stored once for the
installation (`store/model_connection.py`); a counter in Redis moves on each change.
`LiveConnection` is the `ModelLayer`'s backend source: before a model call it reads the
counter (one GET) and, when it moved, loads the row and builds a new chat backend — or
goes back to the environment's when the row is gone. A turn keeps the backend of its first
call (`llm.layer.model_turn`), so a change never switches models inside a running turn.
Embeddings stay the environment's: their size is fixed by the database's vector columns.
"""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool
from redis.exceptions import RedisError

from novaberg.config import LLMBackend, Settings, SettingsError
from novaberg.llm.base import TextBackend
from novaberg.store.model_connection import StoredConnection, announced_version, read_connection

log = logging.getLogger(__name__)

ROLE_OVERRIDES = tuple(
    f"llm_{kind}_{role}" for kind in ("url", "model") for role in ("chat", "analysis", "background")
)
"""Per-role variables a page connection replaces: it names one server and one model."""


def check_url(url: str) -> str:
    """The base URL as given, if it is an http(s) URL with a host; else SettingsError."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SettingsError(f"not an http(s) URL with a host: {url!r}")
    if parts.username or parts.password:
        raise SettingsError("the URL must not carry a user or password (use the key field)")
    return url.rstrip("/")


def connection_settings(settings: Settings, url: str, model: str, api_key: str) -> Settings:
    """`settings` with the chat backend pointed at an OpenAI-compatible server."""
    update: dict[str, object] = dict.fromkeys(ROLE_OVERRIDES)
    update.update(llm=LLMBackend.OPENAI, llm_url=url, llm_model=model, llm_api_key=api_key)
    return settings.model_copy(update=update)


def build_backend(settings: Settings, url: str, model: str, api_key: str) -> TextBackend:
    from novaberg.llm.openai_compat import OpenAICompatLLM

    return OpenAICompatLLM(connection_settings(settings, url, model, api_key))


def effective_settings(settings: Settings, stored: StoredConnection | None) -> Settings:
    """The settings the chat model runs with: the environment's, or the page's connection."""
    if stored is None:
        return settings
    return connection_settings(settings, stored.url, stored.model, stored.api_key)


class LiveConnection:
    """Keeps a process's chat backend on the installation's model connection."""

    def __init__(self, settings: Settings, redis: aioredis.Redis, pool: AsyncConnectionPool):
        self.settings = settings
        self.redis = redis
        self.pool = pool
        self.current: TextBackend | None = None
        """The page's backend in use; None: the environment's."""
        self._seen: str | None = None
        self._loaded = False
        self._retired: list[TextBackend] = []

    async def text_backend(self, env: TextBackend) -> TextBackend:
        """The backend the next call uses (`env` unless the page set a connection)."""
        try:
            version = await announced_version(self.redis)
        except RedisError as exc:  # Redis blips: keep what we have
            log.debug("model connection: version not read (%s)", exc)
            return self.current or env
        if self._loaded and version == self._seen:
            return self.current or env
        try:
            stored = await read_connection(self.pool)
        except Exception as exc:  # the database is away: keep what we have, ask again later
            log.warning("model connection: not read (%s); the current one stays", exc)
            return self.current or env
        self._seen, self._loaded = version, True
        self._switch(stored)
        return self.current or env

    def _switch(self, stored: StoredConnection | None) -> None:
        if self.current is not None:
            self._retired.append(self.current)  # a running turn may still use it
        if stored is None:
            self.current = None
            log.info("model connection: the environment's")
            return
        try:
            self.current = build_backend(self.settings, stored.url, stored.model, stored.api_key)
        except SettingsError as exc:
            self.current = None
            log.error("model connection %s unusable (%s); the environment's", stored.url, exc)
            return
        log.info(
            "model connection: %s at %s (set by %s)", stored.model, stored.url, stored.changed_by
        )

    async def aclose(self) -> None:
        for backend in [*self._retired, *([self.current] if self.current else [])]:
            close = getattr(backend, "aclose", None)
            if close is not None:
                await close()
        self._retired.clear()
        self.current = None
