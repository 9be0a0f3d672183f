"""SQL for the `timeline` table (docs/behaviour/agents.md#timeline). Every query is scoped by user.

The database holds UTC (`TIMESTAMPTZ`); callers pass aware datetimes and convert
to the configured zone only for display. Changes are bi-temporal: the old row is
deactivated and a new row (with `vorgaenger_id`) is inserted, in one transaction
(`replace`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any, Final, cast

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from novaberg.agents.quota import ensure_room
from novaberg.wire import TIMELINE_MEMORY_ANCHOR

EVENT_TYPES = ("termin", "geburtstag", "deadline", "jahrestag", "erinnerung")

FLAGS: dict[str, tuple[bool, bool, bool]] = {
    "termin": (True, True, True),
    "deadline": (True, True, True),
    "geburtstag": (False, True, False),
    "jahrestag": (False, True, False),
    "erinnerung": (False, True, False),
}
"""(binding, remind, conflict_check) per event type; else all False."""

RESUBMIT_AFTER = timedelta(days=7)
"""`wiedervorlage_am` = event_time + 7 d on insert."""

SEARCH_LIMIT = 10

APPOINTMENTS_ONLY: Final = f" AND event_type <> '{TIMELINE_MEMORY_ANCHOR}'"
"""The agent reads appointments; the rows that anchor memories to a day are not its
(docs/behaviour/memory.md#day-anchors)."""

REMINDER_GRACE = timedelta(hours=24)
"""A reminder more than a day overdue (server was down) is marked, not delivered late."""

DAY_REMINDER_OFFSET = timedelta(hours=9)
"""Day-precision entries (stored at local midnight) remind nine hours later, ~09:00."""

COLUMNS = (
    "id, user_id, event_time, event_ende, event_type, title, details, precision, binding,"
    " remind, conflict_check, erinnert_am, themen, created_at, aktiv, wiedervorlage_am,"
    " vorgaenger_id"
)


def normalise_type(event_type: str | None) -> str:
    value = (event_type or "").strip().lower()
    return value if value in EVENT_TYPES else "termin"


async def insert(
    pool: AsyncConnectionPool,
    user_id: str,
    *,
    title: str,
    event_time: datetime,
    event_type: str,
    details: str,
    precision: str,
    now: datetime,
    limit: int | None = None,
) -> int:
    """The new entry's id; QuotaExceeded if the user already keeps `limit` active ones."""
    async with pool.connection() as conn, conn.transaction():
        await ensure_room(conn, "timeline", user_id, limit)
        return await _insert(
            conn, user_id, title, event_time, event_type, details, precision, now, None
        )


async def replace(
    pool: AsyncConnectionPool,
    user_id: str,
    old_id: int,
    *,
    title: str,
    event_time: datetime,
    event_type: str,
    details: str,
    precision: str,
    now: datetime,
) -> int | None:
    """The bi-temporal change in one transaction: deactivate the active row `old_id` and
    insert its successor (`vorgaenger_id`). A failure in between leaves the old entry
    as it was; None if `old_id` was not active (changed or deleted meanwhile), so one
    entry never gets two successors."""
    async with pool.connection() as conn, conn.transaction():
        cur = await conn.execute(
            "UPDATE timeline SET aktiv = false, last_touched = %s"
            " WHERE user_id = %s AND id = %s AND aktiv",
            (now, user_id, old_id),
        )
        if cur.rowcount != 1:
            return None
        return await _insert(
            conn, user_id, title, event_time, event_type, details, precision, now, old_id
        )


async def _insert(
    conn: AsyncConnection[Any],
    user_id: str,
    title: str,
    event_time: datetime,
    event_type: str,
    details: str,
    precision: str,
    now: datetime,
    vorgaenger_id: int | None,
) -> int:
    kind = normalise_type(event_type)
    binding, remind, conflict_check = FLAGS.get(kind, (False, False, False))
    cur = await conn.execute(
        "INSERT INTO timeline (user_id, event_time, event_type, title, details, precision,"
        " binding, remind, conflict_check, themen, created_at, last_touched,"
        " wiedervorlage_am, vorgaenger_id)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
        (
            user_id,
            event_time.astimezone(UTC),
            kind,
            title,
            details,
            precision,
            binding,
            remind,
            conflict_check,
            [kind],
            now,
            now,
            event_time.astimezone(UTC) + RESUBMIT_AFTER,
            vorgaenger_id,
        ),
    )
    row = cast(dict[str, Any] | None, await cur.fetchone())
    assert row is not None
    return int(row["id"])


async def get(pool: AsyncConnectionPool, user_id: str, entry_id: int) -> dict[str, Any] | None:
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {COLUMNS} FROM timeline WHERE user_id = %s AND id = %s", (user_id, entry_id)
        )
        return cast(dict[str, Any] | None, await cur.fetchone())


