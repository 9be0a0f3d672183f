"""Resolve where Redis and PostgreSQL are: configured URLs, or embedded servers.

`EmbeddedServices` starts (or reuses) Valkey and PostgreSQL under
`$NOVABERG_HOME` for whichever URL is not configured, applies the schema, and
stops on exit only what it started itself.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from types import TracebackType

from novaberg.config import Settings
from novaberg.runtime.embedded_postgres import EmbeddedPostgres, shared_buffers_for
from novaberg.runtime.embedded_redis import EmbeddedRedis
from novaberg.store.migrate import Migration, migrate

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Endpoints:
    redis_url: str
    database_url: str


@dataclass
class EmbeddedServices:
    """Context manager giving the process its Redis and PostgreSQL URLs."""

    settings: Settings
    extra_migrations: list[Migration] = field(default_factory=list)
    redis: EmbeddedRedis | None = None
    postgres: EmbeddedPostgres | None = None
    endpoints: Endpoints | None = None

    def start(self) -> Endpoints:
        home = self.settings.home.expanduser()
        redis_url = self.settings.redis_url
        if not redis_url:
            self.redis = EmbeddedRedis(home / "redis")
            redis_url = self.redis.start()
        database_url = self.settings.database_url
        if not database_url:
            self.postgres = EmbeddedPostgres(
                home / "postgres",
                shared_buffers=shared_buffers_for(self.settings.postgres_shared_buffers),
            )
            database_url = self.postgres.start()
        migrate(database_url, self.settings.embed_dim, self.extra_migrations)
        self.endpoints = Endpoints(redis_url=redis_url, database_url=database_url)
        return self.endpoints

    def stop(self) -> None:
        """Stop the embedded servers this process started; reused ones keep running."""
        if self.postgres is not None and self.postgres.started_here:
            self.postgres.stop()
        if self.redis is not None and self.redis.started_here:
            self.redis.stop()

    def __enter__(self) -> Endpoints:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
