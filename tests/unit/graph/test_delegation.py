"""The dispatcher's delegation trigger: which shadow tasks a run sets."""

from __future__ import annotations

from typing import Any

import pytest

from novaberg.graph.follow_up import commitment_in
from novaberg.graph.nodes.delegation import tasks_for
from novaberg.graph.personality import Emotion, Personality


def state(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "user_id": "anna",
        "character_id": "nova",
        "turn_id": "t-1",
        "graph_role": "character",
        "user_prompt": "Mein Vater hatte einen Schlaganfall.",
        "event_payload": {"reiz_herkunft": "nutzer_turn"},
        "external": Personality(
            emotion=Emotion(emotion="traurigkeit", emotions_vector="plateau", prompt_topic="Vater")
        ),
        "user_intentions": [],
        "response": "Das tut mir leid.",
    }
    base.update(overrides)
    return base


def test_a_plain_turn_sets_no_task() -> None:
    assert tasks_for(state()) == []


def test_pressure_delegates_with_the_turn_as_reference() -> None:
    pressed = state(
        external=Personality(
            emotion=Emotion(emotion="traurigkeit", emotions_vector="absturz", prompt_topic="Vater")
        )
    )
    [task] = tasks_for(pressed)
    assert (task.task, task.topic, task.reference_id) == ("delegation", "Vater", "t-1")
    assert "absturz" in task.reason and task.emotion == "traurigkeit"


def test_asking_intentions_delegate() -> None:
    [task] = tasks_for(state(user_intentions=["information_erfragen", "smalltalk"]))
    assert task.task == "delegation" and "information_erfragen" in task.reason


@pytest.mark.parametrize(
    "answer",
    [
        "Ich schau mal nach und melde mich.",
        "Gute Frage — ich finde das heraus.",
        "Ich komme darauf zurück, versprochen.",
    ],
)
def test_a_commitment_is_left_to_the_continue_run(answer: str) -> None:
    assert commitment_in(answer) is not None
    assert tasks_for(state(response=answer)) == [], "the continue run keeps the promise"


def test_a_commitment_waits_for_pixie_while_the_thinker_retry_holds_the_trigger() -> None:
    [task] = tasks_for(state(response="Ich schau mal nach und melde mich.", self_trigger=True))
    assert (task.task, task.reference_id) == ("recherche", "t-1")
    assert task.reason.startswith("zusage:")


def test_no_commitment_in_ordinary_answers() -> None:
    assert commitment_in("Ich melde dich gern beim Kurs an.") is None
    assert commitment_in("Schau doch mal nach, ob es regnet.") is None
    assert commitment_in("Das klingt schwer. Wie geht es dir damit?") is None


def test_impulses_and_the_agent_graph_set_nothing() -> None:
    commitment = "Ich schau mal nach und melde mich."
    impulse = state(
        response=commitment,
        user_prompt="",
        event_payload={"reiz_herkunft": "eigener_impuls"},
    )
    assert tasks_for(impulse) == []
    assert tasks_for(state(response=commitment, graph_role="agent")) == []


@pytest.mark.parametrize(
    "answer",
    [
        "Das weiß ich leider nicht.",
        "Hm, da bin ich mir nicht sicher.",
        "Keine Ahnung, ehrlich gesagt.",
        "Wie hoch genau? Das kann ich dir nicht sagen.",
    ],
)
def test_an_answer_admitting_a_gap_sets_a_knowledge_gap_task(answer: str) -> None:
    [task] = tasks_for(state(response=answer))
    assert (task.task, task.topic, task.reference_id) == ("wissensluecken", "Vater", "t-1")
    assert task.reason.startswith("nicht gewusst:")
    assert task.context == "Mein Vater hatte einen Schlaganfall."


def test_a_failed_fact_check_is_a_knowledge_gap() -> None:
    [task] = tasks_for(state(thinker_result="ausfall"))
    assert task.task == "wissensluecken" and task.reason == "faktencheck: ausfall"
    assert tasks_for(state(thinker_result="ok")) == []


def test_a_commitment_covers_the_gap_it_admits() -> None:
    assert tasks_for(state(response="Das weiß ich nicht, aber ich schau mal nach.")) == []


def test_ordinary_answers_admit_no_gap() -> None:
    for answer in ("Ich weiß, dass es schwer ist.", "Sicher, gern!", "Weißt du noch, damals?"):
        assert tasks_for(state(response=answer)) == [], answer


def test_with_follow_ups_off_a_commitment_waits_for_pixie() -> None:
    [task] = tasks_for(state(response="Ich werde das für dich recherchieren."), follow_ups=False)
    assert (task.task, task.reference_id) == ("recherche", "t-1")
