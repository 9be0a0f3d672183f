"""Pick the time parts out of a tokenised utterance (docs/behaviour/agents.md#time-parsing).

Why a hand-written scanner instead of handing the sentence to dateparser: the
utterance carries other words ("Zahnarzt am Donnerstag um 14 Uhr"), and German
spoken clocks ("dreiviertel acht", "fünf vor halb drei") are outside what
dateparser reads. The scanner walks left to right, each matcher either consumes
tokens and records one part, or declines; unknown words are skipped. The first
value of each part wins, and the first marker with a direction sets it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, cast

from novaberg.memory.time_expressions import words as w
from novaberg.memory.time_expressions.tokens import Token, number_value

Direction = Literal["forward", "backward"]
ClockKind = Literal["literal", "spoken", "meridiem"]

SHIFT_WEEKS: dict[w.Shift, int] = {"next": 1, "overnext": 2, "last": -1, "this": 0}
"""Calendar-week offset of "nächste Woche Donnerstag" and friends."""


@dataclass(slots=True)
class Parts:
    """Everything the scanner recognised; ``None`` means "not said"."""

    date: tuple[int | None, int, int] | None = None
    day_offset: int | None = None
    weekday: int | None = None
    weekday_shift: w.Shift | None = None
    week_shift: int | None = None
    duration: tuple[int, int, str] | None = None
    clock: tuple[int, int] | None = None
    clock_kind: ClockKind | None = None
    meridiem: Literal["am", "pm"] | None = None
    daypart: str | None = None
    direction: Direction | None = None
    anchor_now: bool = False
    offset_minutes: int | None = None

    def set_direction(self, direction: Direction) -> None:
        """First marker with a direction wins."""
        if self.direction is None:
            self.direction = direction

    def anything(self) -> bool:
        """Whether any time part was recognised at all."""
        return any(
            value is not None
            for value in (
                self.date,
                self.day_offset,
                self.weekday,
                self.duration,
                self.clock,
                self.daypart,
            )
        )


def _word(tokens: list[Token], index: int) -> str | None:
    if 0 <= index < len(tokens) and tokens[index].kind == "word":
        return tokens[index].text
    return None


def _number(tokens: list[Token], index: int) -> int | None:
    if 0 <= index < len(tokens):
        return number_value(tokens[index])
    return None


def _month(tokens: list[Token], index: int) -> int | None:
    word = _word(tokens, index)
    if word is None:
        return None
    return w.MONTHS.get(word) or w.MONTH_ABBREVIATIONS.get(word)


def _day_number(tokens: list[Token], index: int) -> int | None:
    if 0 <= index < len(tokens) and tokens[index].kind in ("ordinal", "number"):
        value = tokens[index].value
        if isinstance(value, int) and 1 <= value <= 31:
            return value
    return None


def _year(tokens: list[Token], index: int) -> int | None:
    if 0 <= index < len(tokens) and tokens[index].kind == "number":
        value = tokens[index].value
        if isinstance(value, int) and 1900 <= value <= 2200:
            return value
    return None


def _set_clock(
    parts: Parts,
    hour: int,
    minute: int,
    kind: ClockKind,
    meridiem: Literal["am", "pm"] | None = None,
) -> None:
    """Record the first valid clock; later ones are ignored."""
    if parts.clock is None and 0 <= hour <= 24 and 0 <= minute <= 59:
        parts.clock, parts.clock_kind, parts.meridiem = (hour % 24, minute), kind, meridiem


def _meridiem_after(tokens: list[Token], index: int) -> tuple[Literal["am", "pm"] | None, int]:
    """Read "pm" / English "am" at ``index``; returns (meridiem, tokens consumed)."""
    word = _word(tokens, index)
    if word in w.PM_WORDS:
        return "pm", 1
    if word in w.AM_WORDS:
        following = tokens[index + 1] if index + 1 < len(tokens) else None
        if following is None or (
            following.kind == "word" and following.text not in w.GERMAN_AFTER_AM
        ):
            return "am", 1
    return None, 0


# --- Matchers: (tokens, index, parts) -> tokens consumed (0 = no match) ------------


def _match_typed(tokens: list[Token], i: int, parts: Parts) -> int:
    token = tokens[i]
    if token.kind == "date":
        if parts.date is None:
            parts.date = cast(tuple[int | None, int, int], token.value)
        return 1
    if token.kind == "offset":
        parts.offset_minutes = cast(int, token.value)
        return 1
    if token.kind != "clock":
        return 0
    hour, minute = cast(tuple[int, int], token.value)
    consumed = 2 if _word(tokens, i + 1) in w.HOUR_WORDS else 1
    meridiem, extra = _meridiem_after(tokens, i + consumed)
    _set_clock(parts, hour, minute, "meridiem" if meridiem else "literal", meridiem)
    return consumed + extra


def _match_day_month(tokens: list[Token], i: int, parts: Parts) -> int:
    """ "15. Mai [2027]", "15 may", "15th of may", "may 15th [2027]"."""
    day = _day_number(tokens, i)
    if day is not None:
        gap = 1 if _word(tokens, i + 1) == "of" else 0
        month = _month(tokens, i + 1 + gap)
        end = i + 2 + gap
    else:
        month = _month(tokens, i)
        day = _day_number(tokens, i + 1)
        end = i + 2
        if day is not None and _word(tokens, end) in w.HOUR_WORDS:
            return 0
    if day is None or month is None:
        return 0
    year = _year(tokens, end)
    if parts.date is None:
        parts.date = (year, month, day)
    return end - i + (year is not None)


def _spoken_hour(tokens: list[Token], index: int) -> tuple[int, int] | None:
    """The hour of a spoken clock and the tokens it takes (with an optional "Uhr")."""
    hour = _number(tokens, index)
    if hour is None or not 1 <= hour <= 24:
        return None
    if _word(tokens, index + 1) in w.DURATION_UNITS:
        return None
    return hour, 2 if _word(tokens, index + 1) in w.HOUR_WORDS else 1


def _store_spoken(parts: Parts, total: int, hour: int) -> None:
    """Store a clock given as minutes past midnight; "halb 15" stays 24-hour."""
    kind: ClockKind = "literal" if hour > 12 else "spoken"
    _set_clock(parts, (total // 60) % 24, total % 60, kind)


def _match_spoken_clock(tokens: list[Token], i: int, parts: Parts) -> int:
    """dreiviertel/viertel/halb H, N vor/nach [halb] H, quarter/half past/to H."""
    word = _word(tokens, i)
    if word == "dreiviertel" and (found := _spoken_hour(tokens, i + 1)):
        _store_spoken(parts, found[0] * 60 - 15, found[0])
        return 1 + found[1]
    if word == "halb" and (found := _spoken_hour(tokens, i + 1)):
        _store_spoken(parts, found[0] * 60 - 30, found[0])
        return 1 + found[1]
    minutes: int | None
    if word in w.SPOKEN_QUARTERS:
        minutes = w.SPOKEN_QUARTERS[word]
        start = i + 1
    else:
        minutes = _number(tokens, i)
        if minutes is None or not 1 <= minutes <= 29 or tokens[i].kind == "ordinal":
            return 0
        start = i + 2 if _word(tokens, i + 1) in w.MINUTE_WORDS else i + 1
        if start == i + 1 and minutes % 5:
            return 0  # "zehn vor acht" yes, "3 to 5" no: bare minutes come in fives
    relation = _word(tokens, start)
    if relation in w.BEFORE_WORDS or relation in w.AFTER_WORDS:
        sign = -1 if relation in w.BEFORE_WORDS else 1
        half = 30 if _word(tokens, start + 1) == "halb" else 0
        found = _spoken_hour(tokens, start + 1 + (half > 0))
        if found is None:
            return 0
        base = found[0] * 60 - half
        _store_spoken(parts, base + sign * minutes, found[0])
        return start + 1 + (half > 0) + found[1] - i
    if word == "viertel" and (found := _spoken_hour(tokens, start)):
        _store_spoken(parts, found[0] * 60 - 45, found[0])
        return start + found[1] - i
    return 0


def _match_hour_word(tokens: list[Token], i: int, parts: Parts) -> int:
    """ "14 Uhr [30]", "drei Uhr", "3 pm", "3pm", "noon"."""
    word = _word(tokens, i)
    if word in w.CLOCK_SPECIAL:
        _set_clock(parts, *w.CLOCK_SPECIAL[word], "literal")
        return 1
    hour = _number(tokens, i)
    if hour is None or tokens[i].kind == "ordinal" or not 0 <= hour <= 24:
        return 0
    if _word(tokens, i + 1) in w.HOUR_WORDS and _word(tokens, i) not in w.ARTICLE_FORMS:
        minute = _number(tokens, i + 2)
        if minute is not None and not 0 <= minute <= 59:
            minute = None
        spoken = tokens[i].kind == "word" and 1 <= hour <= 12
        kind: ClockKind = "spoken" if spoken else "literal"
        _set_clock(parts, hour, minute or 0, kind)
        consumed = 2 if minute is None else 3
        return consumed + (_word(tokens, i + consumed) in w.MINUTE_WORDS)
    meridiem, extra = _meridiem_after(tokens, i + 1)
    if meridiem and 1 <= hour <= 12:
        _set_clock(parts, hour, 0, "meridiem", meridiem)
        return 1 + extra
    return 0


def _amount(tokens: list[Token], index: int) -> int | None:
    if _word(tokens, index) in w.ARTICLE_ONE:
        return 1
    if 0 <= index < len(tokens) and tokens[index].kind == "ordinal":
        return None
    return _number(tokens, index)


def _match_duration(tokens: list[Token], i: int, parts: Parts) -> int:
    """in/noch/vor/seit/bereits N unit; N unit ago/her (M-01..M-04)."""
    word = _word(tokens, i)
    lead = word in w.FORWARD_DURATION_WORDS or word in w.BACKWARD_DURATION_WORDS
    start = i + 1 if lead else i
    amount = _amount(tokens, start)
    unit = w.DURATION_UNITS.get(_word(tokens, start + 1) or "")
    if amount is None or unit is None:
        return 0
    backward = _word(tokens, start + 2) in w.BACKWARD_AFTER_WORDS
    if not lead and not backward:
        return 0
    sign = -1 if backward or word in w.BACKWARD_DURATION_WORDS else 1
    if parts.duration is None:
        parts.duration = (sign, amount, unit)
    parts.set_direction("backward" if sign < 0 else "forward")
    return start + 2 + backward - i


def _match_marker(tokens: list[Token], i: int, parts: Parts) -> int:
    """nächste/übernächste/letzte/diese + weekday | Woche [+ weekday] | unit (M-05..M-09)."""
    shift = w.DIRECTION_MARKERS.get(_word(tokens, i) or "")
    if shift is None:
        return 0
    following = _word(tokens, i + 1) or ""
    if shift == "this":
        parts.anchor_now = True
    elif following in w.WEEKDAYS or following in w.DURATION_UNITS:
        parts.set_direction("backward" if shift == "last" else "forward")
    if following in w.WEEKDAYS and parts.weekday is None:
        parts.weekday, parts.weekday_shift = w.WEEKDAYS[following], shift
        return 2
    if following in w.WEEK_WORDS:
        after = _word(tokens, i + 2) or ""
        if after in w.WEEKDAYS and parts.weekday is None:
            parts.weekday, parts.week_shift = w.WEEKDAYS[after], SHIFT_WEEKS[shift]
            return 3
        if parts.weekday is not None and parts.weekday_shift is None:
            parts.week_shift = SHIFT_WEEKS[shift]
            return 2
    unit = w.DURATION_UNITS.get(following)
    if unit is not None and shift != "this" and parts.duration is None:
        parts.duration = (-1 if shift == "last" else 1, abs(SHIFT_WEEKS[shift]), unit)
        return 2
    return 1


def _match_day_word(tokens: list[Token], i: int, parts: Parts) -> int:
    """heute/morgen/...; "morgen" after a day is the morning ("Montag morgen")."""
    word = _word(tokens, i)
    if word == "day" and _word(tokens, i + 1) in ("after", "before"):
        target = _word(tokens, i + 2)
        if target in ("tomorrow", "yesterday"):
            if parts.day_offset is None:
                parts.day_offset = 2 if target == "tomorrow" else -2
            return 3
    if word not in w.DAY_WORDS:
        return 0
    previous = _word(tokens, i - 1)
    names_a_day = previous in w.WEEKDAYS or previous in w.DAY_WORDS or previous == "am"
    if word == "morgen" and names_a_day:
        parts.daypart = parts.daypart or "morgens"
        return 1
    if parts.day_offset is None:
        parts.day_offset = w.DAY_WORDS[word]
    if word == "tonight":
        parts.daypart = parts.daypart or "evening"
    return 1


def _match_simple_words(tokens: list[Token], i: int, parts: Parts) -> int:
    """Time-of-day word, weekday, "seit"."""
    word = _word(tokens, i)
    if word in w.DAYPART_HOURS:
        parts.daypart = parts.daypart or word
        return 1
    if word in w.WEEKDAYS:
        if parts.weekday is None:
            parts.weekday = w.WEEKDAYS[word]
        return 1
    if word in w.SINCE_WORDS:
        parts.set_direction("backward")
        return 1
    return 0


def _match_bare_hour(tokens: list[Token], i: int, parts: Parts) -> int:
    """ "um 9", "at 9", "um drei": a number right after a clock preposition."""
    if _word(tokens, i - 1) not in w.CLOCK_PREPOSITIONS:
        return 0
    hour = _number(tokens, i)
    if hour is None and tokens[i].kind == "ordinal":
        hour = cast(int, tokens[i].value)
    if hour is None or not 0 <= hour <= 24:
        return 0
    if _word(tokens, i + 1) in w.DURATION_UNITS or _month(tokens, i + 1) is not None:
        return 0
    _set_clock(parts, hour, 0, "spoken" if 1 <= hour <= 12 else "literal")
    return 1


MATCHERS: tuple[Callable[[list[Token], int, Parts], int], ...] = (
    _match_typed,
    _match_day_month,
    _match_spoken_clock,
    _match_hour_word,
    _match_duration,
    _match_marker,
    _match_day_word,
    _match_simple_words,
    _match_bare_hour,
)
"""Tried in this order at every position; the first that consumes wins."""


def scan(tokens: list[Token]) -> Parts:
    """Walk the tokens once and collect the recognised parts."""
    parts = Parts()
    index = 0
    while index < len(tokens):
        for matcher in MATCHERS:
            consumed = matcher(tokens, index, parts)
            if consumed:
                index += consumed
                break
        else:
            index += 1
    return parts
