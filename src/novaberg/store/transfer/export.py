"""Export: read a person's rows and Redis state into an `Archive`.

Rows are read as `row_to_json`, so every column type has PostgreSQL's own JSON form
(vectors and tsvectors as their text, timestamps in ISO 8601, bytea as `\\x…` hex) and
a restore hands them back through `json_populate_recordset` — no type is converted in
Python. Generated columns (the `tsv` of full-text search) are left out; the target
computes them. Avatars leave the characters' rows and become image files.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import redis.asyncio as aioredis
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from novaberg.store.transfer.archive_format import Archive
from novaberg.store.transfer.redis_state import export_keys
from novaberg.store.transfer.tables import TABLES, TableSpec

Progress = Callable[[str], None]

_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}


def _quiet(_: str) -> None:
    return None


async def generated_columns(conn: AsyncConnection[Any], table: str) -> set[str]:
    rows = await conn.execute(
        "SELECT column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = %s AND is_generated = 'ALWAYS'",
        (table,),
    )
    return {str(r["column_name"]) for r in await rows.fetchall()}


def selection(spec: TableSpec, character_id: str | None) -> str:
    """The WHERE clause of a person's rows (of one character, if named)."""
    if character_id is not None and spec.character is not None:
        return f"({spec.owner}) AND ({spec.character})"
    return spec.owner


async def _rows(
    conn: AsyncConnection[Any], spec: TableSpec, user_id: str, character_id: str | None
) -> list[dict[str, Any]]:
    exists = await conn.execute("SELECT to_regclass(%s) IS NOT NULL AS ok", (spec.name,))
    found = await exists.fetchone()
    if not found or not found["ok"]:  # an agent's table in an installation without it
        return []
    order = " ORDER BY id" if spec.has_id else ""
    result = await conn.execute(
        f"SELECT row_to_json(t)::text AS row FROM {spec.name} t"
        f" WHERE {selection(spec, character_id)}{order}",
        {"u": user_id, "c": character_id},
    )
    skip = await generated_columns(conn, spec.name)
    rows = []
    for record in await result.fetchall():
        row = json.loads(record["row"])
        for column in skip:
            row.pop(column, None)
        rows.append(row)
    return rows


def _avatar_files(rows: list[dict[str, Any]], files: dict[str, bytes]) -> None:
    """Move each character's avatar out of its row into `avatars/<id>.<ext>`."""
    for row in rows:
        data = row.pop("avatar", None)
        if not data:
            continue
        ext = _EXTENSIONS.get(str(row.get("avatar_typ") or ""), "bin")
        path = f"avatars/{row['character_id']}.{ext}"
        files[path] = bytes.fromhex(str(data).removeprefix("\\x"))
        row["avatar_datei"] = path


async def export_person(
    pool: AsyncConnectionPool,
    redis: aioredis.Redis,
    user_id: str,
    *,
    character_id: str | None = None,
    embed_dim: int,
    progress: Progress = _quiet,
) -> Archive:
    """Everything of `user_id` that travels (docs/export.md), as one archive.

    Read in one REPEATABLE READ transaction: the tables agree with each other even while
    the person keeps chatting (Redis is read after, and may be a turn newer)."""
    archive = Archive(
        user_id=user_id,
        character_id=character_id,
        embed_dim=embed_dim,
        exported_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    async with pool.connection() as conn:
        await conn.set_autocommit(False)
        try:
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            for number, spec in enumerate(TABLES, 1):
                rows = await _rows(conn, spec, user_id, character_id)
                if spec.name == "characters":
                    _avatar_files(rows, archive.files)
                archive.tables[spec.name] = rows
                progress(f"export {number}/{len(TABLES)}: {spec.name} — {len(rows)} rows")
            await conn.rollback()
        finally:
            await conn.set_autocommit(True)
    archive.redis = await export_keys(redis, user_id, character_id)
    progress(f"export: {len(archive.redis)} Redis keys")
    return archive
