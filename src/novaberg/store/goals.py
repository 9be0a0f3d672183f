"""The character's goals toward a counterpart (`ziele`, spec pipeline §1.2 and §9).

Row (user_id = the character as subject, character_id = the human counterpart): for the
pair (meister, nova) the goals are the rows ('nova', 'meister'). Motivation decays
exponentially from its anchor (`motivation_basis` at `motivation_basis_am`); readers get the
live value computed at read time, the daily job stores it and deactivates faded goals.
The activation math itself is pure and lives in `novaberg.ei.goals`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Final

import numpy as np
from psycopg import AsyncConnection

from novaberg.store.keys import Pair

HALF_LIFE_DAYS: Final = 14.0
"""motivation = basis × e^(−ln2/14 × days since basis_am) (spec pipeline §9 ziel_decay)."""

DECAYING_TYPE: Final = "mittelfristig"
"""Only medium-term goals decay; long-term goals are refreshed by the character
distillation instead (spec pipeline §9)."""

DEACTIVATION_THRESHOLD: Final = 0.15
"""A medium-term goal below this motivation is deactivated (the seed's
ZIEL_DEAKTIVIERUNGS_SCHWELLE)."""

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
    zielsatz: str,
    embedding: Sequence[float] | None,
    ziel_typ: str = DECAYING_TYPE,
    motivation: float = 0.5,
    thema: str = "",
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
            ziel_typ,
            zielsatz,
            thema,
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
