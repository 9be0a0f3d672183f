"""Pure parts of the shared nodes: salience math, session-turn building, update merging."""

from __future__ import annotations

import pytest

from novaberg.graph.nodes.dispatcher import build_session_turn
from novaberg.graph.nodes.salience import (
    SalienceScore,
    character_salience,
    goal_pulled,
    human_salience,
    needs_segmentation,
    ordered_union,
)
from novaberg.graph.personality import Emotion, InternalPersonality, Personality
from novaberg.graph.runner import merge_update


def test_segmentation_rule() -> None:
    assert not needs_segmentation("Kurz. Aber unter sechzig Zeichen.")
    assert not needs_segmentation("x" * 80)  # long, but no "."
    assert needs_segmentation("Das ist ein langer Satz. " * 3)


def test_human_salience_boost_only_with_positive_term() -> None:
    assert human_salience(0.3, 0.0) == 0.3
    assert human_salience(0.3, 0.25) == 0.55
    assert human_salience(0.9, 0.5) == 1.0


def test_character_salience_spec_formula() -> None:
    effektiv, eigen, pflicht = character_salience(0.4, 0.2, 0.5, 0.8, 1.0)
    assert eigen == pytest.approx(0.4 * 1.15)
    assert pflicht == pytest.approx(0.8)
    assert effektiv == pytest.approx(0.8)
    # weight clamped to [0.5, 1.5]; effective capped at 1
    assert character_salience(0.1, 0.0, 0.0, 0.9, 3.0)[0] == 1.0
    assert character_salience(0.1, 0.0, 0.0, 0.9, 0.1)[2] == pytest.approx(0.45)
    # no user salience (AgentGraph, impulse) → own path only
    effektiv, eigen, pflicht = character_salience(0.5, 0.0, 1.0, None, 1.0)
    assert pflicht is None and effektiv == pytest.approx(0.65)


def test_goal_pull_lifts_the_raw_score_by_a_share_of_the_headroom() -> None:
    assert goal_pulled(0.5, 0.0) == 0.5
    assert goal_pulled(0.5, 0.3) == pytest.approx(0.65)
    assert goal_pulled(1.0, 0.9) == 1.0 and goal_pulled(0.0, 1.0) == 1.0
    assert goal_pulled(0.5, -0.4) == 0.5  # never lowers
    _, eigen, _ = character_salience(0.4, 0.2, 0.5, None, None, goal_pull=0.5)
    assert eigen == pytest.approx(0.7 * 1.15)
    # the activated goals' term still wins where it is higher than the pulled score
    _, eigen, _ = character_salience(0.2, 0.9, 0.0, None, None, goal_pull=0.1)
    assert eigen == pytest.approx(0.9)


def test_intentions_union_keeps_order_and_drops_unknown() -> None:
    assert ordered_union([["smalltalk", "Humor"], ["humor", "quatsch", "planung"]]) == [
        "smalltalk",
        "humor",
        "planung",
    ]


@pytest.mark.parametrize("value", ["0.5", "hoch", True, None])
def test_non_numeric_salience_is_unreadable(value: object) -> None:
    with pytest.raises(ValueError):
        SalienceScore.model_validate({"salienz": value})


def test_long_lists_are_clipped_not_rejected() -> None:
    score = SalienceScore.model_validate(
        {"salienz": 0.4, "themen": ["t" * 100] * 9, "begruendung": "b" * 999}
    )
    assert len(score.themen) == 3 and len(score.themen[0]) == 40
    assert len(score.begruendung) == 160


def _state(**extra: object) -> dict:
    return {
        "turn_id": "t1",
        "message_ids": ["m1"],
        "user_intentions": ["smalltalk"],
        "event_payload": {},
        "graph_role": "human",
        **extra,
    }


def test_user_turn_from_external() -> None:
    external = Personality(emotion=Emotion(emotion="freude", prompt_topic="Köln"))
    turn = build_session_turn(
        _state(user_prompt="Hallo", external=external, prompt_embedding=[0.1]), 5.0
    )
    assert turn is not None
    assert (turn["rolle"], turn["inhalt"], turn["emotion"]) == ("user", "Hallo", "freude")
    assert turn["themen"] == ["Köln"] and turn["embedding"] == [0.1]
    assert (turn["turn_id"], turn["nachrichten_ids"], turn["zeit"]) == ("t1", ["m1"], 5.0)


def test_assistant_turn_from_internal_without_user_only_fields() -> None:
    internal = InternalPersonality(emotion=Emotion(emotion="zufriedenheit", arousal=0.4))
    turn = build_session_turn(
        _state(user_prompt="Hallo", response="Hi!", internal=internal, graph_role="character"),
        5.0,
    )
    assert turn is not None
    assert (turn["rolle"], turn["inhalt"], turn["emotion"]) == ("assistant", "Hi!", "zufriedenheit")
    assert "themen" not in turn and "embedding" not in turn


def test_no_turn_in_agent_graph_or_for_an_unanswered_impulse() -> None:
    assert build_session_turn(_state(user_prompt="x", graph_role="agent"), 1.0) is None
    impulse = _state(eigener_gedanke="Gedanke", event_payload={"reiz_herkunft": "eigener_impuls"})
    assert build_session_turn(impulse, 1.0) is None


def test_merge_update_uses_channel_reducers() -> None:
    state: dict = {"pending_writes": [{"target": "a"}], "node_timings": {"x": 1.0}, "response": "r"}
    merge_update(state, {"pending_writes": [{"target": "b"}], "node_timings": {"y": 2.0}})
    merge_update(state, {"response": "s"})
    merge_update(state, None)
    assert [w["target"] for w in state["pending_writes"]] == ["a", "b"]
    assert state["node_timings"] == {"x": 1.0, "y": 2.0}
    assert state["response"] == "s"
