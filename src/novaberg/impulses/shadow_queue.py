"""The shadow queue `shadow_auftrag`: tasks Nova set herself
(docs/behaviour/pixie.md#shadow-queue).

A task is identified by (user, character, aufgabe, thema). Pushing it
- inserts a new row (salience as given, `salienz_absolut = salienz_decay = salienz_roh`),
- reinforces an active row (`salienz_roh += 0.03`, absolut/decay recomputed, `haeufigkeit`+1),
- half-reactivates an inactive one (`salienz_decay = (salienz_absolut + 0.1) / 2`, active).
Once a day every active row decays (`× e^(−0.0393 × days)`); below 0.3 it goes inactive.
A job takes the best active row of its kind, deletes it on success and counts a failure
(`versuche`; the third deletes it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

REINFORCE_STEP: Final = 0.03
"""Salience a repeated push adds to an active task."""

DECAY_PER_DAY: Final = 0.0393
"""Daily decay rate of a task's salience."""

INACTIVE_BELOW: Final = 0.3
"""A task whose decayed salience falls below this goes inactive."""

MAX_ATTEMPTS: Final = 3
"""Failures after which a task is deleted."""

DEFAULT_SALIENCE: Final = 0.5

TASK_RESEARCH: Final = "recherche"
TASK_FOLLOW_UP: Final = "nachfragen"
TASK_RESUBMISSION: Final = "wiedervorlage"
TASK_KNOWLEDGE_GAP: Final = "wissensluecken"
TASK_KNOWLEDGE_BACK: Final = "wissen_rueckweg"
TASK_DELEGATION: Final = "delegation"

TASK_ID_PREFIX: Final = "auftrag-"
"""A task's id outside the database, `auftrag-<id>`: `GET /impulses` and the open
questions a turn may take up."""

MAX_ID_DIGITS: Final = 18
"""Every BIGSERIAL value up to 10^18 fits; a longer id is none of ours (and int() of
thousands of digits is refused or slow)."""


def task_id_of(text: str) -> int | None:
    """The row id in `auftrag-<id>`, or None. ASCII digits only: `str.isdigit` also holds
    for "²" or "٣", which int() refuses or reads as another number."""
    digits = text.removeprefix(TASK_ID_PREFIX)
    if digits == text or not (digits.isascii() and digits.isdigit()):
        return None
    return int(digits) if len(digits) <= MAX_ID_DIGITS else None


TASKS: Final = frozenset(
    {
        TASK_RESEARCH,
        TASK_FOLLOW_UP,
        TASK_RESUBMISSION,
        TASK_KNOWLEDGE_GAP,
        TASK_KNOWLEDGE_BACK,
        TASK_DELEGATION,
    }
)
"""The `aufgabe` values (wire names)."""

PUSH_NEW: Final = "neu"
PUSH_REINFORCED: Final = "verstaerkt"
PUSH_REACTIVATED: Final = "reaktiviert"

_COLUMNS: Final = (
    "id, user_id, character_id, beobachter, aufgabe, thema, kontext, grund, intentionen,"
    " emotion, modus, arousal, bezug_id, salienz_roh, salienz_absolut, salienz_decay,"
    " haeufigkeit, aktiv, erstellt_am, verstaerkt_am, decay_am, versuche"
)


@dataclass(frozen=True)
class ShadowTask:
    """What a caller pushes; `bezug_id` names the turn the task answers (if any)."""

    user_id: str
    character_id: str
    task: str
    topic: str
    context: str = ""
    reason: str = ""
    intentions: Sequence[str] = ()
    emotion: str | None = None
    mode: str | None = None
    arousal: float | None = None
    reference_id: str | None = None
    salience: float = DEFAULT_SALIENCE


def _check(task: ShadowTask) -> None:
    if task.task not in TASKS:
        raise ValueError(f"unknown shadow task {task.task!r}")
    if not task.topic.strip():
        raise ValueError("a shadow task needs a topic")
    if task.arousal is not None and not 0.0 <= task.arousal <= 1.0:
        raise ValueError(f"arousal {task.arousal!r} outside [0, 1]")
    if not 0.0 <= task.salience <= 1.0:
        raise ValueError(f"salience {task.salience!r} outside [0, 1]")


