"""Pure parts of imprint, uptake, the thinker's tool calls and the drive snapshot."""

from __future__ import annotations

from typing import Any

import pytest

from novaberg.graph.nodes.dispatcher import drive_snapshot
from novaberg.graph.nodes.imprint import AROUSAL_GATE, SALIENCE_GATE, check_gate, topic_of
from novaberg.graph.nodes.uptake import OpenQuestion, judge, offered_questions
from novaberg.graph.personality import Emotion, InternalPersonality, Personality
from novaberg.graph.thinker_tools import parse_call


def _write(salienz: Any, themen: list[str], thema_kurz: str = "") -> dict[str, Any]:
    obj = {"salienz": salienz, "themen": themen, "thema_kurz": thema_kurz}
    return {"target": "kzg", "action": "create", "data": {"salienz_obj": obj}, "description": ""}


def _state(arousal: float, *writes: dict[str, Any]) -> Any:
    internal = InternalPersonality()
    internal.emotion = Emotion(emotion="begeisterung", arousal=arousal)
    return {"internal": internal, "pending_writes": list(writes)}


def test_gate_opens_only_for_a_salient_answer_that_moved_her() -> None:
    check = check_gate(_state(0.8, _write(0.4, ["wetter"]), _write(0.9, ["Sterne", "nacht"])))
    assert check.open and check.topic == "sterne" and check.salience == 0.9
    assert check.increment == pytest.approx(0.72)
    assert (
        check_gate(_state(0.8, _write(SALIENCE_GATE - 0.01, ["x"]))).reason == "salienz_zu_niedrig"
    )
    assert check_gate(_state(AROUSAL_GATE - 0.01, _write(0.9, ["x"]))).reason == "nicht_bewegt"
    assert check_gate(_state(0.9)).reason == "keine_salienz"
    assert check_gate(_state(0.9, _write("hoch", ["x"]))).reason == "keine_salienz"
    assert check_gate(_state(0.9, _write(0.9, []))).reason == "kein_thema"
    assert not check_gate(_state(0.9, _write(0.9, []))).open


def test_topic_falls_back_to_the_short_topic() -> None:
    assert topic_of({"themen": [" ", ""], "thema_kurz": "  Rote  Sterne "}) == "rote sterne"
    assert topic_of(None) == ""


def test_uptake_takes_the_closest_question_above_the_threshold() -> None:
    offers = [OpenQuestion("1", "a"), OpenQuestion("2", "b")]
    result = judge([1.0, 0.0], [[0.0, 1.0], [0.8, 0.6]], offers)
    assert result.taken == offers[1] and result.cosine == pytest.approx(0.8)
    assert result.taken_up is True
    missed = judge([1.0, 0.0], [[0.0, 1.0], [0.5, 0.866]], offers)
    assert missed.taken is None and missed.taken_up is False and missed.cosine == pytest.approx(0.5)


def test_offers_are_read_leniently() -> None:
    state: Any = {
        "uptake_offers": [{"id": 3, "frage": " Wer  ist Anna? "}, "Wo wohnt sie?", {"frage": ""}, 7]
    }
    assert offered_questions(state) == [
        OpenQuestion("3", "Wer ist Anna?"),
        OpenQuestion(None, "Wo wohnt sie?"),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("timeline_check(2026-12-07)", ("timeline_check", "2026-12-07")),
        ("TOOL: web_search('Hauptstadt Australien')", ("web_search", "Hauptstadt Australien")),
        ('  memory_search("Anna") ', ("memory_search", "Anna")),
        ("web_fetch(https://a.example/x?y=(1))", ("web_fetch", "https://a.example/x?y=(1)")),
        ("suche Anna", None),
        ("", None),
    ],
)
def test_tool_calls_are_parsed(text: str, expected: tuple[str, str] | None) -> None:
    assert parse_call(text) == expected


def test_drive_snapshot_drops_goal_vectors() -> None:
    external = Personality()
    external.emotion = Emotion(emotions_vector="spirale")
    state: Any = {
        "external": external,
        "activated_goals": [{"id": 1, "titel": "Ruhe", "embedding": [0.1, 0.2], "similarity": 0.7}],
        "gravitation_term": 0.25,
    }
    assert drive_snapshot(state, 12.5) == {
        "conversation_vector": "spirale",
        "activated_goals": [{"id": 1, "titel": "Ruhe", "similarity": 0.7}],
        "gravity_term": 0.25,
        "timestamp": 12.5,
    }
