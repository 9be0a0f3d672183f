"""Apply `store/migrations/*.sql`, the impulse feature's `impulses/migrations/*.sql` (a
feature keeps its schema beside its code) and agents' `schema.sql`, in order, once each.

Applied files are recorded in `schema_migrations`; a cluster-wide advisory lock
keeps an API and a worker starting together from racing. The embedding
dimension is fixed at first migration and recorded, so a later mismatch is
reported instead of silently storing vectors of the wrong size.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import psycopg

log = logging.getLogger(__name__)

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
FEATURE_MIGRATION_DIRS = (Path(__file__).parent.parent / "impulses" / "migrations",)
"""Schema files of features that live in a package of their own; their names number them
into the one sequence with MIGRATIONS_DIR's (a file is recorded by its name, so it may move
between folders without running again)."""
AGENTS_DIR = Path(__file__).parent.parent / "agents"
"""Agent folders; each one's `schema.sql` is applied as `agent_<folder>_schema.sql` (the
name `agents/registry.py:agent_migrations` gives it too), after the numbered files, by
every process that migrates — read by path, as the layers keep `store` below `agents`."""
ADVISORY_LOCK_ID = 7_120_304_511
DIM_PLACEHOLDER = "{{EMBED_DIM}}"


class SchemaDimensionMismatch(RuntimeError):
    """The database was created for another embedding dimension."""


@dataclass(frozen=True)
class Migration:
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()[:16]


def core_migrations() -> list[Migration]:
    files = [
        p for folder in (MIGRATIONS_DIR, *FEATURE_MIGRATION_DIRS) for p in folder.glob("*.sql")
    ]
    numbered = [Migration(p.name, p.read_text()) for p in sorted(files, key=lambda p: p.name)]
    agents = [
        Migration(f"agent_{p.parent.name}_schema.sql", p.read_text())
        for p in sorted(AGENTS_DIR.glob("*/schema.sql"))
    ]
    return numbered + agents


def migrate(database_url: str, embed_dim: int, extra: Iterable[Migration] = ()) -> list[str]:
    """Apply pending migrations; return the names applied in this call."""
    applied_now: list[str] = []
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (ADVISORY_LOCK_ID,))
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " name TEXT PRIMARY KEY, checksum TEXT NOT NULL,"
                " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
            )
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_settings ("
                " key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            _check_dimension(conn, embed_dim)
            done = {row[0] for row in conn.execute("SELECT name FROM schema_migrations")}
            for migration in [*core_migrations(), *extra]:
                if migration.name in done:
                    continue  # also the second of two with one name (an agent's schema)
                done.add(migration.name)
                sql = migration.sql.replace(DIM_PLACEHOLDER, str(int(embed_dim)))
                with conn.transaction():
                    conn.execute(sql)  # type: ignore[arg-type]
                    conn.execute(
                        "INSERT INTO schema_migrations (name, checksum) VALUES (%s, %s)",
                        (migration.name, migration.checksum),
                    )
                applied_now.append(migration.name)
                log.info("applied migration %s", migration.name)
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (ADVISORY_LOCK_ID,))
    return applied_now


def schema_dimension(conn: psycopg.Connection) -> int | None:
    row = conn.execute("SELECT value FROM schema_settings WHERE key = 'embed_dim'").fetchone()
    return int(row[0]) if row else None


def _check_dimension(conn: psycopg.Connection, embed_dim: int) -> None:
    stored = schema_dimension(conn)
    if stored is None:
        conn.execute(
            "INSERT INTO schema_settings (key, value) VALUES ('embed_dim', %s)", (str(embed_dim),)
        )
    elif stored != embed_dim:
        raise SchemaDimensionMismatch(
            f"the database stores {stored}-dimensional vectors but NOVABERG_EMBED_DIM is "
            f"{embed_dim}; use a fresh NOVABERG_HOME/database or set NOVABERG_EMBED_DIM={stored}"
        )
