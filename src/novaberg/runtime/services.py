"""Resolve where Redis and PostgreSQL are: configured URLs, or embedded servers.

`EmbeddedServices` starts (or reuses) Valkey and PostgreSQL under `$NOVABERG_HOME` for
whichever URL is not configured and applies the schema. Processes sharing a home share
the servers: the last one to stop stops them (`service_users`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from novaberg.config import Settings
from novaberg.runtime.embedded_postgres import EmbeddedPostgres, shared_buffers_for
from novaberg.runtime.embedded_redis import EmbeddedRedis
from novaberg.runtime.service_users import ServiceUsers
from novaberg.store.migrate import Migration, migrate
from novaberg.store.postgres_wait import wait_for_postgres

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Endpoints:
    redis_url: str
    database_url: str
    redis_cluster: bool = False
    """`redis_url` names one node of a Redis Cluster (`NOVABERG_REDIS_CLUSTER`)."""


@dataclass
class EmbeddedServices:
    """Context manager giving the process its Redis and PostgreSQL URLs."""

    settings: Settings
    extra_migrations: list[Migration] = field(default_factory=list)
    redis: EmbeddedRedis | None = None
    postgres: EmbeddedPostgres | None = None
    endpoints: Endpoints | None = None
    _registration: Path | None = field(default=None, repr=False)

    def start(self) -> Endpoints:
        home = self.settings.home.expanduser()
        if self.settings.redis_url and self.settings.database_url:
            return self._start(home)
        users = ServiceUsers(home)
        with users.locked():
            try:
                endpoints = self._start(home)
            except BaseException:
                if users.others() == 0:  # never leave servers running for nobody
                    self._stop_servers()
                raise
            started = any(s is not None and s.started_here for s in (self.redis, self.postgres))
            self._registration = users.join(fresh=started)
        return endpoints

    def _start(self, home: Path) -> Endpoints:
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
        # a process started while PostgreSQL restarts waits for it instead of exiting
        wait_for_postgres(database_url, self.settings.startup_wait)
        migrate(database_url, self.settings.embed_dim, self.extra_migrations)
        self.endpoints = Endpoints(
            redis_url=redis_url,
            database_url=database_url,
            # the embedded server is a single Redis whatever the setting says
            redis_cluster=self.settings.redis_cluster and self.redis is None,
        )
        return self.endpoints

    def stop(self) -> None:
        """Leave the embedded servers; stop them if no other process uses them."""
        if self.redis is None and self.postgres is None:
            return
        users = ServiceUsers(self.settings.home.expanduser())
        with users.locked():
            others = users.leave(self._registration)
            self._registration = None
            if others == 0:
                self._stop_servers()
            else:
                log.info("embedded servers keep running for %d other process(es)", others)

    def _stop_servers(self) -> None:
        try:
            if self.postgres is not None and self.postgres.is_running():
                self.postgres.stop()
        finally:
            if self.redis is not None and self.redis.is_running():
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
