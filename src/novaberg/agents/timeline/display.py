"""Local-time display and time windows for the timeline agent (DB holds UTC)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

WEEKDAYS = ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag")

DEFAULT_WINDOW = (timedelta(days=3), timedelta(days=14))
"""Read without target or time: now − 3 d … now + 14 d."""


def local_midnight(day: date, tz: ZoneInfo) -> datetime:
    return datetime.combine(day, time(0, 0), tzinfo=tz)


def day_window(day: date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    return local_midnight(day, tz), local_midnight(day + timedelta(days=1), tz)


def week_window(day: date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    monday = day - timedelta(days=day.weekday())
    return local_midnight(monday, tz), local_midnight(monday + timedelta(days=7), tz)


def month_window(day: date, tz: ZoneInfo) -> tuple[datetime, datetime]:
    first = day.replace(day=1)
    following = (first + timedelta(days=32)).replace(day=1)
    return local_midnight(first, tz), local_midnight(following, tz)


def datum(row: dict[str, Any], tz: ZoneInfo) -> str:
    """ "dd.mm.yyyy HH:MM" (clock only at minute precision)."""
    local = row["event_time"].astimezone(tz)
    if row.get("precision") == "minute":
        return f"{local:%d.%m.%Y %H:%M}"
    return f"{local:%d.%m.%Y}"


WEEKDAYS_SHORT = ("Mo", "Di", "Mi", "Do", "Fr", "Sa", "So")

KIND_LABELS = {
    "termin": "Termin",
    "deadline": "Frist",
    "geburtstag": "Geburtstag",
    "jahrestag": "Jahrestag",
    "erinnerung": "Erinnerung",
}
"""How a receipt names an entry of each type."""


def short_datum(row: dict[str, Any], tz: ZoneInfo) -> str:
    """ "Mo 12.05. 10:00" (clock only at minute precision): a receipt's time."""
    local = row["event_time"].astimezone(tz)
    day = f"{WEEKDAYS_SHORT[local.weekday()]} {local:%d.%m.}"
    return f"{day} {local:%H:%M}" if row.get("precision") == "minute" else day


def receipt_label(row: dict[str, Any], tz: ZoneInfo, change: str = "") -> str:
    """ "Termin: Meeting, Mo 12.05. 10:00" — what a receipt shows of an entry; `change`
    ("verschoben", "gelöscht") follows the kind when the entry was changed."""
    kind = KIND_LABELS.get(str(row.get("event_type") or ""), "Termin")
    lead = f"{kind} {change}" if change else kind
    return f"{lead}: {row['title']}, {short_datum(row, tz)}"


def line(row: dict[str, Any], tz: ZoneInfo) -> str:
    """`[type] dd.mm.yyyy[ HH:MM]: title[ — details]`."""
    details = f" — {row['details']}" if row.get("details") else ""
    return f"[{row['event_type']}] {datum(row, tz)}: {row['title']}{details}"


def spoken_now(now: datetime, tz: ZoneInfo) -> str:
    local = now.astimezone(tz)
    return f"{WEEKDAYS[local.weekday()]}, {local:%d.%m.%Y %H:%M}"


def candidate(row: dict[str, Any], tz: ZoneInfo) -> dict[str, Any]:
    local = row["event_time"].astimezone(tz)
    return {
        "id": row["id"],
        "title": row["title"],
        "datum": f"{local:%d.%m.%Y %H:%M}",
        "typ": row["event_type"],
    }
