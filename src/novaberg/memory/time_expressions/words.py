"""Word tables for the time parser (docs/behaviour/agents.md#time-parsing).

Why a separate module: the tables are data that the tokeniser, the fuzzy
fixer and the grammar share. All German and English time words live in this
file and nowhere else.
"""

from __future__ import annotations

from typing import Literal

# --- Word tables ----------------------------------------------------------------

WEEKDAYS: dict[str, int] = {
    "montag": 0,
    "dienstag": 1,
    "mittwoch": 2,
    "donnerstag": 3,
    "freitag": 4,
    "samstag": 5,
    "sonnabend": 5,
    "sonntag": 6,
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
}
"""Weekday name -> Python weekday number (Monday = 0)."""

MONTHS: dict[str, int] = {
    "januar": 1,
    "jänner": 1,
    "februar": 2,
    "märz": 3,
    "april": 4,
    "mai": 5,
    "juni": 6,
    "juli": 7,
    "august": 8,
    "september": 9,
    "oktober": 10,
    "november": 11,
    "dezember": 12,
    "january": 1,
    "february": 2,
    "march": 3,
    "may": 5,
    "june": 6,
    "july": 7,
    "october": 10,
    "december": 12,
}
"""Full month names; these are also targets of the fuzzy fixer."""

MONTH_ABBREVIATIONS: dict[str, int] = {
    "jan": 1,
    "feb": 2,
    "mär": 3,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "okt": 10,
    "oct": 10,
    "nov": 11,
    "dez": 12,
    "dec": 12,
}
"""Accepted only next to a day number, never fuzzy-fixed."""

DAY_WORDS: dict[str, int] = {
    "heute": 0,
    "morgen": 1,
    "übermorgen": 2,
    "gestern": -1,
    "vorgestern": -2,
    "today": 0,
    "tonight": 0,
    "tomorrow": 1,
    "yesterday": -1,
}
"""Day words, counted in days from the speaking time (never from the reference)."""

DAYPART_HOURS: dict[str, int] = {
    "früh": 6,
    "morgens": 8,
    "vormittag": 10,
    "vormittags": 10,
    "mittag": 12,
    "mittags": 12,
    "nachmittag": 15,
    "nachmittags": 15,
    "abend": 18,
    "abends": 18,
    "nacht": 22,
    "nachts": 22,
    "morning": 8,
    "afternoon": 15,
    "evening": 18,
    "night": 22,
}
"""Time-of-day words and their fallback clock, used only when no clock is given."""

Daypart = Literal["morning", "noon", "afternoon", "night"]

DAYPART_KIND: dict[str, Daypart] = {
    "früh": "morning",
    "morgens": "morning",
    "vormittag": "morning",
    "vormittags": "morning",
    "morning": "morning",
    "mittag": "noon",
    "mittags": "noon",
    "nachmittag": "afternoon",
    "nachmittags": "afternoon",
    "abend": "afternoon",
    "abends": "afternoon",
    "afternoon": "afternoon",
    "evening": "afternoon",
    "nacht": "night",
    "nachts": "night",
    "night": "night",
}
"""How a time-of-day word shifts an explicit 12-hour clock (see ``time_parser._apply_daypart``)."""

NUMBER_WORDS: dict[str, int] = {
    "null": 0,
    "ein": 1,
    "eins": 1,
    "eine": 1,
    "einem": 1,
    "einer": 1,
    "einen": 1,
    "zwei": 2,
    "zwo": 2,
    "drei": 3,
    "vier": 4,
    "fünf": 5,
    "sechs": 6,
    "sieben": 7,
    "acht": 8,
    "neun": 9,
    "zehn": 10,
    "elf": 11,
    "zwölf": 12,
    "dreizehn": 13,
    "vierzehn": 14,
    "fünfzehn": 15,
    "sechzehn": 16,
    "siebzehn": 17,
    "achtzehn": 18,
    "neunzehn": 19,
    "zwanzig": 20,
    "fünfundzwanzig": 25,
    "dreißig": 30,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
}
"""Spelled numbers for clocks, minutes and durations."""

ARTICLE_FORMS: frozenset[str] = frozenset({"eine", "einer", "einen", "einem"})
"""Mean 1 in a duration ("in einer Woche") but not before "Uhr" ("eine Uhr" is a watch)."""

ARTICLE_ONE: frozenset[str] = frozenset({"a", "an"})
"""English articles that mean 1 in a duration ("in a week")."""

DURATION_UNITS: dict[str, str] = {
    **dict.fromkeys(("minute", "minuten", "min", "minutes"), "minutes"),
    **dict.fromkeys(("stunde", "stunden", "std", "hour", "hours"), "hours"),
    **dict.fromkeys(("tag", "tage", "tagen", "tags", "day", "days"), "days"),
    **dict.fromkeys(("woche", "wochen", "week", "weeks"), "weeks"),
    **dict.fromkeys(("monat", "monate", "monaten", "monats", "month", "months"), "months"),
    **dict.fromkeys(("jahr", "jahre", "jahren", "jahres", "year", "years"), "years"),
}
"""Duration unit word -> canonical unit."""

