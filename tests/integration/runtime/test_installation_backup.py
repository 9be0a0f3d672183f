"""The README's whole-installation backup, done against the embedded servers: `pg_dump`
(bundled with the embedded PostgreSQL) plus a copy of Valkey's append-only files taken
after a rewrite, restored into a fresh home — rows, schema version and Redis keys come
back. (An RDB snapshot alone is not loaded by a server with `appendonly yes`, which the
embedded Valkey runs with: the AOF is what it reads at start.)"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import psycopg
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.runtime.embedded_postgres import EmbeddedPostgres
from novaberg.runtime.embedded_redis import EmbeddedRedis
from novaberg.runtime.services import Endpoints
from novaberg.store.migrate import migrate
from novaberg.store.redis_client import create_redis


def _pg_bin(name: str) -> str:
    from embedded_postgres._commands import POSTGRES_BIN_PATH  # type: ignore[attr-defined]

    return str(Path(POSTGRES_BIN_PATH) / name)


async def test_a_dump_and_an_rdb_snapshot_restore_a_whole_installation(
    tmp_path: Path,
    test_home: Path,
    endpoints: Endpoints,
    db: AsyncConnectionPool,
    redis: aioredis.Redis,
) -> None:
    async with db.connection() as conn:
        await conn.execute("INSERT INTO users (user_id) VALUES ('sicherung')")
        await conn.execute(
            "INSERT INTO direktiven (user_id, anweisung) VALUES ('sicherung', 'Bleib da.')"
        )
    await redis.set("nova_state:sicherung:nova", '{"stimmung": "ruhig"}')

    # back up: a custom-format dump, and Valkey's AOF, rewritten so its base holds all
    dump = tmp_path / "novaberg.pgdump"
    subprocess.run(
        [_pg_bin("pg_dump"), "-Fc", "-d", endpoints.database_url, "-f", str(dump)], check=True
    )
    await redis.bgrewriteaof()
    for _ in range(600):  # bounded guard: the rewrite of a small data set takes moments
        state = await redis.info("persistence")
        if state["aof_rewrite_in_progress"] == 0 and state["aof_rewrite_scheduled"] == 0:
            break
        await asyncio.sleep(0.05)
    copy = tmp_path / "appendonlydir"
    shutil.copytree(test_home / "redis" / "appendonlydir", copy)

    # restore into a fresh home: the AOF goes in before Valkey's first start
    home = tmp_path / "neu"
    (home / "redis").mkdir(parents=True)
    shutil.copytree(copy, home / "redis" / "appendonlydir")
    postgres = EmbeddedPostgres(home / "postgres")
    valkey = EmbeddedRedis(home / "redis")
    try:
        url = postgres.start()
        migrate(url, 384)  # the fresh home's first start (`novaberg doctor`) built a schema
        subprocess.run(
            [
                _pg_bin("pg_restore"),
                "--no-owner",
                "--clean",
                "--if-exists",
                "--exit-on-error",
                "-d",
                url,
                str(dump),
            ],
            check=True,
        )
        applied = migrate(url, 384)  # what `novaberg serve` does next: nothing left to do
        assert not applied
        with psycopg.connect(url) as conn:
            rows = conn.execute(
                "SELECT anweisung FROM direktiven WHERE user_id = 'sicherung'"
            ).fetchall()
        assert [r[0] for r in rows] == ["Bleib da."]
        client = create_redis(valkey.start())
        try:
            assert await client.get("nova_state:sicherung:nova") == '{"stimmung": "ruhig"}'
        finally:
            await client.aclose()
    finally:
        valkey.stop()
        postgres.stop()
