"""German and English time expressions -> an aware datetime (docs/behaviour/agents.md#time-parsing).

Why this shape: the timeline agent needs more than a datetime. When the user
moves an appointment ("Verschieb den Zahnarzt auf 16 Uhr") the caller keeps the
parts the user did not say, so ``TimeVector`` reports whether a day and a clock
were recognised. The clock is never read here: ``now`` (the speaking time) is
always passed in, which keeps the function pure and testable.

Anchors:
* day words (heute, morgen, tomorrow ...) count from ``now``;
* weekdays, durations, dates without a year and a bare clock count from
  ``reference`` when given (the event being moved), else from ``now``;
* "diese*"/"this" (M-09) anchors at ``now`` again.

Resolution order when several parts are present: explicit date > day word >
duration > weekday; the clock is combined with whichever day wins. A weekday
equal to the anchor's weekday means next week's (say "heute" for today).
Durations ("in zwei Wochen", "vor 3 Tagen") are computed by dateparser; text
in which the scanner recognises nothing but that names a month ("im März") is
handed to dateparser whole.

Clock: digits are 24-hour ("7 Uhr" = 07:00); a spoken 12-hour clock without a
time-of-day word lands in 08:00-19:59 ("halb drei" = 14:30, "viertel vor acht"
= 19:45, "um 9" = 09:00); "morgens", "abends", "nachts", "pm" ... override.

``reference_mode``: "relativ_rueckwaerts" after a backward marker (vor, seit,
letzte ...); "absolut" for a calendar date, a day word or "diese*"; otherwise
"relativ" (weekday, duration or clock counted from the anchor).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, timezone
from typing import Any, Literal
from zoneinfo import ZoneInfo

import dateparser

from novaberg.memory.time_expressions.grammar import Parts, scan
from novaberg.memory.time_expressions.tokens import Token, tokenise
from novaberg.memory.time_expressions.words import (
    DATEPARSER_UNITS,
    DAYPART_HOURS,
    DAYPART_KIND,
    MONTH_ABBREVIATIONS,
    MONTHS,
)

__all__ = ["MAX_FUTURE", "MAX_PAST", "ReferenceMode", "TimeVector", "format_time", "parse_time"]

ReferenceMode = Literal["absolut", "relativ", "relativ_rueckwaerts"]

MAX_PAST = timedelta(days=730)
"""Results earlier than reference - 730 days are rejected."""

MAX_FUTURE = timedelta(days=1825)
"""Results later than reference + 1825 days are rejected."""

EXACT_UNITS = frozenset({"minutes", "hours"})
"""Duration units whose result carries a clock ("in 2 Stunden")."""

YEAR_SEARCH = 8
"""How many years to look ahead/back for a date without a year (29 February)."""

DATEPARSER_LANGUAGES = ["de", "en"]

FIRST_WINDOW_HOUR = 8
"""A spoken 12-hour clock without a time-of-day word lands in 08:00-19:59."""


@dataclass(frozen=True, slots=True)
class TimeVector:
    """A parsed time plus what the user actually said.

    ``when`` is aware, in the requested zone, minute precision. Without a
    recognised clock it is local midnight of the day; without a recognised day
    it is the next (or, looking back, previous) occurrence of the clock.
    """

    when: datetime
    day_recognised: bool
    clock_recognised: bool
    reference_mode: ReferenceMode


# --- Clock resolution ----------------------------------------------------------------


def _apply_daypart(hour12: int, daypart: str) -> int:
    """Shift a 12-hour reading by a time-of-day word ("drei Uhr nachmittags" -> 15)."""
    kind = DAYPART_KIND[daypart]
    if kind == "noon":
        return hour12 + 12 if hour12 <= 5 else hour12
    if kind == "afternoon":
        return hour12 + 12
    if kind == "night":
        return hour12 + 12 if hour12 >= 6 else hour12
    return hour12


def _resolve_clock(parts: Parts) -> tuple[int, int] | None:
    """The final 24-hour clock, or the time-of-day fallback, or None.

    Explicit digits ("7 Uhr", "07:30") are read as 24-hour time. A spoken
    12-hour clock ("halb drei", "um drei", "viertel vor acht") without a
    time-of-day word is placed in 08:00-19:59, the window of ordinary
    appointments: "Donnerstag um halb drei" is 14:30, "um 9" is 09:00.
    """
    if parts.clock is None:
        if parts.daypart is None:
            return None
        return DAYPART_HOURS.get(parts.daypart, 18), 0
    hour, minute = parts.clock
    if parts.clock_kind == "meridiem":
        return hour % 12 + (12 if parts.meridiem == "pm" else 0), minute
    if parts.clock_kind == "literal" and (hour > 12 or parts.daypart is None):
        return hour, minute
    hour12 = hour % 12
    if parts.daypart is not None:
        return _apply_daypart(hour12, parts.daypart) % 24, minute
    return (hour12 + 12 if hour12 < FIRST_WINDOW_HOUR else hour12), minute


def _require_aware(value: datetime, name: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware")


def _pick_year(month: int, day: int, anchor: date, backward: bool) -> date | None:
    """The nearest valid date on/after (or on/before, looking back) the anchor."""
    step = -1 if backward else 1
    for offset in range(YEAR_SEARCH):
        try:
            candidate = date(anchor.year + step * offset, month, day)
        except ValueError:
            continue
        if (candidate <= anchor) if backward else (candidate >= anchor):
            return candidate
    return None


def _weekday_date(parts: Parts, anchor: date, backward: bool) -> date:
    """Weekday -> date: next occurrence, previous one, this week's, or a calendar week."""
    weekday = parts.weekday
    assert weekday is not None
    if parts.week_shift is not None:
        monday = anchor - timedelta(days=anchor.weekday())
        return monday + timedelta(weeks=parts.week_shift, days=weekday)
    if parts.weekday_shift == "this":
        return anchor + timedelta(days=(weekday - anchor.weekday()) % 7)
    if parts.weekday_shift == "last" or (parts.weekday_shift is None and backward):
        return anchor - timedelta(days=(anchor.weekday() - weekday) % 7 or 7)
    ahead = (weekday - anchor.weekday()) % 7 or 7
    return anchor + timedelta(days=ahead + (7 if parts.weekday_shift == "overnext" else 0))


