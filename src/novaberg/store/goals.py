"""The character's goals toward a counterpart (`ziele`, docs/behaviour/memory.md#goals).

Row (user_id = the character as subject, character_id = the human counterpart): for the
pair (meister, nova) the goals are the rows ('nova', 'meister'). Motivation decays
exponentially from its anchor (`motivation_basis` at `motivation_basis_am`); readers get the
live value computed at read time, the daily job stores it and deactivates faded goals.
The activation math itself is pure and lives in `novaberg.ei.goals`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import numpy as np
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from novaberg.pair import Pair

HALF_LIFE_DAYS: Final = 14.0
"""motivation = basis × e^(−ln2/14 × days since basis_am)."""

DECAYING_TYPE: Final = "mittelfristig"
"""Only medium-term goals decay; long-term goals are refreshed by the character
distillation instead."""

LASTING_TYPE: Final = "langfristig"
"""Long-term goals: replaced as a set by `refresh_long_term`, never decayed."""

DEACTIVATION_THRESHOLD: Final = 0.15
"""A medium-term goal below this motivation is deactivated."""

GOAL_COLUMNS: Final = (
    "id, user_id, character_id, ziel_typ, zielsatz, thema, motivation, motivation_basis,"
    " motivation_basis_am, emotion, arousal, aktiv, erstellt_am"
)


def vector_list(value: Any) -> list[float]:
    """A stored pgvector value (pgvector `Vector`, array or list) as a list of floats."""
    if hasattr(value, "to_list"):
        return [float(x) for x in value.to_list()]
    return [float(x) for x in np.asarray(value, dtype=np.float64).ravel()]


def live_motivation(goal: Mapping[str, Any], now: datetime) -> float:
    """The motivation at `now`: decayed from the anchor for medium-term goals."""
    if goal.get("ziel_typ") != DECAYING_TYPE:
        return float(goal["motivation"])
    base = float(goal["motivation_basis"])
    since = goal.get("motivation_basis_am")
    if since is None:
        return base
    days = max(0.0, (now - since).total_seconds() / 86_400)
    return base * math.exp(-math.log(2) / HALF_LIFE_DAYS * days)


def goal_owner(pair: Pair) -> tuple[str, str]:
    """(user_id, character_id) of the `ziele` rows that belong to a conversation pair."""
    return pair.character_id, pair.user_id


_ACTIVATION_SQL: Final = (
    "SELECT id, ziel_typ, zielsatz, thema, motivation, emotion, arousal, embedding"
    " FROM ziele WHERE user_id = %s AND character_id = %s AND aktiv AND embedding IS NOT NULL"
)


def activation_query(pair: Pair) -> tuple[str, tuple[str, str]]:
    """(sql, params) of the goals the enricher activates against the stimulus: active ones
    with an embedding. The turn context (agents/turn_context.py) sends it with its other
    reads; the HumanGraph's enricher sends it alone (`load_activation_goals`)."""
    subject, counterpart = goal_owner(pair)
    return _ACTIVATION_SQL, (subject, counterpart)


