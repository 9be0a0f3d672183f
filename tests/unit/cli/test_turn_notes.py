"""`novaberg turn`'s stage note: what a node decided, read off its pipeline_log row."""

from __future__ import annotations

from novaberg.cli.turn import NOTE_CHARS, stage_note


def test_a_stage_note_names_the_decision_of_the_row() -> None:
    assert stage_note({"punkte": 2, "tor": "eigener_gedanke"}) == "punkte=2 tor=eigener_gedanke"
    note = stage_note(
        {"urteil": "warnung", "entscheidung": "fallback", "runde": 2, "max": 2, "ersetzt": "x"}
    )
    assert note == "urteil=warnung entscheidung=fallback runde=2 max=2 ersetzt=x"
    assert stage_note({"rolle": "character", "zielsog": 0.30000001, "salienzen": [0.7]}) == (
        "rolle=character zielsog=0.3"
    )


def test_a_failure_comes_first_and_notes_stay_short() -> None:
    assert stage_note({"punkte": 0, "ausfall": "unlesbar"}) == "unlesbar"
    assert len(stage_note({f"k{i}": "wert" * 5 for i in range(20)})) == NOTE_CHARS
