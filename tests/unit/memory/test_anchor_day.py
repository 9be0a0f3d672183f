"""Which day a raw time expression anchors a memory to (docs/behaviour/memory.md#day-anchors)."""

from __future__ import annotations

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from novaberg.memory.day_anchors import anchor_day, looks_past
from novaberg.memory.day_recall import asked_day

BERLIN = ZoneInfo("Europe/Berlin")
THURSDAY = datetime(2026, 9, 24, 18, 0, tzinfo=BERLIN)


@pytest.mark.parametrize(
    ("expression", "statement", "day"),
    [
        ("am Dienstag", "Am Dienstag war ich beim Zahnarzt.", date(2026, 9, 22)),
        ("am Dienstag", "Am Dienstag habe ich eine Prüfung.", date(2026, 9, 29)),
        ("am Dienstag", "Am Dienstag habe ich den Schrank gestrichen.", date(2026, 9, 22)),
        ("letzten Freitag", "Letzten Freitag gehe ich nie wieder hin.", date(2026, 9, 18)),
        ("nächsten Montag", "Nächsten Montag war ein Fehler.", date(2026, 9, 28)),
        ("gestern", "Gestern war es schön.", date(2026, 9, 23)),
        ("morgen", "Morgen fahre ich weg.", date(2026, 9, 25)),
        ("am 3. September", "Am 3. September war ich in Rom.", date(2026, 9, 3)),
    ],
)
def test_a_named_day_is_resolved_with_the_statements_tense(
    expression: str, statement: str, day: date
) -> None:
    assert anchor_day(expression, statement, THURSDAY, BERLIN) == day


@pytest.mark.parametrize("expression", ["", "um 14 Uhr", "bald", "früher"])
def test_no_day_no_anchor(expression: str) -> None:
    assert anchor_day(expression, "Das war schön.", THURSDAY, BERLIN) is None


def test_past_forms() -> None:
    assert looks_past("Ich war gestern dort")
    assert looks_past("Wir sind am Sonntag gewandert")
    assert not looks_past("Was machst du am Dienstag?")
    assert not looks_past("Am Dienstag gehe ich zum Arzt")


def test_only_a_single_day_is_asked_about() -> None:
    window = asked_day("Was war am Dienstag?", THURSDAY, BERLIN)
    assert window is not None and window.start == datetime(2026, 9, 22, tzinfo=BERLIN)
    assert asked_day("Was war im März?", THURSDAY, BERLIN) is None  # a month: not recalled
    assert asked_day("Wie geht es dir?", THURSDAY, BERLIN) is None
    assert asked_day("Was machen wir morgen?", THURSDAY, BERLIN) is None  # the future
