"""Day recall (docs/behaviour/memory.md#day-recall): when the stimulus asks about a day
("was war am Dienstag?", "und gestern?"), the memories *about* that day, from short-term
and long-term memory, not from the conversation archive.

A memory is about the day of its timeline row when it has one — its day anchor
(memory/day_anchors.py) or the appointment a task agent wrote in its turn — and otherwise
about the day it was said. So "Am Dienstag war ich beim Zahnarzt", told on Thursday, is a
Tuesday memory, and a Tuesday remark about Monday's cinema is a Monday one.

No model call: the day comes from `query_window` (pure), the rows from one Redis read of the
pair's entries and one PostgreSQL connection (the anchors' days, the long-term nodes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final
from zoneinfo import ZoneInfo

from psycopg_pool import AsyncConnectionPool

from novaberg.memory.context import SOURCE_LONG_TERM, SOURCE_SHORT_TERM, ContextEntry
from novaberg.memory.time_expressions.windows import TimeWindow, query_window
from novaberg.pair import Pair
from novaberg.store import day_anchors
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_fields import EntryFields

DAY_KIND: Final = "tag"
"""Only a named day is recalled this way (a month or a season would flood the context)."""

DAY_RECALL_LIMIT: Final = 5
"""Memories of the day offered per turn (short-term first, then long-term)."""

DAY_WEIGHT: Final = 1.0
"""The reducer's weight: the person asked for this day, so its memories come first."""

SUBTYPE: Final = "tag"
WEEKDAYS: Final = ("Mo", "Di", "Mi", "Do", "Fr", "Sa", "So")


@dataclass
class DayRecall:
    """The day asked about (None: the stimulus names none) and its memories."""

    window: TimeWindow | None = None
    entries: list[ContextEntry] = field(default_factory=list)

    def as_log(self) -> dict[str, Any] | None:
        if self.window is None:
            return None
        return {
            "tag": self.window.start.date().isoformat(),
            "kzg": sum(1 for e in self.entries if e.source == SOURCE_SHORT_TERM),
            "lzg": sum(1 for e in self.entries if e.source == SOURCE_LONG_TERM),
        }


def asked_day(text: str, now: datetime, tz: ZoneInfo) -> TimeWindow | None:
    """The day the text asks about, or None (no day, a longer span, or the future)."""
    window = query_window(text, now, tz)
    return window if window is not None and window.kind == DAY_KIND else None


def _label(window: TimeWindow) -> str:
    day = window.start
    return f"{WEEKDAYS[day.weekday()]} {day:%d.%m.%Y}"


def _said_within(created_at: float | None, window: TimeWindow) -> bool:
    if created_at is None:
        return False
    moment = datetime.fromtimestamp(created_at, UTC)
    return window.start <= moment < window.end


async def recall_day(
    store: ShortTermStore,
    pool: AsyncConnectionPool,
    pair: Pair,
    text: str,
    *,
    now: datetime,
    tz: ZoneInfo,
    limit: int = DAY_RECALL_LIMIT,
) -> DayRecall:
    """The memories about the day `text` asks about (see the module docstring)."""
    window = asked_day(text, now, tz)
    if window is None:
        return DayRecall()
    rows = [
        (entry.key, EntryFields.of(entry.fields))
        for entry in await store.entries(pair, with_ttl=False)
    ]
    rows = [(key, row) for key, row in rows if row.text.strip()]
    linked = {row.timeline_id for _, row in rows if row.timeline_id is not None}
    async with pool.connection() as conn:
        on_day = await day_anchors.rows_in_window(
            conn, pair.user_id, linked, window.start, window.end
        )
        nodes = await day_anchors.long_term_of_day(conn, pair, window.start, window.end, limit)
    label = _label(window)
    short = [
        (key, row)
        for key, row in rows
        if (row.timeline_id in on_day)
        or (row.timeline_id is None and _said_within(row.created_at, window))
    ]
    short.sort(key=lambda item: -(item[1].salience or 0.0))
    entries = [
        ContextEntry(
            source=SOURCE_SHORT_TERM,
            subtype=SUBTYPE,
            text=f"Am {label}: {row.text.strip()}",
            weight=DAY_WEIGHT,
            meta={"key": key, "timeline_id": row.timeline_id, "beobachter": row.observer},
        )
        for key, row in short
    ]
    entries.extend(
        ContextEntry(
            source=SOURCE_LONG_TERM,
            subtype=SUBTYPE,
            text=f"Am {label}: {text_.strip()}",
            weight=DAY_WEIGHT,
            meta={"knoten_id": ident, "timeline_id": timeline_id, "gewicht_decay": weight},
        )
        for ident, text_, weight, timeline_id in nodes
        if text_.strip()
    )
    return DayRecall(window, entries[:limit])
