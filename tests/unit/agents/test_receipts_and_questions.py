"""What a run's agents report outwards: a receipt per verified write (`stored_changes`) and
the kind of question they leave waiting (`awaited_answer`) — through the real agent loop."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agent_turns import BERLIN, NOW, run_turn

from novaberg.agents.base import AgentResult
from novaberg.agents.notes import repository as notes_repo
from novaberg.agents.questions import AwaitedAnswer, awaited_answer, question_kind
from novaberg.agents.receipts import StoredChange, shorten, stored_changes
from novaberg.agents.timeline import repository as timeline_repo
from novaberg.graph.contract import GraphDeps
from novaberg.llm.scripted import ScriptedLLM


def notes_as(scripted: ScriptedLLM, utterance: str, **output: Any) -> None:
    scripted.add(
        rf"Äußerung des Nutzers: {utterance}",
        {"target": "", **output},
        schema="NotesClassification",
    )


def timeline_as(scripted: ScriptedLLM, utterance: str, **output: Any) -> None:
    scripted.add(rf"Äußerung des Nutzers: {utterance}", output, schema="TimelineClassification")


async def test_adding_to_a_list_gives_one_receipt(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    await notes_repo.insert(
        deps.pool, "u1", name="Einkaufsliste", typ="einkauf", text="Milch", themen=[], now=NOW
    )
    notes_as(
        scripted, "Schreib Brot", action="add_content", target="Einkaufsliste", elemente=["Brot"]
    )
    out = await run_turn(deps, "Schreib Brot auf die Einkaufsliste", "notizen")
    assert stored_changes(out["agent_results"]) == [
        StoredChange("notizen", "add_content", "Einkaufsliste: + Brot")
    ]
    assert awaited_answer(out["agent_results"]) is None


async def test_an_appointment_receipt_names_title_and_time(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    timeline_as(
        scripted,
        "Meeting am Montag",
        action="create",
        target="Meeting",
        zeitausdruck="am Montag um 10 Uhr",
        event_type="termin",
    )
    out = await run_turn(deps, "Meeting am Montag um 10 Uhr", "timeline")
    assert [c.wire() for c in stored_changes(out["agent_results"])] == [
        {"agent": "timeline", "aktion": "create", "text": "Termin: Meeting, Mo 03.08. 10:00"}
    ]


async def test_a_read_stores_nothing_and_gives_no_receipt(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    await notes_repo.insert(
        deps.pool, "u1", name="Einkaufsliste", typ="einkauf", text="Milch", themen=[], now=NOW
    )
    notes_as(scripted, "Was steht auf", action="read", target="Einkaufsliste")
    out = await run_turn(deps, "Was steht auf der Einkaufsliste?", "notizen")
    assert out["agent_results"][-1].status == "abgeschlossen"
    assert stored_changes(out["agent_results"]) == []


async def test_create_the_missing_list_is_a_yes_no_question_then_a_receipt(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    notes_as(
        scripted, "Setz Milch", action="add_content", target="Einkaufsliste", elemente=["Milch"]
    )
    asked = await run_turn(deps, "Setz Milch auf die Einkaufsliste", "notizen")
    assert awaited_answer(asked["agent_results"]) == AwaitedAnswer("notizen", "ja_nein")
    assert awaited_answer(asked["agent_results"]).wire() == {  # type: ignore[union-attr]
        "typ": "awaiting_user",
        "agent": "notizen",
        "art": "ja_nein",
    }
    assert stored_changes(asked["agent_results"]) == []

    done = await run_turn(deps, "ja", action="resume")
    assert awaited_answer(done["agent_results"]) is None
    assert stored_changes(done["agent_results"]) == [
        StoredChange("notizen", "create", "Einkaufsliste: + Milch")
    ]


async def test_which_appointment_is_a_choice_question(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    for day in (3, 10):
        await timeline_repo.insert(
            deps.pool,
            "u1",
            title="Zahnarzt",
            event_time=datetime(2026, 8, day, 9, 0, tzinfo=BERLIN),
            event_type="termin",
            details="",
            precision="minute",
            now=NOW,
        )
    timeline_as(scripted, "Lösch den Zahnarzt", action="delete", target="Zahnarzt")
    out = await run_turn(deps, "Lösch den Zahnarzt", "timeline")
    assert awaited_answer(out["agent_results"]) == AwaitedAnswer("timeline", "auswahl")


async def test_a_directive_gate_is_yes_no_and_the_approval_has_a_receipt(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    scripted.add(
        r"Äußerung des Nutzers: Nenn mich nie Schatz",
        {"action": "create", "anweisung": "Den Nutzer nie Schatz nennen"},
        schema="DirectiveClassification",
    )
    asked = await run_turn(deps, "Nenn mich nie Schatz", "direktiven")
    assert awaited_answer(asked["agent_results"]) == AwaitedAnswer("direktiven", "ja_nein")
    done = await run_turn(deps, "Ja", action="resume")
    assert [c.label for c in stored_changes(done["agent_results"])] == [
        "Direktive: + Den Nutzer nie Schatz nennen"
    ]


def test_the_last_question_of_a_run_is_the_one_that_waits() -> None:
    first = AgentResult(
        "notizen",
        None,
        "rueckfrage",
        question="?",
        steps=[{"node": "suchen", "ergebnis": "rueckfrage", "frage_typ": "nicht_gefunden"}],
    )
    second = AgentResult(
        "timeline",
        None,
        "rueckfrage",
        question="?",
        steps=[{"node": "suchen", "ergebnis": "rueckfrage", "frage_typ": "disambiguierung"}],
    )
    assert awaited_answer([first, second.to_dict()]) == AwaitedAnswer("timeline", "auswahl")
    assert awaited_answer([]) is None and awaited_answer(None) is None


def test_unknown_question_types_are_open() -> None:
    assert question_kind("duplikat") == "offen"
    assert question_kind(None) == "offen"
    assert question_kind("gate") == "ja_nein"


def test_a_long_label_is_cut_to_one_line() -> None:
    label = shorten("Einkaufsliste: +\n" + "Brot, " * 40)
    assert len(label) <= 120 and label.endswith("…") and "\n" not in label