_PUSH_SQL: Final = """
INSERT INTO shadow_auftrag AS s (user_id, character_id, aufgabe, thema, kontext, grund,
    intentionen, emotion, modus, arousal, bezug_id, salienz_roh, salienz_absolut,
    salienz_decay, erstellt_am, verstaerkt_am, decay_am)
VALUES (%(u)s, %(c)s, %(a)s, %(t)s, %(k)s, %(g)s, %(i)s, %(e)s, %(m)s, %(ar)s, %(b)s,
    %(s)s, %(s)s, %(s)s, %(now)s, %(now)s, %(now)s)
ON CONFLICT ON CONSTRAINT shadow_auftrag_identitaet DO UPDATE SET
    salienz_roh = CASE WHEN s.aktiv THEN LEAST(1.0, s.salienz_roh + %(step)s)
                       ELSE s.salienz_roh END,
    salienz_absolut = CASE WHEN s.aktiv THEN LEAST(1.0, s.salienz_roh + %(step)s)
                           ELSE s.salienz_absolut END,
    salienz_decay = CASE WHEN s.aktiv THEN LEAST(1.0, s.salienz_roh + %(step)s)
                         ELSE (s.salienz_absolut + 0.1) / 2 END,
    haeufigkeit = s.haeufigkeit + CASE WHEN s.aktiv THEN 1 ELSE 0 END,
    aktiv = TRUE,
    kontext = CASE WHEN EXCLUDED.kontext <> '' THEN EXCLUDED.kontext ELSE s.kontext END,
    bezug_id = COALESCE(EXCLUDED.bezug_id, s.bezug_id),
    verstaerkt_am = %(now)s,
    decay_am = %(now)s
RETURNING id, (xmax = 0) AS neu, (SELECT aktiv FROM shadow_auftrag WHERE id = s.id) AS vorher
"""


async def push(pool: AsyncConnectionPool, task: ShadowTask, now: datetime) -> tuple[int, str]:
    """Insert or reinforce the task; return (row id, neu|verstaerkt|reaktiviert)."""
    _check(task)
    params = {
        "u": task.user_id,
        "c": task.character_id,
        "a": task.task,
        "t": task.topic.strip()[:200],
        "k": task.context[:2000],
        "g": task.reason[:300],
        "i": list(task.intentions),
        "e": task.emotion,
        "m": task.mode,
        "ar": task.arousal,
        "b": task.reference_id,
        "s": task.salience,
        "step": REINFORCE_STEP,
        "now": now,
    }
    async with pool.connection() as conn:
        cur = await conn.execute(_PUSH_SQL, params)
        row: Any = await cur.fetchone()
    assert row is not None
    row_id, is_new, was_active = int(row["id"]), bool(row["neu"]), row["vorher"]
    if is_new:
        return row_id, PUSH_NEW
    return row_id, PUSH_REINFORCED if was_active else PUSH_REACTIVATED


async def best(
    pool: AsyncConnectionPool,
    tasks: Sequence[str],
    *,
    user_id: str | None = None,
    character_id: str | None = None,
    limit: int = 20,
) -> list[dict[str, Any]]:
    """Active rows of these kinds, highest decayed salience first."""
    async with pool.connection() as conn:
        return await best_on(conn, tasks, user_id=user_id, character_id=character_id, limit=limit)


async def best_on(
    conn: AsyncConnection[Any],
    tasks: Sequence[str],
    *,
    user_id: str | None = None,
    character_id: str | None = None,
    limit: int = 20,
) -> list[dict[str, Any]]:
    """`best` on a connection the caller holds for its next statement."""
    sql, params = best_query(tasks, user_id=user_id, character_id=character_id, limit=limit)
    cur = await conn.execute(sql, params)
    rows: list[Any] = await cur.fetchall()
    return rows


