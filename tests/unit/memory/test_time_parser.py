"""Time parsing: the acceptance anchors (spec §7, scenarios 9-12), the spoken
German clock, direction markers, English, rejection, DST and the round trip."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from novaberg.memory.time_expressions.parser import (
    MAX_FUTURE,
    MAX_PAST,
    TimeVector,
    format_time,
    parse_time,
)
from novaberg.memory.time_expressions.tokens import fuzzy_fix, levenshtein, normalise_word

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 7, 31, 14, 0, tzinfo=BERLIN)  # Friday
OLD_EVENT = datetime(2026, 8, 6, 14, 0, tzinfo=BERLIN)  # Thursday, scenario 9's row


def parse(
    text: str, *, reference: datetime | None = None, prefer_future: bool = True
) -> TimeVector | None:
    return parse_time(text, now=NOW, tz=BERLIN, reference=reference, prefer_future=prefer_future)


def when(text: str, *, prefer_future: bool = True) -> datetime:
    vector = parse(text, prefer_future=prefer_future)
    assert vector is not None, text
    return vector.when


def local(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=BERLIN)


# --- Acceptance anchors ---------------------------------------------------------------


def test_scenario_9_weekday_and_clock() -> None:
    vector = parse("Zahnarzt am Donnerstag um 14 Uhr")
    assert vector is not None
    assert vector.when == local(2026, 8, 6, 14, 0)
    assert vector.when.astimezone(UTC) == datetime(2026, 8, 6, 12, 0, tzinfo=UTC)
    assert vector.day_recognised and vector.clock_recognised
    assert vector.when.tzinfo is BERLIN


def test_scenario_10_day_and_month_without_year_lies_ahead() -> None:
    vector = parse("Annas Geburtstag ist am 15. Mai")
    assert vector == TimeVector(local(2027, 5, 15, 0, 0), True, False, "absolut")


def test_scenario_11_weekday_counts_from_the_reference() -> None:
    vector = parse("Verschieb den Zahnarzt auf Freitag", reference=OLD_EVENT)
    assert vector is not None
    assert vector.when.date() == local(2026, 8, 7).date()
    assert vector.day_recognised and not vector.clock_recognised


def test_scenario_12_clock_only_leaves_the_day_to_the_caller() -> None:
    vector = parse("Verschieb den Zahnarzt auf 16 Uhr", reference=OLD_EVENT)
    assert vector is not None
    assert vector.when == local(2026, 8, 6, 16, 0)
    assert not vector.day_recognised and vector.clock_recognised


# --- The table: (text, expected local wall time, day?, clock?) ---------------------------

CASES: list[tuple[str, tuple[int, int, int, int, int], bool, bool]] = [
    # Spoken German clock; a 12-hour reading without a time-of-day word lands in 08:00-19:59.
    ("Donnerstag um halb drei", (2026, 8, 6, 14, 30), True, True),
    ("viertel vor acht morgen", (2026, 8, 1, 19, 45), True, True),
    ("morgen früh um viertel vor acht", (2026, 8, 1, 7, 45), True, True),
    ("dreiviertel acht abends", (2026, 7, 31, 19, 45), False, True),
    ("viertel nach acht", (2026, 8, 1, 8, 15), False, True),
    ("viertel acht morgens", (2026, 8, 1, 7, 15), False, True),
    ("zehn vor acht", (2026, 7, 31, 19, 50), False, True),
    ("fünf nach drei", (2026, 7, 31, 15, 5), False, True),
    ("zwanzig vor vier", (2026, 7, 31, 15, 40), False, True),
    ("fünf vor halb drei", (2026, 7, 31, 14, 25), False, True),
    ("halb eins", (2026, 8, 1, 12, 30), False, True),
    ("drei Uhr nachmittags", (2026, 7, 31, 15, 0), False, True),
    ("3 Uhr nachmittags", (2026, 7, 31, 15, 0), False, True),
    ("drei Uhr nachts", (2026, 8, 1, 3, 0), False, True),
    ("zehn Uhr abends", (2026, 7, 31, 22, 0), False, True),
    ("14 Uhr 30", (2026, 7, 31, 14, 30), False, True),
    ("13 Uhr", (2026, 8, 1, 13, 0), False, True),
    ("ein Uhr", (2026, 8, 1, 13, 0), False, True),
    ("7 Uhr", (2026, 8, 1, 7, 0), False, True),
    ("um 3", (2026, 7, 31, 15, 0), False, True),
    ("14.30 Uhr", (2026, 7, 31, 14, 30), False, True),
    # Day words count from the speaking time.
    ("heute", (2026, 7, 31, 0, 0), True, False),
    ("morgen", (2026, 8, 1, 0, 0), True, False),
    ("übermorgen", (2026, 8, 2, 0, 0), True, False),
    ("uebermorgen", (2026, 8, 2, 0, 0), True, False),
    ("gestern", (2026, 7, 30, 0, 0), True, False),
    ("vorgestern", (2026, 7, 29, 0, 0), True, False),
    ("morgen abend", (2026, 8, 1, 18, 0), True, True),
    ("heute nachmittag", (2026, 7, 31, 15, 0), True, True),
    ("Montag morgen", (2026, 8, 3, 8, 0), True, True),
    ("morgen um 9", (2026, 8, 1, 9, 0), True, True),
    # Weekdays and direction markers.
    ("Freitag", (2026, 8, 7, 0, 0), True, False),
    ("Frietag", (2026, 8, 7, 0, 0), True, False),
    ("Donerstag um 10", (2026, 8, 6, 10, 0), True, True),
    ("nächsten Montag", (2026, 8, 3, 0, 0), True, False),
    ("naechsten Montag", (2026, 8, 3, 0, 0), True, False),
    ("übernächsten Montag", (2026, 8, 10, 0, 0), True, False),
    ("letzten Freitag", (2026, 7, 24, 0, 0), True, False),
    ("vergangenen Mittwoch", (2026, 7, 29, 0, 0), True, False),
    ("diesen Freitag", (2026, 7, 31, 0, 0), True, False),
    ("nächste Woche Donnerstag", (2026, 8, 6, 0, 0), True, False),
    ("Mittwoch nächste Woche", (2026, 8, 5, 0, 0), True, False),
    ("seit Montag", (2026, 7, 27, 0, 0), True, False),
    ("um 9 am Freitag", (2026, 8, 7, 9, 0), True, True),
    # Dates.
    ("am 15.04.", (2027, 4, 15, 0, 0), True, False),
    ("am 15.04.2027 um 9:30", (2027, 4, 15, 9, 30), True, True),
    ("06.08.2026 14:30", (2026, 8, 6, 14, 30), True, True),
    ("2026-08-06", (2026, 8, 6, 0, 0), True, False),
    ("2026-08-06T14:30", (2026, 8, 6, 14, 30), True, True),
    ("am 3. Maerz", (2027, 3, 3, 0, 0), True, False),
    ("15. Mai 2027 um 18 Uhr", (2027, 5, 15, 18, 0), True, True),
    ("im März", (2027, 3, 1, 0, 0), True, False),
    # Durations (dateparser arithmetic).
    ("in zwei Wochen", (2026, 8, 14, 0, 0), True, False),
    ("in 3 Tagen", (2026, 8, 3, 0, 0), True, False),
    ("in 3 Tagen um 15 Uhr", (2026, 8, 3, 15, 0), True, True),
    ("vor zwei Wochen", (2026, 7, 17, 0, 0), True, False),
    ("in einem Monat", (2026, 8, 31, 0, 0), True, False),
    ("in 2 Stunden", (2026, 7, 31, 16, 0), True, True),
    ("noch 3 Tage", (2026, 8, 3, 0, 0), True, False),
    ("nächsten Monat", (2026, 8, 31, 0, 0), True, False),
    # English.
    ("next monday", (2026, 8, 3, 0, 0), True, False),
    ("last friday", (2026, 7, 24, 0, 0), True, False),
    ("at 3pm", (2026, 7, 31, 15, 0), False, True),
    ("at 9 am", (2026, 8, 1, 9, 0), False, True),
    ("on friday at 9", (2026, 8, 7, 9, 0), True, True),
    ("in two weeks", (2026, 8, 14, 0, 0), True, False),
    ("2 weeks ago", (2026, 7, 17, 0, 0), True, False),
    ("today", (2026, 7, 31, 0, 0), True, False),
    ("tomorrow at noon", (2026, 8, 1, 12, 0), True, True),
    ("yesterday evening", (2026, 7, 30, 18, 0), True, True),
    ("the day after tomorrow", (2026, 8, 2, 0, 0), True, False),
    ("tomorrow at 7:30 am", (2026, 8, 1, 7, 30), True, True),
    ("half past three", (2026, 7, 31, 15, 30), False, True),
    ("quarter to eight in the morning", (2026, 8, 1, 7, 45), False, True),
    ("May 15th", (2027, 5, 15, 0, 0), True, False),
    ("the 3rd of march at 10", (2027, 3, 3, 10, 0), True, True),
]


@pytest.mark.parametrize(("text", "expected", "day", "clock"), CASES)
def test_parse_table(
    text: str, expected: tuple[int, int, int, int, int], day: bool, clock: bool
) -> None:
    vector = parse(text)
    assert vector is not None, text
    assert vector.when == local(*expected), text
    assert (vector.day_recognised, vector.clock_recognised) == (day, clock), text
    assert vector.when.second == 0 and vector.when.microsecond == 0


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Die Zeit vergeht wie im Flug",
        "Ich habe 3 Katzen",
        "3",
        "Schreib auf: Milch, Eier, Butter",
        "in 10 Jahren",
        "vor 5 Jahren",
        "am 15.04.2020",
        "am 31.02.2027",
        "mach 3 Kreuze",
        "Julia kommt",
        "jene Leute",
        "eine Uhr kaufen",
    ],
)
def test_no_time_or_out_of_range_gives_none(text: str) -> None:
    assert parse(text) is None


@pytest.mark.parametrize(
    ("text", "mode"),
    [
        ("am 15. Mai", "absolut"),
        ("morgen", "absolut"),
        ("diesen Freitag", "absolut"),
        ("Donnerstag", "relativ"),
        ("in zwei Wochen", "relativ"),
        ("16 Uhr", "relativ"),
        ("vor zwei Wochen", "relativ_rueckwaerts"),
        ("letzten Freitag", "relativ_rueckwaerts"),
        ("seit Montag", "relativ_rueckwaerts"),
    ],
)
def test_reference_mode(text: str, mode: str) -> None:
    vector = parse(text)
    assert vector is not None
    assert vector.reference_mode == mode


def test_prefer_past_looks_back() -> None:
    assert when("15.04.", prefer_future=False) == local(2026, 4, 15)
    assert when("Freitag", prefer_future=False) == local(2026, 7, 24)
    assert when("13 Uhr", prefer_future=False) == local(2026, 7, 31, 13)


def test_backward_marker_overrides_prefer_future() -> None:
    assert when("seit dem 15.04.") == local(2026, 4, 15)


def test_same_weekday_means_next_week_unless_today() -> None:
    assert when("Freitag um 18 Uhr") == local(2026, 8, 7, 18)
    assert when("heute um 18 Uhr") == local(2026, 7, 31, 18)


def test_day_words_ignore_the_reference() -> None:
    vector = parse("morgen", reference=OLD_EVENT)
    assert vector is not None
    assert vector.when == local(2026, 8, 1)


def test_durations_count_from_the_reference() -> None:
    vector = parse("in 3 Tagen", reference=OLD_EVENT)
    assert vector is not None
    assert vector.when == local(2026, 8, 9)


def test_window_is_measured_from_the_reference() -> None:
    far = datetime(2030, 1, 1, 12, tzinfo=BERLIN)
    assert parse("am 01.06.2031", reference=far) is not None
    assert parse("am 01.06.2031") is not None
    assert parse("am 01.06.2032") is None


def test_dst_gap_moves_forward_and_offset_disambiguates() -> None:
    gap = parse("am 29.03.2026 um 02:30")
    assert gap is not None and gap.when.astimezone(UTC) == datetime(2026, 3, 29, 1, 30, tzinfo=UTC)
    first = parse("am 25.10.2026 um 02:30 UTC+02:00")
    second = parse("am 25.10.2026 um 02:30 UTC+01:00")
    assert first is not None and second is not None
    # Same-zone subtraction ignores ``fold``; compare instants.
    assert second.when.timestamp() - first.when.timestamp() == 3600
    assert (first.when.utcoffset(), second.when.utcoffset()) == (
        timedelta(hours=2),
        timedelta(hours=1),
    )


def test_naive_times_are_refused() -> None:
    with pytest.raises(ValueError):
        parse_time("morgen", now=datetime(2026, 7, 31, 14), tz=BERLIN)
    with pytest.raises(ValueError):
        format_time(datetime(2026, 7, 31, 14), BERLIN)


def test_format_time_shape() -> None:
    moment = datetime(2026, 8, 6, 12, 30, tzinfo=UTC)
    assert format_time(moment, BERLIN) == "am 06.08.2026 um 14:30"
    vector = parse("Donnerstag um halb drei")
    assert vector is not None
    assert format_time(vector, BERLIN) == "am 06.08.2026 um 14:30"


def test_fuzzy_fix_is_conservative() -> None:
    assert levenshtein("frietag", "freitag") == 2
    assert fuzzy_fix("frietag") == "freitag"
    assert fuzzy_fix("mitwoch") == "mittwoch"
    assert fuzzy_fix("mal") == "mal"  # never "mai"
    assert fuzzy_fix("dienst") == "dienst"  # never "dienstag"
    assert fuzzy_fix("jene") == "jene"  # short words are never fuzzy-fixed ("june")
    assert fuzzy_fix("freitg") == "freitag"
    assert fuzzy_fix("morgens") == "morgens"  # time-of-day words are protected
    assert normalise_word("maerz") == "märz"
    assert normalise_word("marz") == "märz"


# --- Round trip --------------------------------------------------------------------------

ZONES = [BERLIN, ZoneInfo("America/New_York"), ZoneInfo("Australia/Lord_Howe"), ZoneInfo("UTC")]


@settings(max_examples=300, deadline=None)
@given(
    zone=st.sampled_from(ZONES),
    offset_minutes=st.integers(
        min_value=-int(MAX_PAST.total_seconds() // 60) + 1,
        max_value=int(MAX_FUTURE.total_seconds() // 60) - 1,
    ),
    prefer_future=st.booleans(),
)
def test_format_then_parse_round_trips(
    zone: ZoneInfo, offset_minutes: int, prefer_future: bool
) -> None:
    moment = (NOW + timedelta(minutes=offset_minutes)).astimezone(zone)
    text = format_time(moment, zone)
    vector = parse_time(text, now=NOW, tz=zone, prefer_future=prefer_future)
    assert vector is not None, text
    assert vector.when.timestamp() == moment.timestamp(), text
    assert vector.when.utcoffset() == moment.utcoffset(), text
    assert vector.day_recognised and vector.clock_recognised
    assert vector.reference_mode == "absolut"


@settings(max_examples=200, deadline=None)
@given(
    moment=st.datetimes(
        min_value=datetime(2024, 8, 1),
        max_value=datetime(2031, 7, 30),
        timezones=st.just(BERLIN),
        allow_imaginary=False,
    )
)
def test_round_trip_for_generated_aware_datetimes(moment: datetime) -> None:
    moment = moment.replace(second=0, microsecond=0)
    vector = parse_time(format_time(moment, BERLIN), now=NOW, tz=BERLIN)
    assert vector is not None
    assert vector.when.timestamp() == moment.timestamp()


TIME_ALPHABET = st.sampled_from(
    [
        "am ",
        "um ",
        "halb ",
        "viertel ",
        "vor ",
        "nach ",
        "in ",
        "3 ",
        "15.",
        "04.",
        "2027 ",
        "14:30 ",
        "Uhr ",
        "Mai ",
        "Freitag ",
        "morgen ",
        "nächsten ",
        "letzte ",
        "Woche ",
        "Tagen ",
        "abends ",
        "pm ",
        "?",
        "👍",
        "UTC+01:00 ",
        "zwölf ",
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    text=st.one_of(st.text(max_size=40), st.lists(TIME_ALPHABET, max_size=8).map("".join)),
    prefer_future=st.booleans(),
)
def test_parse_never_raises_and_stays_in_window(text: str, prefer_future: bool) -> None:
    vector = parse(text, prefer_future=prefer_future)
    if vector is not None:
        assert vector.when.tzinfo is BERLIN
        assert NOW - MAX_PAST <= vector.when <= NOW + MAX_FUTURE
