"""Time windows of memory questions: looking back is the default, markers pick the instance."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from novaberg.memory.time_expressions.windows import query_window

TZ = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 5, 14, 10, 0, tzinfo=TZ)  # a Thursday in late spring


@pytest.mark.parametrize(
    ("text", "start", "end", "kind"),
    [
        (
            "Was habe ich dir letzten Sommer erzählt?",
            date(2025, 6, 1),
            date(2025, 9, 1),
            "jahreszeit",
        ),
        ("What did I tell you last summer?", date(2025, 6, 1), date(2025, 9, 1), "jahreszeit"),
        ("im letzten Herbst", date(2025, 9, 1), date(2025, 12, 1), "jahreszeit"),
        ("im Winter", date(2025, 12, 1), date(2026, 3, 1), "jahreszeit"),
        ("Sommer 2024", date(2024, 6, 1), date(2024, 9, 1), "jahreszeit"),
        ("Was war im März?", date(2026, 3, 1), date(2026, 4, 1), "monat"),
        ("im Maerz", date(2026, 3, 1), date(2026, 4, 1), "monat"),
        ("im Juni", date(2025, 6, 1), date(2025, 7, 1), "monat"),
        ("im März 2024", date(2024, 3, 1), date(2024, 4, 1), "monat"),
        ("im März letzten Jahres", date(2025, 3, 1), date(2025, 4, 1), "monat"),
        ("in May", date(2026, 5, 1), date(2026, 6, 1), "monat"),
        ("letzten Monat", date(2026, 4, 1), date(2026, 5, 1), "monat"),
        ("letzte Woche", date(2026, 5, 4), date(2026, 5, 11), "woche"),
        ("diese Woche", date(2026, 5, 11), date(2026, 5, 18), "woche"),
        ("letztes Jahr", date(2025, 1, 1), date(2026, 1, 1), "jahr"),
        ("vorletztes Jahr", date(2024, 1, 1), date(2025, 1, 1), "jahr"),
        ("2023", date(2023, 1, 1), date(2024, 1, 1), "jahr"),
        ("gestern", date(2026, 5, 13), date(2026, 5, 14), "tag"),
        ("Was war am Montag?", date(2026, 5, 11), date(2026, 5, 12), "tag"),
        ("am 3. März", date(2026, 3, 3), date(2026, 3, 4), "tag"),
    ],
)
def test_a_named_time_becomes_a_window(text: str, start: date, end: date, kind: str) -> None:
    window = query_window(text, NOW, TZ)
    assert window is not None
    assert (window.start.date(), window.end.date(), window.kind) == (start, end, kind)
    assert window.start.tzinfo is not None and window.start <= NOW


def test_a_rough_point_is_a_window_around_it() -> None:
    two_weeks = query_window("Was habe ich vor zwei Wochen gesagt?", NOW, TZ)
    assert two_weeks is not None and two_weeks.kind == "vor"
    assert two_weeks.start.date() == date(2026, 4, 26) and two_weeks.end.date() == date(2026, 5, 4)
    three_days = query_window("three days ago", NOW, TZ)
    assert three_days is not None
    assert three_days.start.date() == date(2026, 5, 10) and three_days.end.date() == date(
        2026, 5, 12
    )


@pytest.mark.parametrize(
    "text",
    [
        "Wie heißt mein Hund?",
        "Guten Morgen! Wie geht es dir?",  # a greeting, not tomorrow
        "morgen",  # the future is no memory
        "May I ask you something?",  # a verb, not the month
        "nächsten Sommer",
        "Mein Nachbar heißt Korbinian",
    ],
)
def test_no_window_without_a_past_time(text: str) -> None:
    assert query_window(text, NOW, TZ) is None


def test_a_naive_now_is_refused() -> None:
    with pytest.raises(ValueError):
        query_window("gestern", datetime(2026, 5, 14), TZ)
