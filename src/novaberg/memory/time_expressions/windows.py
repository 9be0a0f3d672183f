"""The time window a memory question names: "letzten Sommer", "im März", "vor zwei Wochen",
"gestern", "last year". A memory search keeps only what was said inside it.

Looking back is the default (a memory lies in the past), so a bare "März" or "Sommer" is
the most recent one that has begun; "letzte*"/"last" the most recent one that has ended;
"diese*"/"this" the one of this year (week, month); "vorletzte*" the one before the last. A
year after a month or season picks that year's ("im März 2024", "Sommer letzten Jahres").
Days (a date, "gestern", a weekday) are resolved by `parser.parse_time`, which the
timeline agent uses too. A window that begins in the future is no memory question ("Guten
Morgen") and gives None. Pure: `now` is passed in.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Final, Literal
from zoneinfo import ZoneInfo

from novaberg.memory.time_expressions.grammar import scan
from novaberg.memory.time_expressions.parser import parse_time
from novaberg.memory.time_expressions.tokens import Token, number_value, tokenise
from novaberg.memory.time_expressions.words import (
    ARTICLE_ONE,
    DIRECTION_MARKERS,
    DURATION_UNITS,
    MONTHS,
)

Shift = Literal["last", "this", "before_last", "next"]

SEASONS: Final[dict[str, str]] = {
    "frühling": "spring",
    "frühjahr": "spring",
    "sommer": "summer",
    "herbst": "autumn",
    "winter": "winter",
    "spring": "spring",
    "summer": "summer",
    "autumn": "autumn",
}
"""Season words ("fall" is left out: English "in that case" and German "Fall" collide)."""

SEASON_START: Final[dict[str, int]] = {"spring": 3, "summer": 6, "autumn": 9, "winter": 12}
"""Meteorological seasons: three months from this one (winter runs into the next year)."""

BEFORE_LAST_WORDS: Final = frozenset(
    {"vorletzte", "vorletzten", "vorletzter", "vorletztes", "vorletztem"}
)
YEAR_WORDS: Final = frozenset({"jahr", "jahres", "jahre", "year"})
WEEK_WORDS: Final = frozenset({"woche", "week"})
MONTH_WORDS: Final = frozenset({"monat", "monats", "month"})
AGO_WORDS: Final = frozenset({"ago", "her"})
AMBIGUOUS_MONTHS: Final = frozenset({"may", "march"})
"""English months that are also verbs: a month only after "in"/a marker or before a year."""

MONTH_CUES: Final = frozenset({"in", "im", "last", "this", "since"})
GREETING_WORDS: Final = frozenset({"guten", "gute", "good"})
""""Guten Morgen" is a greeting, not tomorrow."""

FIRST_YEAR: Final = 1970
LAST_YEAR: Final = 2100
HALF_SPANS: Final[dict[str, timedelta]] = {
    "days": timedelta(days=1),
    "weeks": timedelta(days=4),
    "months": timedelta(days=16),
    "years": timedelta(days=183),
}
""""vor zwei Wochen" names a point only roughly: the window reaches this far to each side."""


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """[start, end) in the given zone, and what kind of expression named it."""

    start: datetime
    end: datetime
    kind: str

    def as_json(self) -> dict[str, str]:
        return {"von": self.start.isoformat(), "bis": self.end.isoformat(), "art": self.kind}


def _midnight(day: date, tz: ZoneInfo) -> datetime:
    return datetime.combine(day, time(0, 0), tzinfo=tz)


def _month_start(year: int, month: int) -> date:
    return date(year + (month - 1) // 12, (month - 1) % 12 + 1, 1)


def _span(first: date, months: int, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """[first of a month, first of the month `months` later)."""
    end = _month_start(first.year, first.month + months)
    return _midnight(first, tz), _midnight(end, tz)


def _shift_of(words: list[str], index: int) -> Shift | None:
    """The marker right before position `index` (one or two words back: "im letzten März")."""
    for back in (1, 2):
        if index - back < 0:
            return None
        word = words[index - back]
        if word in BEFORE_LAST_WORDS:
            return "before_last"
        marker = DIRECTION_MARKERS.get(word)
        if marker in ("last", "this"):
            return marker  # type: ignore[return-value]
        if marker in ("next", "overnext"):
            return "next"  # the future: no memory (the window is dropped at the end)
    return None


def _pick(
    instances: list[tuple[datetime, datetime]], now: datetime, shift: Shift | None
) -> tuple[datetime, datetime] | None:
    """From yearly instances (oldest first): begun (none), ended (last, before_last), or
    the one beginning in the current year (this)."""
    if shift == "this":
        this_year = [i for i in instances if i[0].year == now.year]
        return this_year[-1] if this_year else None
    if shift == "next":
        coming = [i for i in instances if i[0] > now]
        return coming[0] if coming else None
    if shift in ("last", "before_last"):
        ended = [i for i in instances if i[1] <= now]
        skip = 1 if shift == "last" else 2
        return ended[-skip] if len(ended) >= skip else None
    begun = [i for i in instances if i[0] <= now]
    return begun[-1] if begun else None


def _year_spec(tokens: list[Token], words: list[str], now: datetime) -> int | None:
    """A year the text names: "2024", "letztes Jahr", "dieses Jahr", "vorletztes Jahr"."""
    for index, token in enumerate(tokens):
        if token.kind == "number" and FIRST_YEAR <= int(token.value) <= LAST_YEAR:  # type: ignore[call-overload]
            return int(token.value)  # type: ignore[call-overload]
        if words[index] in YEAR_WORDS:
            shift = _shift_of(words, index)
            offset = {"last": -1, "before_last": -2, "this": 0, "next": 1}.get(shift or "")
            if offset is not None:
                return now.year + offset
    return None


def _periodic(
    start_month: int, months: int, year: int | None, now: datetime, shift: Shift | None
) -> tuple[datetime, datetime]:
    """A month or season: the given year's, else the instance the shift picks."""
    tz = now.tzinfo
    assert isinstance(tz, ZoneInfo)
    if year is not None:
        first = date(year - 1, 12, 1) if start_month == 12 and months == 3 else None
        return _span(first or date(year, start_month, 1), months, tz)
    instances = [
        _span(date(now.year + offset, start_month, 1), months, tz) for offset in range(-3, 2)
    ]
    picked = _pick(instances, now, shift)
    return picked if picked is not None else instances[-1]


