"""SQL for the `notizen` table (docs/behaviour/agents.md#notes). Every query is scoped by user.

Used by the notes agent and by the HTTP API. Times come in from the caller's
injected clock; nothing here reads the wall clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from psycopg_pool import AsyncConnectionPool

from novaberg.agents.quota import ensure_room

RESUBMIT_AFTER = timedelta(days=30)
"""`wiedervorlage_am` default on insert: now + 30 d."""

SUMMARY_WORDS = 20
SUMMARY_MAX = 200
EMPTY_SUMMARY = "(leer)"

NOTE_TYPES = ("einkauf", "todo", "merkliste", "notiz", "entwurf", "idee")

FIELD_MIN_SIMILARITY = 0.15
MIN_SCORE = 0.3
SEARCH_LIMIT = 10
"""Fuzzy search thresholds."""

WEIGHTS: dict[str, tuple[float, float, float]] = {
    "titel": (2.0, 1.0, 1.0),
    "inhalt": (1.0, 2.0, 0.5),
    "thema": (1.0, 1.0, 2.0),
}
"""(name, text, themen) weights per target type."""

COLUMNS = (
    "id, user_id, name, typ, text, status, aktiv, zusammenfassung, themen, created_at, updated_at"
)


def summary(text: str) -> str:
    """First 20 words (+ "...") or "(leer)"; fits VARCHAR(200)."""
    words = text.split()
    if not words:
        return EMPTY_SUMMARY
    short = " ".join(words[:SUMMARY_WORDS]) + ("..." if len(words) > SUMMARY_WORDS else "")
    return short[:SUMMARY_MAX]


def normalise_type(typ: str | None, name: str = "") -> str:
    value = (typ or "").strip().lower()
    if value in NOTE_TYPES:
        return value
    return "einkauf" if "einkauf" in name.lower() else "notiz"


async def list_active(pool: AsyncConnectionPool, user_id: str) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {COLUMNS} FROM notizen WHERE user_id = %s AND aktiv ORDER BY updated_at DESC",
            (user_id,),
        )
        return cast(list[dict[str, Any]], await cur.fetchall())


async def get(pool: AsyncConnectionPool, user_id: str, note_id: int) -> dict[str, Any] | None:
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {COLUMNS} FROM notizen WHERE user_id = %s AND id = %s", (user_id, note_id)
        )
        return cast(dict[str, Any] | None, await cur.fetchone())


async def find_exact(pool: AsyncConnectionPool, user_id: str, name: str) -> list[dict[str, Any]]:
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {COLUMNS} FROM notizen WHERE user_id = %s AND aktiv"
            " AND lower(name) = lower(%s) ORDER BY id",
            (user_id, name.strip()),
        )
        return cast(list[dict[str, Any]], await cur.fetchall())


async def fuzzy(
    pool: AsyncConnectionPool, user_id: str, query: str, target_typ: str = "titel"
) -> list[dict[str, Any]]:
    """Active notes scored by trigram similarity of name, text and topics, best first.

    A candidate needs one field above 0.15 and a weighted score of at least 0.3.
    """
    weights = WEIGHTS.get(target_typ, WEIGHTS["titel"])
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"""SELECT {COLUMNS},
                   similarity(lower(name), lower(%(q)s)) AS s_name,
                   word_similarity(lower(%(q)s), lower(text)) AS s_text,
                   COALESCE((SELECT max(word_similarity(lower(%(q)s), lower(t)))
                             FROM unnest(themen) AS t), 0) AS s_thema
                FROM notizen WHERE user_id = %(u)s AND aktiv""",
            {"q": query, "u": user_id},
        )
        rows = cast(list[dict[str, Any]], await cur.fetchall())
    scored = []
    for row in rows:
        sims = (float(row["s_name"]), float(row["s_text"]), float(row["s_thema"]))
        if max(sims) <= FIELD_MIN_SIMILARITY:
            continue
        score = sum(w * s for w, s in zip(weights, sims, strict=True))
        if score >= MIN_SCORE:
            scored.append({**row, "score": round(score, 4)})
    scored.sort(key=lambda r: (-r["score"], r["id"]))
    return scored[:SEARCH_LIMIT]


async def fulltext(pool: AsyncConnectionPool, user_id: str, query: str) -> list[dict[str, Any]]:
    """German full-text fallback over name + summary + text."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {COLUMNS} FROM notizen WHERE user_id = %s AND aktiv"
            " AND to_tsvector('german', name || ' ' || zusammenfassung || ' ' || text)"
            " @@ plainto_tsquery('german', %s) ORDER BY updated_at DESC LIMIT %s",
            (user_id, query, SEARCH_LIMIT),
        )
        return cast(list[dict[str, Any]], await cur.fetchall())


async def insert(
    pool: AsyncConnectionPool,
    user_id: str,
    *,
    name: str,
    typ: str,
    text: str,
    themen: list[str],
    now: datetime,
    limit: int | None = None,
) -> int:
    """The new note's id; QuotaExceeded if the user already keeps `limit` active notes."""
    async with pool.connection() as conn, conn.transaction():
        await ensure_room(conn, "notizen", user_id, limit)
        cur = await conn.execute(
            "INSERT INTO notizen (user_id, name, typ, text, zusammenfassung, themen,"
            " created_at, updated_at, last_touched, wiedervorlage_am)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
            (
                user_id,
                name,
                normalise_type(typ, name),
                text,
                summary(text),
                themen,
                now,
                now,
                now,
                now + RESUBMIT_AFTER,
            ),
        )
        row = cast(dict[str, Any] | None, await cur.fetchone())
        assert row is not None
        return int(row["id"])


async def set_text(
    pool: AsyncConnectionPool, user_id: str, note_id: int, text: str, now: datetime
) -> None:
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE notizen SET text = %s, zusammenfassung = %s, updated_at = %s,"
            " last_touched = %s WHERE user_id = %s AND id = %s",
            (text, summary(text), now, now, user_id, note_id),
        )


async def set_fields(
    pool: AsyncConnectionPool,
    user_id: str,
    note_id: int,
    now: datetime,
    *,
    name: str | None = None,
    typ: str | None = None,
    text: str | None = None,
) -> None:
    """Change the given fields in one statement (None keeps a field as it is)."""
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE notizen SET name = COALESCE(%s, name), typ = COALESCE(%s, typ),"
            " text = COALESCE(%s, text), zusammenfassung = COALESCE(%s, zusammenfassung),"
            " updated_at = %s, last_touched = %s WHERE user_id = %s AND id = %s",
            (name, typ, text, None if text is None else summary(text), now, now, user_id, note_id),
        )


async def archive(pool: AsyncConnectionPool, user_id: str, note_id: int, now: datetime) -> None:
    """Delete = archive: the row stays, inactive."""
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE notizen SET aktiv = false, status = 'archiviert', updated_at = %s"
            " WHERE user_id = %s AND id = %s",
            (now, user_id, note_id),
        )
