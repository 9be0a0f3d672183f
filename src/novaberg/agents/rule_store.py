"""SQL shared by the two rule tables: `direktiven` and `charakter_anweisungen`.

Both hold short instructions with `aktiv` and `geaendert_am` and are never
deleted: delete deactivates, update deactivates and inserts in one transaction
(`replace`), reactivate flips `aktiv` back (docs/behaviour/agents.md#rule-tables). Only
`direktiven` has `kontext`.

A `limit` on the writes that can add an active rule (`insert`, `reactivate`, `replace`) is
kept under the quota lock (agents/quota.py): a restore or an update counts like a create.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, cast

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from novaberg.agents import quota
from novaberg.store.tables import DIRECTIVES, RuleTable

RECENT_INACTIVE = 10
"""How many inactive rules the classifier and the restore check look at."""


def _columns(table: RuleTable) -> str:
    extra = ", kontext" if table == DIRECTIVES else ""
    return f"id, user_id, anweisung{extra}, erstellt_am, aktiv, geaendert_am"


def active_sql(table: RuleTable) -> str:
    """The user's active rules, oldest first (one parameter: user_id). Also read by the
    turn context (agents/turn_context.py) in its batched read."""
    return f"SELECT {_columns(table)} FROM {table} WHERE user_id = %s AND aktiv ORDER BY id"


async def active(pool: AsyncConnectionPool, table: RuleTable, user_id: str) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(active_sql(table), (user_id,))
        return cast(list[dict[str, Any]], await cur.fetchall())


async def recent_inactive(
    pool: AsyncConnectionPool, table: RuleTable, user_id: str, limit: int = RECENT_INACTIVE
) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {_columns(table)} FROM {table} WHERE user_id = %s AND NOT aktiv"
            " ORDER BY COALESCE(geaendert_am, erstellt_am) DESC, id DESC LIMIT %s",
            (user_id, limit),
        )
        return cast(list[dict[str, Any]], await cur.fetchall())


async def get(
    pool: AsyncConnectionPool, table: RuleTable, user_id: str, rule_id: int
) -> dict[str, Any] | None:
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {_columns(table)} FROM {table} WHERE user_id = %s AND id = %s",
            (user_id, rule_id),
        )
        return cast(dict[str, Any] | None, await cur.fetchone())


async def insert(
    pool: AsyncConnectionPool,
    table: RuleTable,
    user_id: str,
    anweisung: str,
    now: datetime,
    kontext: str | None = None,
    limit: int | None = None,
) -> int:
    """The new rule's id; QuotaExceeded if the user already keeps `limit` active rules."""
    async with pool.connection() as conn, conn.transaction():
        await quota.ensure_room(conn, table, user_id, limit)
        return await _insert(conn, table, user_id, anweisung, now, kontext)


async def set_active(
    pool: AsyncConnectionPool,
    table: RuleTable,
    user_id: str,
    rule_ids: list[int],
    aktiv: bool,
    now: datetime,
) -> None:
    """Flip the rules that are not in state `aktiv` yet. Only for deactivating and for rules
    without a limit: a restore under a limit is `reactivate`."""
    async with pool.connection() as conn:
        await _set_active(conn, table, user_id, rule_ids, aktiv, now)


async def reactivate(
    pool: AsyncConnectionPool,
    table: RuleTable,
    user_id: str,
    rule_id: int,
    now: datetime,
    limit: int | None = None,
) -> None:
    """Set one rule active again; QuotaExceeded if the user already keeps `limit` active
    rules (an active rule stays as it is, whatever the count)."""
    async with pool.connection() as conn, conn.transaction():
        if limit is not None:
            await quota.lock(conn, table, user_id)
        cur = await conn.execute(
            f"SELECT aktiv FROM {table} WHERE user_id = %s AND id = %s", (user_id, rule_id)
        )
        row = cast(dict[str, Any] | None, await cur.fetchone())
        if row is None or row["aktiv"]:
            return
        await quota.ensure_room(conn, table, user_id, limit)
        await _set_active(conn, table, user_id, [rule_id], True, now)


async def replace(
    pool: AsyncConnectionPool,
    table: RuleTable,
    user_id: str,
    old_ids: list[int],
    anweisung: str,
    now: datetime,
    kontext: str | None = None,
    limit: int | None = None,
) -> int:
    """Deactivate `old_ids` and insert the new rule in one transaction, so a failure
    in between never leaves the user with neither the old rules nor the new one. If none
    of `old_ids` was active any more (changed meanwhile), the new rule adds one: then
    QuotaExceeded if the user already keeps `limit` active rules."""
    async with pool.connection() as conn, conn.transaction():
        if limit is not None:
            await quota.lock(conn, table, user_id)
        if not await _set_active(conn, table, user_id, old_ids, False, now):
            await quota.ensure_room(conn, table, user_id, limit)
        return await _insert(conn, table, user_id, anweisung, now, kontext)


async def _insert(
    conn: AsyncConnection[Any],
    table: RuleTable,
    user_id: str,
    anweisung: str,
    now: datetime,
    kontext: str | None,
) -> int:
    if table == DIRECTIVES:
        cur = await conn.execute(
            "INSERT INTO direktiven (user_id, anweisung, kontext, erstellt_am)"
            " VALUES (%s, %s, %s, %s) RETURNING id",
            (user_id, anweisung, kontext or None, now),
        )
    else:
        cur = await conn.execute(
            "INSERT INTO charakter_anweisungen (user_id, anweisung, erstellt_am)"
            " VALUES (%s, %s, %s) RETURNING id",
            (user_id, anweisung, now),
        )
    row = cast(dict[str, Any] | None, await cur.fetchone())
    assert row is not None
    return int(row["id"])


async def _set_active(
    conn: AsyncConnection[Any],
    table: RuleTable,
    user_id: str,
    rule_ids: list[int],
    aktiv: bool,
    now: datetime,
) -> int:
    """How many rules changed state (one already in state `aktiv` keeps its `geaendert_am`)."""
    cur = await conn.execute(
        f"UPDATE {table} SET aktiv = %s, geaendert_am = %s"
        " WHERE user_id = %s AND id = ANY(%s) AND aktiv <> %s",
        (aktiv, now, user_id, rule_ids, aktiv),
    )
    return cur.rowcount


def contains_either(left: str, right: str) -> bool:
    """Case-insensitive: one text contains the other (the similarity test)."""
    a, b = left.strip().lower(), right.strip().lower()
    return bool(a and b) and (a in b or b in a)


def matching(rows: list[dict[str, Any]], text: str) -> list[dict[str, Any]]:
    return [r for r in rows if contains_either(r["anweisung"], text)]


def render_rule(row: dict[str, Any]) -> str:
    kontext = f" ({row['kontext']})" if row.get("kontext") else ""
    return f"- [{row['id']}] {row['anweisung']}{kontext}"


class VerificationFailed(Exception):
    """The re-read rule does not show the write."""


async def verify(
    pool: AsyncConnectionPool, table: RuleTable, user_id: str, rule_id: int, **expected: Any
) -> None:
    """Re-read after a write (docs/behaviour/agents.md#verification); raise if it does not show."""
    row = await get(pool, table, user_id, rule_id)
    if row is None:
        raise VerificationFailed(f"{table} {rule_id} missing after write")
    for key, value in expected.items():
        if row[key] != value:
            raise VerificationFailed(f"{table} {rule_id}: {key}={row[key]!r}, expected {value!r}")
