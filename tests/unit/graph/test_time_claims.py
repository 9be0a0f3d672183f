"""Times an answer states and their backing (spec pipeline §6 evaluate)."""

from __future__ import annotations

from typing import Any

import pytest

from novaberg.graph.nodes.evaluate import evaluate
from novaberg.graph.time_claims import stated_times, unbacked_times

STORED = "'Zahnarzt' eingetragen für 06.08.2026 14:00."
ASKED = "Trag mir Zahnarzt am Donnerstag um 14 Uhr ein"


def test_stated_times_finds_dates_weekdays_and_clock_times() -> None:
    text = "Guten Morgen! Am Donnerstag, 06.08.2026 um 14:00 Uhr, oder am 7. August um 3 pm."
    assert stated_times(text) == ["Donnerstag", "06.08.2026", "14:00", "7. August", "3 pm"]
    assert stated_times("Mir geht es gut, danke. Und dir?") == []


@pytest.mark.parametrize(
    ("answer", "sources", "unbacked"),
    [
        ("am 6.8. um 14 Uhr", [STORED], []),  # other spellings of the stored time
        ("am 06.08. um 14:00", ["am 6. August um 14 Uhr"], []),
        ("am Donnerstag", [ASKED], []),  # the person said it
        ("am 07.08. um 14 Uhr", [STORED], ["07.08."]),
        ("um 1 Uhr", ["um 14 Uhr"], ["1 Uhr"]),  # no substring matches
        ("um 10:05", ["10:05 Uhr"], []),
    ],
)
def test_unbacked_times(answer: str, sources: list[str], unbacked: list[str]) -> None:
    assert unbacked_times(answer, sources) == unbacked


def _state(response: str, agent_results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "user_prompt": ASKED,
        "own_thought": "",
        "response": response,
        "agent_results": agent_results,
        "memory_context": "",
        "tribunal_verdict": "ok",
        "tribunal_summary": "",
        "correction_round": 0,
        "max_corrections": 2,
    }


DONE = {"agent_name": "timeline", "status": "abgeschlossen", "result": STORED}


async def test_an_appointment_confirmed_for_another_day_goes_to_the_corrector() -> None:
    update = await evaluate(_state("Erledigt: Freitag, 07.08. um 14 Uhr.", [DONE]), None)  # type: ignore[arg-type]
    assert update["tribunal_verdict"] == "warnung"
    assert update["evaluate_decision"] == "correct"
    assert "Freitag" in update["tribunal_summary"] and "07.08." in update["tribunal_summary"]


async def test_times_the_agent_or_the_person_gave_pass() -> None:
    update = await evaluate(_state("Erledigt: Donnerstag, 6.8. um 14 Uhr.", [DONE]), None)  # type: ignore[arg-type]
    assert update["evaluate_decision"] == "ok" and "tribunal_summary" not in update


async def test_a_failed_agent_backs_nothing() -> None:
    failed = {**DONE, "status": "fehler", "result": None, "error": "kaputt"}
    update = await evaluate(_state("Eingetragen für den 06.08.", [failed]), None)  # type: ignore[arg-type]
    assert update["evaluate_decision"] == "correct"


async def test_without_agents_evaluate_checks_no_times() -> None:
    update = await evaluate(_state("Dein Termin ist am Montag.", []), None)  # type: ignore[arg-type]
    assert update["evaluate_decision"] == "ok"