async def by_title(pool: AsyncConnectionPool, user_id: str, title: str) -> list[dict[str, Any]]:
    """Active entries whose title contains `title`, any date, earliest first."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {COLUMNS} FROM timeline WHERE user_id = %s AND aktiv{APPOINTMENTS_ONLY}"
            " AND title ILIKE %s ORDER BY event_time LIMIT %s",
            (user_id, f"%{_escape_like(title)}%", SEARCH_LIMIT),
        )
        return cast(list[dict[str, Any]], await cur.fetchall())


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


IN_RANGE_SQL: Final = (
    f"SELECT {COLUMNS} FROM timeline WHERE user_id = %s AND aktiv{APPOINTMENTS_ONLY}"
    " AND event_time >= %s AND event_time < %s ORDER BY event_time"
)
"""`in_range`'s query (params: user_id, start, end); the turn context batches it with its reads."""


async def in_range(
    pool: AsyncConnectionPool, user_id: str, start: datetime, end: datetime
) -> list[dict[str, Any]]:
    """Active entries with start ≤ event_time < end, earliest first."""
    async with pool.connection() as conn:
        cur = await conn.execute(IN_RANGE_SQL, (user_id, start, end))
        return cast(list[dict[str, Any]], await cur.fetchall())


def normalise_title(title: str) -> str:
    """A title as the duplicate check compares it: trimmed, inner white space single,
    lower case (the same as the SQL `_NORMALISED_TITLE`)."""
    return " ".join(title.split()).lower()


_NORMALISED_TITLE = r"lower(regexp_replace(btrim(title), '\s+', ' ', 'g'))"


async def same_title_on_day(
    pool: AsyncConnectionPool, user_id: str, title: str, day_start: datetime, day_end: datetime
) -> dict[str, Any] | None:
    """Duplicate check: the first active entry with the same normalised title whose time
    lies in [day_start, day_end) — the new entry's local day. "Arzt" is not "Zahnarzt",
    and a second dentist appointment on another day is a new appointment."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT {COLUMNS} FROM timeline WHERE user_id = %s AND aktiv{APPOINTMENTS_ONLY}"
            f" AND {_NORMALISED_TITLE} = %s AND event_time >= %s AND event_time < %s"
            " ORDER BY event_time LIMIT 1",
            (user_id, normalise_title(title), day_start, day_end),
        )
        return cast(dict[str, Any] | None, await cur.fetchone())


async def deactivate(pool: AsyncConnectionPool, user_id: str, entry_id: int, now: datetime) -> None:
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE timeline SET aktiv = false, last_touched = %s WHERE user_id = %s AND id = %s",
            (now, user_id, entry_id),
        )


async def due_reminders(
    pool: AsyncConnectionPool, now: datetime, *, user_id: str | None = None
) -> list[dict[str, Any]]:
    """Active `remind` entries whose time has come and that were not reminded yet.

    Minute precision reminds at `event_time`; day precision at local midnight +
    `DAY_REMINDER_OFFSET`. Entries more than `REMINDER_GRACE` overdue are left out
    (see `skip_stale_reminders`).
    """
    async with pool.connection() as conn:
        cur = await conn.execute(
            f"""SELECT {COLUMNS} FROM timeline
                WHERE aktiv AND remind AND erinnert_am IS NULL
                  AND (%(u)s::text IS NULL OR user_id = %(u)s)
                  AND event_time + CASE WHEN precision = 'day' THEN %(off)s
                                        ELSE interval '0' END <= %(now)s
                  AND event_time + CASE WHEN precision = 'day' THEN %(off)s
                                        ELSE interval '0' END > %(since)s
                ORDER BY event_time""",
            {"u": user_id, "off": DAY_REMINDER_OFFSET, "now": now, "since": now - REMINDER_GRACE},
        )
        return cast(list[dict[str, Any]], await cur.fetchall())


async def mark_reminded(pool: AsyncConnectionPool, entry_ids: list[int], now: datetime) -> int:
    """Set `erinnert_am`; only rows not yet reminded count (idempotent across workers)."""
    if not entry_ids:
        return 0
    async with pool.connection() as conn:
        cur = await conn.execute(
            "UPDATE timeline SET erinnert_am = %s WHERE id = ANY(%s) AND erinnert_am IS NULL",
            (now, entry_ids),
        )
        return cur.rowcount


async def skip_stale_reminders(pool: AsyncConnectionPool, now: datetime) -> int:
    """Mark reminders more than `REMINDER_GRACE` overdue as handled without delivery."""
    async with pool.connection() as conn:
        cur = await conn.execute(
            """UPDATE timeline SET erinnert_am = %(now)s
               WHERE aktiv AND remind AND erinnert_am IS NULL
                 AND event_time + CASE WHEN precision = 'day' THEN %(off)s
                                       ELSE interval '0' END <= %(since)s""",
            {"now": now, "off": DAY_REMINDER_OFFSET, "since": now - REMINDER_GRACE},
        )
        return cur.rowcount
