"""Restore: write an archive's rows and Redis state into this installation.

Idempotent: rows keep their primary keys (serial ids included) and are inserted with
`ON CONFLICT DO NOTHING`, Redis keys are written only when absent — restoring the same
archive twice adds nothing. Before writing anything, every exported id is checked
against rows of *other* people: an id taken by someone else refuses the whole restore
with a sentence (a fresh installation, or the same person's own data, never collides).
All rows are written in one transaction: a refused or failed restore leaves nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from novaberg.store.transfer.archive_format import Archive, ArchiveRefused
from novaberg.store.transfer.export import Progress, _quiet, generated_columns
from novaberg.store.transfer.redis_state import restore_keys
from novaberg.store.transfer.tables import TABLES, TableSpec

CHUNK = 500
"""Rows per INSERT: large enough to be quick, small enough for one statement's memory."""


@dataclass
class RestoreReport:
    user_id: str
    added: dict[str, int] = field(default_factory=dict)
    present: dict[str, int] = field(default_factory=dict)
    redis_added: int = 0
    redis_present: int = 0

    @property
    def total_added(self) -> int:
        return sum(self.added.values()) + self.redis_added


def _kzg_rename(value: Any, old: str, new: str) -> Any:
    """A short-term key of `old` as the same key of `new`, in the layout it was written in:
    tagged `kzg:{u}:…`, or untagged `kzg:u:…` in rows from before the hash tags (a row is
    copied as it was; only the user in it changes)."""
    if not isinstance(value, str):
        return value
    for prefix, renamed in ((f"kzg:{{{old}}}:", f"kzg:{{{new}}}:"), (f"kzg:{old}:", f"kzg:{new}:")):
        if value.startswith(prefix):
            return renamed + value[len(prefix) :]
    return value


def _rows_for(spec: TableSpec, archive: Archive, new_user: str) -> list[dict[str, Any]]:
    rows = []
    for original in archive.tables.get(spec.name, []):
        row = dict(original)
        for column in spec.user_columns:
            if column in row:
                row[column] = new_user
        for column in spec.kzg_columns:
            row[column] = _kzg_rename(row.get(column), archive.user_id, new_user)
        path = row.pop("avatar_datei", None)
        if path is not None:
            row["avatar"] = "\\x" + archive.files[path].hex()
        rows.append(row)
    return rows


async def _columns(conn: AsyncConnection[Any], table: str) -> list[str]:
    result = await conn.execute(
        "SELECT column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
        (table,),
    )
    return [str(r["column_name"]) for r in await result.fetchall()]


async def _collisions(
    conn: AsyncConnection[Any], spec: TableSpec, ids: list[int], user: str
) -> int:
    result = await conn.execute(
        f"SELECT count(*) AS n FROM {spec.name} WHERE id = ANY(%(ids)s) AND NOT ({spec.owner})",
        {"ids": ids, "u": user},
    )
    row = await result.fetchone()
    return int(row["n"]) if row else 0


async def _insert(conn: AsyncConnection[Any], spec: TableSpec, rows: list[dict[str, Any]]) -> int:
    if not rows:
        return 0
    generated = await generated_columns(conn, spec.name)
    present = set().union(*(row.keys() for row in rows))
    columns = [c for c in await _columns(conn, spec.name) if c in present and c not in generated]
    names = ", ".join(f'"{c}"' for c in columns)
    added = 0
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        result = await conn.execute(
            f"INSERT INTO {spec.name} ({names})"
            f" SELECT {names} FROM json_populate_recordset(NULL::{spec.name}, %s::json)"
            " ON CONFLICT DO NOTHING",
            (json.dumps(chunk, ensure_ascii=False),),
        )
        added += result.rowcount
    if spec.has_id:
        await conn.execute(
            f"SELECT setval(pg_get_serial_sequence('{spec.name}', 'id'),"
            f" GREATEST((SELECT max(id) FROM {spec.name}),"
            f" (SELECT last_value FROM pg_sequences"
            f"  WHERE schemaname = current_schema()"
            f"  AND sequencename = split_part(pg_get_serial_sequence('{spec.name}', 'id'),"
            "'.', 2))))"
        )
    return added


async def embed_dim_of(conn: AsyncConnection[Any]) -> int | None:
    result = await conn.execute(
        "SELECT atttypmod AS dim FROM pg_attribute"
        " WHERE attrelid = 'lzg_knoten'::regclass AND attname = 'embedding'"
    )
    row = await result.fetchone()
    return int(row["dim"]) if row and row["dim"] > 0 else None


async def restore_archive(
    pool: AsyncConnectionPool,
    redis: aioredis.Redis,
    archive: Archive,
    *,
    as_user: str | None = None,
    progress: Progress = _quiet,
) -> RestoreReport:
    """Write `archive` for `as_user` (default: the person it was exported from)."""
    user = as_user or archive.user_id
    report = RestoreReport(user_id=user)
    prepared = [(spec, _rows_for(spec, archive, user)) for spec in TABLES]
    async with pool.connection() as conn:
        dim = await embed_dim_of(conn)
        if dim is not None and dim != archive.embed_dim:
            raise ArchiveRefused(
                f"This export holds embeddings of {archive.embed_dim} dimensions; this "
                f"installation uses {dim} (NOVABERG_EMBED_DIM). Restore it into an "
                "installation with the same embedding model."
            )
        async with conn.transaction():
            for spec, rows in prepared:
                ids = [int(r["id"]) for r in rows if spec.has_id and "id" in r]
                taken = await _collisions(conn, spec, ids, user) if ids else 0
                if taken:
                    raise ArchiveRefused(
                        f"{taken} rows of this export ({spec.name}) have ids that other data "
                        "of this installation already uses. Restore it into a fresh "
                        "installation (merging into a used one is not supported yet)."
                    )
            for number, (spec, rows) in enumerate(prepared, 1):
                added = await _insert(conn, spec, rows)
                report.added[spec.name] = added
                report.present[spec.name] = len(rows) - added
                progress(
                    f"restore {number}/{len(prepared)}: {spec.name} — {added} added, "
                    f"{len(rows) - added} already there"
                )
    report.redis_added, report.redis_present = await restore_keys(
        redis, archive.redis, archive.user_id, user
    )
    progress(
        f"restore: {report.redis_added} Redis keys added, {report.redis_present} already there"
    )
    return report