def _dateparser_settings(base: datetime, backward: bool) -> dict[str, Any]:
    return {
        "RELATIVE_BASE": base,
        "PREFER_DATES_FROM": "past" if backward else "future",
        "DATE_ORDER": "DMY",
        "PREFER_DAY_OF_MONTH": "first",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }


def _shift_by_duration(base: datetime, duration: tuple[int, int, str]) -> datetime | None:
    """Let dateparser do the calendar arithmetic ("in 1 Monat" from 31 Jan, leap years)."""
    sign, amount, unit = duration
    phrase = f"{'in' if sign > 0 else 'vor'} {amount} {DATEPARSER_UNITS[unit]}"
    # Not the full settings: PREFER_DAY_OF_MONTH would snap "in 1 Monat" to the 1st.
    settings = {"RELATIVE_BASE": base, "RETURN_AS_TIMEZONE_AWARE": False}
    return dateparser.parse(phrase, languages=["de"], settings=settings)


def _localise(naive: datetime, tz: ZoneInfo, offset_minutes: int | None) -> datetime:
    """Wall time -> aware; an explicit offset picks the instant, a DST gap moves forward."""
    naive = naive.replace(second=0, microsecond=0, tzinfo=None)
    if offset_minutes is not None:
        fixed = timezone(timedelta(minutes=offset_minutes))
        return naive.replace(tzinfo=fixed).astimezone(tz)
    return naive.replace(tzinfo=tz).astimezone(UTC).astimezone(tz)


def _resolve_day(
    parts: Parts, speaking: datetime, anchor: datetime, backward: bool
) -> tuple[date | None, datetime | None]:
    """The day the parts name, or an exact naive datetime from a short duration."""
    if parts.date is not None:
        year, month, day = parts.date
        if year is None:
            return _pick_year(month, day, anchor.date(), backward), None
        try:
            return date(year, month, day), None
        except ValueError:
            return None, None
    if parts.day_offset is not None:
        return speaking.date() + timedelta(days=parts.day_offset), None
    if parts.duration is not None:
        shifted = _shift_by_duration(anchor.replace(tzinfo=None), parts.duration)
        if shifted is None:
            return None, None
        if parts.duration[2] in EXACT_UNITS:
            return None, shifted
        return shifted.date(), None
    if parts.weekday is not None:
        return _weekday_date(parts, anchor.date(), backward), None
    return None, None