def activation_goals_from_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows of `activation_query` with their embedding as a list of floats."""
    return [{**row, "embedding": vector_list(row["embedding"])} for row in rows]


async def load_activation_goals(pool: AsyncConnectionPool, pair: Pair) -> list[dict[str, Any]]:
    """`activation_query` on its own connection."""
    sql, params = activation_query(pair)
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        await cur.execute(sql, params)
        return activation_goals_from_rows(await cur.fetchall())


async def active_goals(
    conn: AsyncConnection[Any], pair: Pair, now: datetime, *, with_embedding: bool = True
) -> list[dict[str, Any]]:
    """The pair's active goals with live motivation; faded medium-term goals are left out.

    `embedding` is a list of floats (None when the goal has none) for `ei.goals`.
    """
    subject, counterpart = goal_owner(pair)
    extra = ", embedding" if with_embedding else ""
    cur = await conn.execute(
        f"SELECT {GOAL_COLUMNS}{extra} FROM ziele"
        " WHERE user_id = %s AND character_id = %s AND aktiv ORDER BY id",
        (subject, counterpart),
    )
    goals = []
    for row in await cur.fetchall():
        goal = dict(row)
        goal["motivation"] = live_motivation(goal, now)
        if goal["ziel_typ"] == DECAYING_TYPE and goal["motivation"] < DEACTIVATION_THRESHOLD:
            continue
        if with_embedding:
            vector = goal.get("embedding")
            goal["embedding"] = None if vector is None else vector_list(vector)
        goals.append(goal)
    return goals


async def all_goals(conn: AsyncConnection[Any], pair: Pair) -> list[dict[str, Any]]:
    """Every goal of the pair, active ones first (read API)."""
    subject, counterpart = goal_owner(pair)
    cur = await conn.execute(
        f"SELECT {GOAL_COLUMNS} FROM ziele WHERE user_id = %s AND character_id = %s"
        " ORDER BY aktiv DESC, motivation DESC, id",
        (subject, counterpart),
    )
    return list(await cur.fetchall())


async def insert_goal(
    conn: AsyncConnection[Any],
    pair: Pair,
    *,
    statement: str,
    embedding: Sequence[float] | None,
    kind: str = DECAYING_TYPE,
    motivation: float = 0.5,
    topic: str = "",
    emotion: str = "",
    arousal: float | None = None,
    now: datetime,
) -> int:
    subject, counterpart = goal_owner(pair)
    cur = await conn.execute(
        "INSERT INTO ziele (user_id, character_id, ziel_typ, zielsatz, thema, motivation,"
        " motivation_basis, motivation_basis_am, emotion, arousal, embedding, erstellt_am)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
        (
            subject,
            counterpart,
            kind,
            statement,
            topic,
            motivation,
            motivation,
            now,
            emotion,
            arousal,
            None if embedding is None else np.asarray(embedding, dtype=np.float32),
            now,
        ),
    )
    row = await cur.fetchone()
    assert row is not None
    return int(row["id"])


async def decay_all(conn: AsyncConnection[Any], now: datetime) -> tuple[int, int]:
    """Store the live motivation of every active medium-term goal; deactivate faded ones.

    Returns (updated, deactivated).
    """
    cur = await conn.execute(
        "UPDATE ziele SET motivation = motivation_basis"
        " * exp(-ln(2) / %(h)s * GREATEST(0, extract(epoch FROM (%(now)s - motivation_basis_am))"
        " / 86400.0)),"
        " aktiv = motivation_basis * exp(-ln(2) / %(h)s * GREATEST(0, extract(epoch FROM"
        " (%(now)s - motivation_basis_am)) / 86400.0)) >= %(th)s"
        " WHERE aktiv AND ziel_typ = %(typ)s RETURNING aktiv",
        {"h": HALF_LIFE_DAYS, "now": now, "th": DEACTIVATION_THRESHOLD, "typ": DECAYING_TYPE},
    )
    rows = await cur.fetchall()
    return len(rows), sum(1 for row in rows if not row["aktiv"])


@dataclass(frozen=True)
class LastingGoal:
    """A long-term goal as the distillation proposes it (`zielsatz`, `thema`)."""

    statement: str
    topic: str
    motivation: float
    embedding: Sequence[float] | None


def goal_identity(topic: str, statement: str) -> str:
    """What makes two long-term goals of a pair the same goal: the theme (lower case,
    spaces collapsed), or the sentence when the theme is empty."""
    return " ".join((topic or statement).lower().split())


async def refresh_long_term(
    conn: AsyncConnection[Any], pair: Pair, proposed: Sequence[LastingGoal], now: datetime
) -> dict[str, int]:
    """Make the pair's active long-term goals the proposed set.

    A proposed goal with the identity of a stored one (active or not) updates it in place
    and is active again, with motivation and its anchor reset to now; a new one is
    inserted; an active long-term goal not proposed again is deactivated (kept for the
    read API). Of proposals sharing an identity the first counts. An empty proposal changes
    nothing: no evidence is not a reason to drop goals.
    Returns counts {neu, aktualisiert, deaktiviert}.
    """
    counts = {"neu": 0, "aktualisiert": 0, "deaktiviert": 0}
    if not proposed:
        return counts
    subject, counterpart = goal_owner(pair)
    cur = await conn.execute(
        "SELECT id, thema AS topic, zielsatz AS statement, aktiv AS active FROM ziele"
        " WHERE user_id = %s AND character_id = %s AND ziel_typ = %s ORDER BY aktiv DESC, id",
        (subject, counterpart, LASTING_TYPE),
    )
    stored: dict[str, dict[str, Any]] = {}
    for row in await cur.fetchall():
        stored.setdefault(goal_identity(row["topic"], row["statement"]), row)
    kept: set[int] = set()
    unique: dict[str, LastingGoal] = {}
    for goal in proposed:
        unique.setdefault(goal_identity(goal.topic, goal.statement), goal)
    for identity, goal in unique.items():
        row = stored.get(identity)
        vector = None if goal.embedding is None else np.asarray(goal.embedding, dtype=np.float32)
        if row is None:
            kept.add(
                await insert_goal(
                    conn,
                    pair,
                    statement=goal.statement,
                    embedding=goal.embedding,
                    kind=LASTING_TYPE,
                    motivation=goal.motivation,
                    topic=goal.topic,
                    now=now,
                )
            )
            counts["neu"] += 1
            continue
        await conn.execute(
            "UPDATE ziele SET zielsatz = %s, thema = %s, motivation = %s, motivation_basis = %s,"
            " motivation_basis_am = %s, embedding = %s, aktiv = TRUE WHERE id = %s",
            (goal.statement, goal.topic, goal.motivation, goal.motivation, now, vector, row["id"]),
        )
        kept.add(int(row["id"]))
        counts["aktualisiert"] += 1
    cur = await conn.execute(
        "UPDATE ziele SET aktiv = FALSE WHERE user_id = %s AND character_id = %s"
        " AND ziel_typ = %s AND aktiv AND NOT (id = ANY(%s))",
        (subject, counterpart, LASTING_TYPE, list(kept)),
    )
    counts["deaktiviert"] = cur.rowcount
    return counts
