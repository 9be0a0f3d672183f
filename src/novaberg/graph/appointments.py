"""Which appointments a turn reads, and how they are shown
(docs/behaviour/nodes.md#appointment-reading). Pure: no I/O.

`appointment_window` turns the router's `timeline_query` into a time window or a title
search: `range` with `date` or `from`/`to` (ISO dates or date-times; a date means its
whole local day), or only a `direction`; `search` with `keyword` or `title`. Without a
question (`needs_timeline` false) — and for any unreadable question, which is flagged —
it is the **proactive window**: today and tomorrow, local time, so Nova knows what lies
immediately ahead without anybody asking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, Final
from zoneinfo import ZoneInfo

from novaberg.wire import TIMELINE_MEMORY_ANCHOR

KIND_RANGE: Final = "range"
KIND_SEARCH: Final = "search"
KIND_PROACTIVE: Final = "proaktiv"

PROACTIVE_DAYS: Final = 2
"""The proactive window: the local day of `now` and the next one."""

DIRECTION_SPAN: Final = timedelta(days=14)
BACKWARD_SPAN: Final = timedelta(days=14)
BOTH_BEFORE: Final = timedelta(days=3)
"""A range with only a direction: forward now … +14 d, backward −14 d … now, both −3 d … +14 d."""

ANCHOR_TYPE: Final = TIMELINE_MEMORY_ANCHOR
"""Timeline rows of this type anchor memories to a day; they are not appointments."""

MAX_APPOINTMENTS: Final = 10


@dataclass(frozen=True, slots=True)
class Window:
    kind: str
    start: datetime | None = None
    end: datetime | None = None
    search: str = ""
    direction: str = "forward"
    unreadable: str = ""
    """Why the router's question could not be read ("" = read, or none asked)."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "art": self.kind,
            "richtung": self.direction,
            "von": self.start.isoformat() if self.start else None,
            "bis": self.end.isoformat() if self.end else None,
            "suche": self.search,
            "unlesbar": self.unreadable,
        }


def _midnight(day: date, tz: ZoneInfo) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=tz)


def proactive_bounds(now: datetime, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """[start, end) of the proactive window: today and tomorrow in `tz`."""
    today = now.astimezone(tz).date()
    return _midnight(today, tz), _midnight(today + timedelta(days=PROACTIVE_DAYS), tz)


def proactive_window(now: datetime, tz: ZoneInfo, unreadable: str = "") -> Window:
    start, end = proactive_bounds(now, tz)
    return Window(KIND_PROACTIVE, start, end, unreadable=unreadable)


def _parse_point(text: str, tz: ZoneInfo) -> tuple[datetime, bool] | None:
    """(moment, is_whole_day) of an ISO date or date-time; None if unreadable."""
    text = text.strip()
    if not text:
        return None
    try:
        if len(text) == 10:
            return _midnight(date.fromisoformat(text), tz), True
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=tz)), False


def _range_window(query: Mapping[str, Any], now: datetime, tz: ZoneInfo) -> Window:
    direction = str(query.get("direction") or "forward")
    if direction not in ("forward", "backward", "both"):
        return proactive_window(now, tz, f"richtung {direction!r}")
    day_text = str(query.get("date") or "")
    start_text = str(query.get("from") or "") or day_text
    end_text = str(query.get("to") or "")
    if start_text:
        start = _parse_point(start_text, tz)
        if start is None:
            return proactive_window(now, tz, f"von {start_text!r}")
        end = _parse_point(end_text, tz) if end_text else None
        if end_text and end is None:
            return proactive_window(now, tz, f"bis {end_text!r}")
        if end is None:
            stop = start[0] + timedelta(days=1) if start[1] else start[0] + timedelta(hours=1)
        else:
            stop = end[0] + timedelta(days=1) if end[1] else end[0]
        if stop <= start[0]:
            return proactive_window(now, tz, "bis vor von")
        return Window(KIND_RANGE, start[0], stop, direction=direction)
    if direction == "backward":
        return Window(KIND_RANGE, now - BACKWARD_SPAN, now, direction=direction)
    if direction == "both":
        return Window(KIND_RANGE, now - BOTH_BEFORE, now + DIRECTION_SPAN, direction=direction)
    return Window(KIND_RANGE, now, now + DIRECTION_SPAN, direction=direction)


def appointment_window(
    needs_timeline: bool, query: Mapping[str, Any] | None, now: datetime, tz: ZoneInfo
) -> Window:
    """The window the turn reads (see the module docstring)."""
    if not needs_timeline or not query:
        return proactive_window(now, tz)
    kind = query.get("type")
    if kind == KIND_RANGE:
        return _range_window(query, now, tz)
    if kind == KIND_SEARCH:
        term = str(query.get("keyword") or query.get("title") or "").strip()
        if not term:
            return proactive_window(now, tz, "suche ohne begriff")
        return Window(KIND_SEARCH, search=term, direction=str(query.get("direction") or "forward"))
    return proactive_window(now, tz, f"art {kind!r}")


@dataclass
class Reading:
    """The turn's `appointment_reading`."""

    window: Window
    appointments: list[dict[str, Any]] = field(default_factory=list)
    failed: bool = False
    dropped: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "fenster": self.window.as_dict(),
            "termine": list(self.appointments),
            "failed": self.failed,
            "verworfen": self.dropped,
        }


def local_time(moment: datetime, precision: str, tz: ZoneInfo) -> str:
    local = moment.astimezone(tz)
    weekday = ("Mo", "Di", "Mi", "Do", "Fr", "Sa", "So")[local.weekday()]
    if precision == "minute":
        return f"{weekday} {local:%d.%m.%Y %H:%M}"
    return f"{weekday} {local:%d.%m.%Y}"


def appointments_from_rows(
    rows: Sequence[Mapping[str, Any]], tz: ZoneInfo
) -> tuple[list[dict[str, Any]], int]:
    """(appointments, dropped): memory-anchor rows and rows without time or title are
    dropped; at most MAX_APPOINTMENTS, earliest first."""
    kept: list[dict[str, Any]] = []
    dropped = 0
    for row in rows:
        moment = row.get("event_time")
        title = str(row.get("title") or "").strip()
        if row.get("event_type") == ANCHOR_TYPE or not isinstance(moment, datetime) or not title:
            dropped += 1
            continue
        kept.append(
            {
                "id": row.get("id"),
                "titel": title,
                "zeit": local_time(moment, str(row.get("precision") or ""), tz),
                "typ": row.get("event_type") or "termin",
                "details": str(row.get("details") or ""),
            }
        )
    return kept[:MAX_APPOINTMENTS], dropped + max(0, len(kept) - MAX_APPOINTMENTS)


def appointments_text(reading: Mapping[str, Any] | None, now_text: str = "") -> str:
    """The `[TERMINE]` block body; "" when nothing was read or nothing is there.

    A failed read says so (Nova must not claim an empty calendar she could not see)."""
    if not reading:
        return ""
    if reading.get("failed"):
        return "Die Termine konnten gerade nicht gelesen werden."
    items = reading.get("termine") or []
    if not items:
        return ""
    lines = [f"Jetzt: {now_text}"] if now_text else []
    for item in items:
        details = f" — {item['details']}" if item.get("details") else ""
        lines.append(f"- {item['zeit']}: {item['titel']}{details}")
    return "\n".join(lines)