def _reference_mode(parts: Parts) -> ReferenceMode:
    if parts.direction == "backward":
        return "relativ_rueckwaerts"
    if parts.anchor_now or parts.date is not None or parts.day_offset is not None:
        return "absolut"
    return "relativ"


def _bare_clock(anchor: datetime, clock: time, backward: bool) -> datetime:
    """A clock without a day: the anchor's day if still ahead, else the next (previous) day."""
    candidate = datetime.combine(anchor.date(), clock)
    wall = anchor.replace(tzinfo=None)
    if backward and candidate >= wall:
        return candidate - timedelta(days=1)
    if not backward and candidate <= wall:
        return candidate + timedelta(days=1)
    return candidate


def _fallback(
    text: str, tokens: list[Token], anchor: datetime, backward: bool
) -> tuple[datetime, bool] | None:
    """Hand the whole (normalised, then raw) text to dateparser; (naive, has clock).

    Only when a month is named ("im März", "August 2027"): dateparser reads a
    lone number as a day of the current month, which must not turn "3" into a date.
    """
    if not any(token.text in MONTHS or token.text in MONTH_ABBREVIATIONS for token in tokens):
        return None
    normalised = " ".join(token.text for token in tokens)
    settings = _dateparser_settings(anchor.replace(tzinfo=None), backward)
    for candidate in dict.fromkeys((normalised, text.strip())):
        if not candidate:
            continue
        parsed = dateparser.parse(candidate, languages=DATEPARSER_LANGUAGES, settings=settings)
        if parsed is not None:
            return parsed, parsed.time() != time(0, 0)
    return None


def parse_time(
    text: str,
    *,
    now: datetime,
    tz: ZoneInfo,
    reference: datetime | None = None,
    prefer_future: bool = True,
) -> TimeVector | None:
    """Parse a time expression spoken at ``now``; None if there is none or it is out of range."""
    _require_aware(now, "now")
    if reference is not None:
        _require_aware(reference, "reference")
    speaking = now.astimezone(tz)
    limit_anchor = (reference or now).astimezone(tz)
    tokens = tokenise(text)
    parts = scan(tokens)
    anchor = speaking if parts.anchor_now else limit_anchor
    backward = parts.direction == "backward" or (parts.direction is None and not prefer_future)

    if not parts.anything():
        found = _fallback(text, tokens, anchor, backward)
        if found is None:
            return None
        naive, has_clock = found
        vector = TimeVector(_localise(naive, tz, None), True, has_clock, "absolut")
        return _within_window(vector, limit_anchor)

    hour_minute = _resolve_clock(parts)
    clock = time(*hour_minute) if hour_minute is not None else None
    day, exact = _resolve_day(parts, speaking, anchor, backward)
    if exact is not None:
        naive, day_known, clock_known = exact, True, True
    elif day is not None:
        naive, day_known, clock_known = (
            datetime.combine(day, clock or time(0, 0)),
            True,
            clock is not None,
        )
    elif clock is not None and parts.date is None and parts.duration is None:
        naive, day_known, clock_known = _bare_clock(anchor, clock, backward), False, True
    else:
        return None
    vector = TimeVector(
        _localise(naive, tz, parts.offset_minutes), day_known, clock_known, _reference_mode(parts)
    )
    return _within_window(vector, limit_anchor)


def _within_window(vector: TimeVector, anchor: datetime) -> TimeVector | None:
    if anchor - MAX_PAST <= vector.when <= anchor + MAX_FUTURE:
        return vector
    return None


def _offset_text(local: datetime) -> str:
    offset = local.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def format_time(value: TimeVector | datetime, tz: ZoneInfo) -> str:
    """A German expression that ``parse_time`` reads back to the same minute.

    "am 06.08.2026 um 14:30"; in the repeated hour at the end of summer time
    the UTC offset is appended ("... um 02:30 UTC+01:00") so the instant stays
    unambiguous.
    """
    moment = value.when if isinstance(value, TimeVector) else value
    _require_aware(moment, "value")
    local = moment.astimezone(tz)
    text = f"am {local:%d.%m.%Y} um {local:%H:%M}"
    if local.replace(fold=1 - local.fold).utcoffset() != local.utcoffset():
        text += f" {_offset_text(local)}"
    return text