DATEPARSER_UNITS: dict[str, str] = {
    "minutes": "Minuten",
    "hours": "Stunden",
    "days": "Tagen",
    "weeks": "Wochen",
    "months": "Monaten",
    "years": "Jahren",
}
"""The German unit word handed to dateparser for duration arithmetic."""

Shift = Literal["next", "overnext", "last", "this"]

_MARKER_STEMS: dict[str, Shift] = {
    "nächste": "next",
    "kommende": "next",
    "übernächste": "overnext",
    "letzte": "last",
    "vorige": "last",
    "vergangene": "last",
    "diese": "this",
}
MARKER_SUFFIXES: tuple[str, ...] = ("", "n", "r", "s", "m")

DIRECTION_MARKERS: dict[str, Shift] = {
    **{stem + suffix: shift for stem, shift in _MARKER_STEMS.items() for suffix in MARKER_SUFFIXES},
    "dies": "this",
    "next": "next",
    "coming": "next",
    "last": "last",
    "previous": "last",
    "past": "last",
    "this": "this",
}
"""M-05/M-06/M-07/M-09: a word that shifts the following weekday or unit."""

FORWARD_DURATION_WORDS: frozenset[str] = frozenset({"in", "noch", "within"})
"""M-02 and plain "in": the duration counts forward."""

BACKWARD_DURATION_WORDS: frozenset[str] = frozenset({"vor", "seit", "bereits", "schon", "erst"})
"""M-01, M-03, M-04: the duration counts backward."""

BACKWARD_AFTER_WORDS: frozenset[str] = frozenset({"ago", "her"})
"""A duration followed by one of these counts backward ("2 weeks ago", "3 Tage her")."""

SINCE_WORDS: frozenset[str] = frozenset({"seit", "since"})
"""M-03: later weekdays and dates are looked up backward."""

CLOCK_PREPOSITIONS: frozenset[str] = frozenset({"um", "at", "gegen", "ab"})
"""A bare number after one of these is an hour ("um 9", "at 9")."""

HOUR_WORDS: frozenset[str] = frozenset({"uhr", "o'clock", "oclock"})
AM_WORDS: frozenset[str] = frozenset({"am"})
PM_WORDS: frozenset[str] = frozenset({"pm"})
WEEK_WORDS: frozenset[str] = frozenset({"woche", "week"})
CLOCK_SPECIAL: dict[str, tuple[int, int]] = {"noon": (12, 0), "midnight": (0, 0)}
SPOKEN_QUARTERS: dict[str, int] = {"viertel": 15, "quarter": 15, "half": 30}
BEFORE_WORDS: frozenset[str] = frozenset({"vor", "to", "before"})
AFTER_WORDS: frozenset[str] = frozenset({"nach", "past", "after"})
MINUTE_WORDS: frozenset[str] = frozenset({"minute", "minuten", "min", "minutes"})
ENGLISH_MARKERS: frozenset[str] = frozenset({"next", "coming", "last", "previous", "past", "this"})
ENGLISH_DAY_WORDS: frozenset[str] = frozenset({"today", "tonight", "tomorrow", "yesterday"})
ENGLISH_DAYPARTS: frozenset[str] = frozenset({"morning", "afternoon", "evening", "night"})
GERMAN_AFTER_AM: frozenset[str] = frozenset(
    {
        *(name for name in WEEKDAYS if not name.endswith("day")),
        *(word for word in DAY_WORDS if word not in ENGLISH_DAY_WORDS),
        *(word for word in DAYPART_HOURS if word not in ENGLISH_DAYPARTS),
        *(marker for marker in DIRECTION_MARKERS if marker not in ENGLISH_MARKERS),
        "wochenende",
        "anfang",
        "ende",
    }
)
"""After one of these, "am" is the German "on the", not a.m. ("um 9 am Freitag")."""

PROTECTED_WORDS: frozenset[str] = frozenset(
    {
        *DAYPART_HOURS,
        *NUMBER_WORDS,
        *DIRECTION_MARKERS,
        *DURATION_UNITS,
        *HOUR_WORDS,
        "halb",
        "viertel",
        "dreiviertel",
        "vor",
        "nach",
        "um",
        "am",
        "im",
        "in",
        "an",
        "heuer",
        "dienst",
        "dienste",
        "montage",
        "monat",
        "morgan",
    }
)
"""Words the fuzzy fixer must never rewrite."""

FUZZY_TARGETS: tuple[str, ...] = (*WEEKDAYS, *MONTHS, *(w for w in DAY_WORDS if w != "tonight"))

_UMLAUT_ASCII = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})


def _ascii_spelling(word: str) -> str:
    return word.translate(_UMLAUT_ASCII)


_DOTS_DROPPED = str.maketrans({"ä": "a", "ö": "o", "ü": "u"})
_KNOWN_WORDS: tuple[str, ...] = (
    *WEEKDAYS,
    *MONTHS,
    *DAY_WORDS,
    *DAYPART_HOURS,
    *NUMBER_WORDS,
    *DIRECTION_MARKERS,
)

UMLAUT_RESTORATION: dict[str, str] = {
    spelling: word
    for word in _KNOWN_WORDS
    for spelling in (_ascii_spelling(word), word.translate(_DOTS_DROPPED))
    if spelling != word and spelling not in _KNOWN_WORDS
}
"""ASCII spellings of known words -> the real word ("maerz", "marz" -> "märz")."""