def best_query(
    tasks: Sequence[str],
    *,
    user_id: str | None = None,
    character_id: str | None = None,
    limit: int = 20,
) -> tuple[str, list[Any]]:
    """The statement of `best` as `(sql, params)`, for a caller that batches its reads."""
    where = ["aktiv", "aufgabe = ANY(%s)"]
    params: list[Any] = [list(tasks)]
    if user_id is not None:
        where.append("user_id = %s")
        params.append(user_id)
    if character_id is not None:
        where.append("character_id = %s")
        params.append(character_id)
    sql = (
        f"SELECT {_COLUMNS} FROM shadow_auftrag WHERE {' AND '.join(where)}"
        " ORDER BY salienz_decay DESC, id LIMIT %s"
    )
    return sql, [*params, limit]


async def any_active(pool: AsyncConnectionPool, tasks: Sequence[str]) -> bool:
    """Whether an active task of these kinds exists (a job's readiness check)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT EXISTS (SELECT 1 FROM shadow_auftrag WHERE aktiv AND aufgabe = ANY(%s)) AS da",
            (list(tasks),),
        )
        row: Any = await cur.fetchone()
    return bool(row and row["da"])


async def done(pool: AsyncConnectionPool, row_id: int) -> bool:
    """The task was carried out: delete it."""
    async with pool.connection() as conn:
        cur = await conn.execute("DELETE FROM shadow_auftrag WHERE id = %s", (row_id,))
        return cur.rowcount == 1


async def failed(pool: AsyncConnectionPool, row_id: int) -> int:
    """Count a failed attempt; the third deletes the task. Returns the attempts so far."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "UPDATE shadow_auftrag SET versuche = versuche + 1 WHERE id = %s RETURNING versuche",
            (row_id,),
        )
        row: Any = await cur.fetchone()
        if row is None:
            return 0
        attempts = int(row["versuche"])
        if attempts >= MAX_ATTEMPTS:
            await conn.execute("DELETE FROM shadow_auftrag WHERE id = %s", (row_id,))
        return attempts


def decayed(salience: float, days: float) -> float:
    """The salience after `days` of daily decay."""
    return salience * math.exp(-DECAY_PER_DAY * max(0.0, days))


async def decay_all(pool: AsyncConnectionPool, now: datetime) -> tuple[int, int]:
    """Decay every active task from its last reinforcement; deactivate those below 0.3.
    Returns (updated, deactivated)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "UPDATE shadow_auftrag SET salienz_decay = salienz_absolut * exp(-%s * "
            " GREATEST(0, EXTRACT(EPOCH FROM (%s - verstaerkt_am)) / 86400.0)), decay_am = %s"
            " WHERE aktiv",
            (DECAY_PER_DAY, now, now),
        )
        updated = cur.rowcount
        cur = await conn.execute(
            "UPDATE shadow_auftrag SET aktiv = FALSE WHERE aktiv AND salienz_decay < %s",
            (INACTIVE_BELOW,),
        )
        return updated, cur.rowcount


async def for_pair(
    pool: AsyncConnectionPool, user_id: str, character_id: str
) -> list[dict[str, Any]]:
    """Every task of the pair (active first), for `GET /impulses`."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {_COLUMNS} FROM shadow_auftrag WHERE user_id = %s AND character_id = %s"
            " ORDER BY aktiv DESC, salienz_decay DESC, id",
            (user_id, character_id),
        )
        rows: list[Any] = await cur.fetchall()
        return rows


async def dismiss(pool: AsyncConnectionPool, user_id: str, character_id: str, row_id: int) -> bool:
    """The person does not want this task: delete it (only their own)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "DELETE FROM shadow_auftrag WHERE id = %s AND user_id = %s AND character_id = %s",
            (row_id, user_id, character_id),
        )
        return cur.rowcount == 1


async def sizes(pool: AsyncConnectionPool) -> dict[tuple[str, str], int]:
    """Active tasks per pair (operator status)."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            "SELECT user_id, character_id, count(*) AS n FROM shadow_auftrag WHERE aktiv"
            " GROUP BY user_id, character_id"
        )
        rows: list[Any] = await cur.fetchall()
        return {(str(r["user_id"]), str(r["character_id"])): int(r["n"]) for r in rows}