def _season(
    tokens: list[Token], words: list[str], now: datetime, year: int | None
) -> TimeWindow | None:
    for index, word in enumerate(words):
        season = SEASONS.get(word)
        if season is not None:
            start, end = _periodic(SEASON_START[season], 3, year, now, _shift_of(words, index))
            return TimeWindow(start, end, "jahreszeit")
    return None


def _month(
    tokens: list[Token], words: list[str], now: datetime, year: int | None
) -> TimeWindow | None:
    for index, word in enumerate(words):
        month = MONTHS.get(word)
        if month is None:
            continue
        if index and tokens[index - 1].kind in ("number", "ordinal"):
            continue  # "3. März" is a day, resolved by the parser
        if word in AMBIGUOUS_MONTHS:
            cue = index > 0 and words[index - 1] in MONTH_CUES
            if not cue and year is None:
                continue
        start, end = _periodic(month, 1, year, now, _shift_of(words, index))
        return TimeWindow(start, end, "monat")
    return None


def _relative_unit(words: list[str], now: datetime) -> TimeWindow | None:
    """ "letzte Woche", "diesen Monat", "last year" (a calendar week, month, year)."""
    tz = now.tzinfo
    assert isinstance(tz, ZoneInfo)
    local = now.astimezone(tz)
    for index, word in enumerate(words):
        shift = _shift_of(words, index)
        if shift is None:
            continue
        step = {"this": 0, "last": -1, "before_last": -2, "next": 1}[shift]
        if word in WEEK_WORDS:
            monday = local.date() - timedelta(days=local.weekday()) + timedelta(weeks=step)
            return TimeWindow(
                _midnight(monday, tz), _midnight(monday + timedelta(days=7), tz), "woche"
            )
        if word in MONTH_WORDS:
            start, end = _span(_month_start(local.year, local.month + step), 1, tz)
            return TimeWindow(start, end, "monat")
        if word in YEAR_WORDS:
            start, end = _span(date(local.year + step, 1, 1), 12, tz)
            return TimeWindow(start, end, "jahr")
    return None


def _ago(tokens: list[Token], words: list[str], now: datetime) -> TimeWindow | None:
    """ "vor zwei Wochen", "vor einem Monat", "three days ago": the point ± half a unit."""
    for index, word in enumerate(words):
        unit = DURATION_UNITS.get(word)
        if unit not in HALF_SPANS or index == 0:
            continue
        amount = number_value(tokens[index - 1])
        if amount is None and words[index - 1] in ARTICLE_ONE:
            amount = 1
        if amount is None:
            continue
        german = index >= 2 and words[index - 2] == "vor"
        english = index + 1 < len(words) and words[index + 1] in AGO_WORDS
        if not (german or english):
            continue
        days = {"days": 1, "weeks": 7, "months": 30, "years": 365}[unit] * amount  # type: ignore[index]
        point = now - timedelta(days=days)
        half = HALF_SPANS[unit]  # type: ignore[index]
        return TimeWindow(point - half, point + half, "vor")
    return None


def _day(text: str, tokens: list[Token], now: datetime, tz: ZoneInfo) -> TimeWindow | None:
    """A named day (date, "gestern", weekday) through the timeline's parser."""
    parts = scan(tokens)
    if parts.date is None and parts.day_offset is None and parts.weekday is None:
        return None
    kept = " ".join(t.text for t in tokens)
    vector = parse_time(kept or text, now=now, tz=tz, prefer_future=False)
    if vector is None or not vector.day_recognised:
        return None
    day = vector.when.astimezone(tz).date()
    return TimeWindow(_midnight(day, tz), _midnight(day + timedelta(days=1), tz), "tag")


def _without_greetings(tokens: list[Token]) -> list[Token]:
    return [
        token
        for index, token in enumerate(tokens)
        if not (
            index
            and token.text in ("morgen", "morning")
            and tokens[index - 1].text in GREETING_WORDS
        )
    ]


def query_window(text: str, now: datetime, tz: ZoneInfo) -> TimeWindow | None:
    """The window the text names, or None (no time expression, or one in the future)."""
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    local = now.astimezone(tz)
    tokens = _without_greetings(tokenise(text))
    words = [token.text for token in tokens]
    year = _year_spec(tokens, words, local)
    window = (
        _day(text, tokens, local, tz)
        or _ago(tokens, words, local)
        or _month(tokens, words, local, year)
        or _season(tokens, words, local, year)
        or _relative_unit(words, local)
    )
    if window is None and year is not None:
        start, end = _span(date(year, 1, 1), 12, tz)
        window = TimeWindow(start, end, "jahr")
    if window is None or window.start > now:
        return None
    return window
