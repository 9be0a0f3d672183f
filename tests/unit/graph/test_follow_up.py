"""The self-event rule (docs/behaviour/events.md#self-events): which runs plan Nova's second
message, with which payload — and that ordinary small talk plans none."""

from __future__ import annotations

from typing import Any

import pytest

from novaberg.agents.base import AgentResult
from novaberg.graph.follow_up import commitment_in, follow_up_channels, plan_follow_up
from novaberg.graph.personality import Emotion, InternalPersonality, Personality

CALM = Personality(emotion=Emotion(emotion="freude", arousal=0.3, emotions_vector="plateau"))
HEAVY = Personality(emotion=Emotion(emotion="verzweiflung", arousal=0.8, emotions_vector="plateau"))


def state(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "user_id": "anna",
        "character_id": "nova",
        "turn_id": "t-1",
        "graph_role": "character",
        "event_source": "user",
        "user_prompt": "Hallo",
        "own_thought": "",
        "event_payload": {"reiz_herkunft": "nutzer_turn"},
        "external": CALM,
        "internal": InternalPersonality(emotion=Emotion(emotion="traurigkeit", arousal=0.55)),
        "user_intentions": ["smalltalk"],
        "response": "Hallo! Schön, dass du da bist.",
    }
    base.update(overrides)
    return base


def test_small_talk_plans_nothing() -> None:
    assert plan_follow_up(state()) is None
    update, entry = follow_up_channels(state())
    assert update == {} and entry == {"geplant": False}


def test_a_heavy_message_plans_a_follow_up_question() -> None:
    heavy = state(user_prompt="Ich hab heute den Job verloren", external=HEAVY, response="Oh nein.")
    update, entry = follow_up_channels(heavy)
    assert update["self_trigger"] is True
    payload = update["self_trigger_payload"]
    assert payload["absicht"] == "nachfragen" and "commitment" not in payload
    assert payload["reiz_herkunft"] == "eigener_impuls" and "user_prompt" not in payload
    assert "Ich hab heute den Job verloren" in payload["eigener_gedanke"]
    assert payload["gedanke_arousal"] == 0.55, "Nova's arousal after her answer"
    assert "turn_id" not in payload, "the consumer, who starts the turn, gives it its id"
    assert entry == {
        "geplant": True,
        "absicht": "nachfragen",
        "commitment": None,
        "grund": "emotion verzweiflung arousal 0.80",
    }


@pytest.mark.parametrize(
    ("person", "intentions", "why"),
    [
        (Personality(emotion=Emotion(emotion="neutral", emotions_vector="absturz")), [], "absturz"),
        (CALM, ["hilferuf"], "intention hilferuf"),
    ],
)
def test_pressure_vectors_and_a_cry_for_help_plan_a_follow_up(
    person: Personality, intentions: list[str], why: str
) -> None:
    planned = plan_follow_up(state(external=person, user_intentions=intentions))
    assert planned is not None and planned.intent == "nachfragen" and why in planned.reason


@pytest.mark.parametrize(
    "person",
    [
        Personality(emotion=Emotion(emotion="verzweiflung", arousal=0.59)),
        Personality(emotion=Emotion(emotion="begeisterung", arousal=0.9)),
        Personality(emotion=Emotion(emotion="neutral", arousal=0.9)),
    ],
)
def test_calm_or_positive_emotions_are_no_pressure(person: Personality) -> None:
    assert plan_follow_up(state(external=person)) is None


def test_she_does_not_ask_twice() -> None:
    asked = state(external=HEAVY, response="Das tut mir leid. Willst du darüber reden?")
    assert plan_follow_up(asked) is None


def test_an_agent_question_or_the_thinker_retry_plans_nothing() -> None:
    question = AgentResult("notizen", None, "rueckfrage", question="Welche Liste?")
    assert plan_follow_up(state(external=HEAVY, agent_results=[question])) is None
    assert plan_follow_up(state(external=HEAVY, self_trigger=True)) is None
    assert plan_follow_up(state(external=HEAVY, response="")) is None
    assert plan_follow_up(state(external=HEAVY, graph_role="agent")) is None


@pytest.mark.parametrize(
    ("answer", "commitment"),
    [
        ("Ich werde das für dich recherchieren.", "recherche"),
        ("Gute Frage, ich schau mal nach.", "recherche"),
        ("Lass mich das kurz nachschauen.", "recherche"),
        ("Ich kümmere mich darum.", "delegation"),
        ("Keine Sorge, ich behalte das im Blick.", "delegation"),
        ("Ich kümmere mich darum, ich schau mal nach.", "recherche"),
    ],
)
def test_a_promise_plans_a_commitment(answer: str, commitment: str) -> None:
    asked = state(user_prompt="Wann hat der Wertstoffhof offen?", response=answer)
    planned = plan_follow_up(asked)
    assert planned is not None and planned.commitment == commitment
    assert planned.intent is None and "Wertstoffhof" in planned.thought


def test_a_promise_counts_in_runs_nova_started_herself_pressure_does_not() -> None:
    own = {
        "event_source": "character",
        "user_prompt": "",
        "own_thought": "Ich möchte nachfragen.",
        "event_payload": {"reiz_herkunft": "eigener_impuls"},
        "external": HEAVY,
    }
    assert plan_follow_up(state(**own, response="Magst du erzählen, wie es dir geht")) is None
    promised = plan_follow_up(state(**own, response="Ich schau mal nach, versprochen."))
    assert promised is not None and promised.commitment == "recherche"


def test_ordinary_sentences_promise_nothing() -> None:
    for answer in (
        "Ich melde dich gern beim Kurs an.",
        "Schau doch mal nach, ob es regnet.",
        "Kümmere dich erst mal um dich.",
        "Das klingt schwer. Wie geht es dir damit?",
    ):
        assert commitment_in(answer) is None, answer


def test_switched_off_nothing_is_planned() -> None:
    update, entry = follow_up_channels(state(external=HEAVY), enabled=False)
    assert update == {} and entry == {"geplant": False, "grund": "abgeschaltet"}


def test_an_answer_reporting_an_agent_promises_nothing_new() -> None:
    done = AgentResult("delegation", "Übernommen.", "abgeschlossen")
    report = state(response="Gut, ich behalte es im Blick.", agent_results=[done])
    assert plan_follow_up(report) is None
