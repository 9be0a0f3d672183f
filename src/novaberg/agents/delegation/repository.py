"""SQL for the `delegation` case file (docs/behaviour/agents.md#delegation). Every query is
scoped by the pair; times come from the caller's injected clock.

A case is opened once per pair, kind and turn (`UNIQUE (user_id, character_id, art,
bezug_turn_id)`): a continue run repeated after a crash, or a commitment made again in the
next run, finds its case instead of opening a second one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final, cast

from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair

KIND_RESEARCH: Final = "recherche"
KIND_DELEGATION: Final = "delegation"
"""`art`: a matter to look up, a matter to take care of."""

CAUSE_PROMISE: Final = "zusage"
CAUSE_REQUEST: Final = "auftrag"
"""`anlass`: Nova promised it in her answer / the person asked for it."""

STATUS_OPEN: Final = "offen"
STATUS_DONE: Final = "erledigt"
STATUS_HANDED_ON: Final = "an_pixie"
"""`status` of a case."""

TEXT_CHARS: Final = 2000
"""Longest `anliegen` / `befund` kept (a matter, not a document)."""


@dataclass(frozen=True)
class Case:
    """One row of `delegation`, English fields."""

    id: int
    kind: str
    cause: str
    matter: str
    topic: str
    turn_id: str
    status: str
    finding: str
    sources: list[str]
    shadow_task_id: int | None
    created_at: datetime
    is_new: bool = False
    """True when this call opened the case (False: it existed for this turn already)."""


def _case(row: dict[str, Any], is_new: bool = False) -> Case:
    return Case(
        id=int(row["id"]),
        kind=row["art"],
        cause=row["anlass"],
        matter=row["anliegen"],
        topic=row["thema"],
        turn_id=row["bezug_turn_id"],
        status=row["status"],
        finding=row["befund"],
        sources=list(row["quellen"] or []),
        shadow_task_id=row["shadow_auftrag_id"],
        created_at=row["erstellt_am"],
        is_new=is_new,
    )


COLUMNS: Final = (
    "id, art, anlass, anliegen, thema, bezug_turn_id, status, befund, quellen,"
    " shadow_auftrag_id, erstellt_am"
)


async def open_case(
    pool: AsyncConnectionPool,
    pair: Pair,
    *,
    kind: str,
    cause: str,
    matter: str,
    topic: str,
    turn_id: str,
    now: datetime,
) -> Case:
    """The pair's case of this kind for `turn_id`, opened now (status `offen`) unless it
    exists; `Case.is_new` tells which."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"INSERT INTO delegation (user_id, character_id, art, anlass, anliegen, thema,"
            f" bezug_turn_id, status, erstellt_am, geaendert_am)"
            f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            f" ON CONFLICT (user_id, character_id, art, bezug_turn_id) DO NOTHING"
            f" RETURNING {COLUMNS}",
            (
                pair.user_id,
                pair.character_id,
                kind,
                cause,
                matter[:TEXT_CHARS],
                topic[:200],
                turn_id,
                STATUS_OPEN,
                now,
                now,
            ),
        )
        row = cast(dict[str, Any] | None, await cur.fetchone())
        if row is not None:
            return _case(row, is_new=True)
        cur = await conn.execute(
            f"SELECT {COLUMNS} FROM delegation WHERE user_id = %s AND character_id = %s"
            " AND art = %s AND bezug_turn_id = %s",
            (pair.user_id, pair.character_id, kind, turn_id),
        )
        found = cast(dict[str, Any] | None, await cur.fetchone())
    if found is None:  # deleted between the two statements: nothing to keep
        raise LookupError(f"case {kind}/{turn_id} of {pair} vanished while it was opened")
    return _case(found)


async def settle_case(
    pool: AsyncConnectionPool,
    pair: Pair,
    case_id: int,
    *,
    status: str,
    finding: str,
    sources: Sequence[str] = (),
    shadow_task_id: int | None = None,
    now: datetime,
) -> Case:
    """Record what became of a case: its status, what was found, where, the task it went to."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"UPDATE delegation SET status = %s, befund = %s, quellen = %s,"
            f" shadow_auftrag_id = COALESCE(%s, shadow_auftrag_id), geaendert_am = %s"
            f" WHERE id = %s AND user_id = %s AND character_id = %s RETURNING {COLUMNS}",
            (
                status,
                finding[:TEXT_CHARS],
                json.dumps(list(sources)),
                shadow_task_id,
                now,
                case_id,
                pair.user_id,
                pair.character_id,
            ),
        )
        row = cast(dict[str, Any] | None, await cur.fetchone())
    if row is None:
        raise LookupError(f"case {case_id} of {pair} is gone")
    return _case(row)


async def cases_of(pool: AsyncConnectionPool, pair: Pair, limit: int = 50) -> list[Case]:
    """The pair's cases, newest first."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {COLUMNS} FROM delegation WHERE user_id = %s AND character_id = %s"
            " ORDER BY erstellt_am DESC, id DESC LIMIT %s",
            (pair.user_id, pair.character_id, limit),
        )
        return [_case(row) for row in cast(list[dict[str, Any]], await cur.fetchall())]
