"""The concurrent CharacterGraph's pure parts: the release rule, the routes of the
speculative perception, the tables (fan-out, join, every node labelled), the gravity points
and the emotional_gravitation node, and the 24 fields of `character_response`."""

from __future__ import annotations

from typing import Any

import pytest

from novaberg.agents.registry import AgentRegistry
from novaberg.events.model import STAGE_LABELS
from novaberg.graph.character_graph import CHARACTER_NODE_NAMES, character_table
from novaberg.graph.contract import ANSWER_JOIN, RELEASE_NODE, release_ready
from novaberg.graph.human_graph import HUMAN_EVENT_NODE, HUMAN_NODE_NAMES
from novaberg.graph.nodes.emotional_gravitation import emotional_gravitation, gravity_points
from novaberg.graph.nodes.evaluate import (
    route_after_evaluate,
    route_after_perception_assistant,
)
from novaberg.graph.personality import Emotion, InternalPersonality, Personality
from novaberg.graph.runner import GraphRuntime

NOW = 1_790_000_000.0
DAY = 86_400.0


# --- release rule ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "ready"),
    [
        ({"evaluate_decision": "ok", "response": "A", "perceived_response": "A"}, True),
        ({"evaluate_decision": "fallback", "response": "F", "perceived_response": "F"}, True),
        # the speculative perception finished before the judges: nothing decided yet
        ({"response": "A", "perceived_response": "A"}, False),
        ({"evaluate_decision": "correct", "response": "A", "perceived_response": "A"}, False),
        # ok on the corrected text, but only the draft was perceived so far
        ({"evaluate_decision": "ok", "response": "B", "perceived_response": "A"}, False),
        # the fallback replaced the text: the perception of the draft must not leave
        ({"evaluate_decision": "fallback", "response": "F", "perceived_response": "A"}, False),
        ({"evaluate_decision": "ok", "response": "A"}, False),
    ],
)
def test_release_waits_for_a_decision_and_the_perception_of_that_text(
    state: dict[str, Any], ready: bool
) -> None:
    assert release_ready(state) is ready


def test_routes_of_evaluate_and_the_speculative_perception() -> None:
    assert route_after_evaluate({"evaluate_decision": "ok"}) == "ei_calc_persist"
    assert route_after_evaluate({"evaluate_decision": "correct"}) == "corrector"
    assert route_after_evaluate({"evaluate_decision": "fallback"}) == RELEASE_NODE
    # next to the tribunal (first round or after a correction) → evaluate
    assert route_after_perception_assistant({}) == "evaluate"
    assert route_after_perception_assistant({"evaluate_decision": "correct"}) == "evaluate"
    # the re-read of a fallback → the post-release tail
    assert route_after_perception_assistant({"evaluate_decision": "fallback"}) == (
        "ei_calc_persist"
    )


# --- tables ---------------------------------------------------------------------------------


def test_the_character_table_fans_out_and_joins() -> None:
    table = {node.name: node for node in character_table(AgentRegistry())}
    # the situation before the router (both branches after it see the same understanding),
    # in the step of ei_calc, so the router's call shares the enricher's round
    assert table["db_access"].successors() == ("ei_calc", "situation_node")
    assert table["ei_calc"].successors() == ("enricher",)
    assert table["situation_node"].successors() == ("router", "memory_anchor")
    assert table["enricher"].successors() == (
        "emotional_gravitation",
        "landscape",
        "conversation_vector",
    )
    assert [name for name, node in table.items() if node.barrier] == [
        "memory_anchor",
        "responder",
        "dispatcher",
    ]
    # after the release: the uptake next to salience → imprint; the dispatcher after both
    assert table["ei_calc_persist"].successors() == ("salience", "uptake")
    assert table["salience"].successors() == ("imprint",)
    assert table["imprint"].successors() == table["uptake"].successors() == ("dispatcher",)
    assert set(table["thinker"].successors()) == {"tribunal", RELEASE_NODE}
    assert set(table["corrector"].successors()) == {"tribunal", RELEASE_NODE}
    # the composer (the join of the pre-answer branches) and the vector run deferred,
    # together; the responder waits for both
    assert ANSWER_JOIN == "composer"
    assert sorted(name for name, node in table.items() if node.defer) == [
        "composer",
        "conversation_vector",
    ]
    assert table["composer"].successors() == table["conversation_vector"].successors()
    assert table["memory_anchor"].successors() == (ANSWER_JOIN,)
    assert table["stance_space"].successors() == (ANSWER_JOIN,)
    assert ANSWER_JOIN in table["appointments"].successors()
    assert ANSWER_JOIN in table["planner"].successors()


def test_the_human_graph_hands_on_after_the_session_turn() -> None:
    assert HUMAN_NODE_NAMES.index(HUMAN_EVENT_NODE) == 4
    assert HUMAN_NODE_NAMES[HUMAN_NODE_NAMES.index(HUMAN_EVENT_NODE) + 1 :] == (
        "salience",
        "dispatcher",
    )


def test_every_node_of_both_graphs_has_a_stage_label() -> None:
    missing = [n for n in (*HUMAN_NODE_NAMES, *CHARACTER_NODE_NAMES) if n not in STAGE_LABELS]
    assert missing == []


# --- gravity points and emotional_gravitation -------------------------------------------------


def short_term_hit(similarity: float, emotion: str, salience: float = 0.9) -> dict[str, Any]:
    return {
        "quelle": "kzg",
        "subtyp": "emotion",
        "inhalt": "Der Hund ist gestorben.",
        "gewicht": salience,
        "meta": {
            "similarity": similarity,
            "emotion": emotion,
            "arousal": 0.8,
            "erstellt_am": NOW - DAY,
        },
    }


def test_gravity_points_from_short_and_long_term_memory() -> None:
    long_term = [
        {"cosine": 0.9, "gewicht_decay": 1.0, "emotion": "freude", "inhalt": "Urlaub",
         "erstellt_am": NOW - DAY},
        {"cosine": None, "gewicht_decay": 1.0, "emotion": "wut", "inhalt": "nur gesprungen"},
        {"cosine": 0.95, "gewicht_decay": 1.0, "emotion": "neutral", "inhalt": "neutral"},
    ]  # fmt: skip
    short_term = [
        short_term_hit(0.95, "traurigkeit"),  # cos 0.9 → g ≈ 0.645
        short_term_hit(0.6, "angst"),  # cos 0.2 → below 0.40
    ]
    points = gravity_points(short_term, long_term, NOW)
    assert [(p["quelle"], p["emotion"]) for p in points] == [
        ("kzg", "traurigkeit"),
        ("lzg", "freude"),
    ]
    assert points[0]["gravitation"] == pytest.approx(0.9 * 0.9 * 0.8, rel=0.01)
    assert points[0]["similarity"] == pytest.approx(0.9)  # (1 + cos)/2 turned back into cos
    assert points[1]["gravitation"] == pytest.approx(0.9 * 0.5, rel=0.01)


async def test_emotional_gravitation_pulls_novas_emotion() -> None:
    internal = InternalPersonality(emotion=Emotion(emotion="freude", arousal=0.4))
    points = gravity_points([short_term_hit(0.95, "traurigkeit")], [], NOW)
    state: dict[str, Any] = {
        "internal": internal,
        "nova_emotion_history": [{"emotion": "freude", "gewicht": 0.3, "arousal": 0.4}],
        "gravitation_points": points,
    }
    update = await emotional_gravitation(state, None)  # type: ignore[arg-type]
    history = update["nova_emotion_history"]
    assert history[0]["emotion"] == "traurigkeit"  # w = min(0.5, 0.6 g) ≈ 0.39 > 0.3
    assert update["internal"].emotion.emotion == "traurigkeit"
    assert update["internal"].emotion.arousal == history[0]["arousal"]
    assert internal.emotion.emotion == "freude"  # copied, not mutated
    # no points: nothing changes
    assert set(await emotional_gravitation({**state, "gravitation_points": []}, None)) == {  # type: ignore[arg-type]
        "_log"
    }


# --- character_response ---------------------------------------------------------------------

SEED_RESPONSE_FIELDS = {
    "nachricht", "turn_id", "nachrichten_ids", "reiz_herkunft", "modell", "token_total",
    "emotion", "arousal", "emotions_vektor", "emotions_verlauf", "sprach_stil",
    "beziehungs_dynamik", "nova_emotion", "nova_arousal", "nova_emotions_verlauf",
    "nova_emotions_vektor", "nova_emotion_konflikt", "intent", "tone", "gespraechs_modus",
    "user_intentionen", "momentum", "gespraechsvektor",
}  # fmt: skip
"""The seed's `character_response` list; with `typ` (the message model's) 24 fields."""


def test_character_response_carries_the_seeds_fields() -> None:
    runtime = GraphRuntime(deps=None)  # type: ignore[arg-type]
    user = Personality(
        emotion=Emotion(emotion="freude", arousal=0.7, intent="personal", tone="locker",
                        mode="alltag", language_style="locker", relationship_dynamic="vertrauen")
    )  # fmt: skip
    nova = InternalPersonality(emotion=Emotion(emotion="zufriedenheit", arousal=0.4))
    payload = runtime.response_payload(
        {
            "response": "Hallo!",
            "turn_id": "t1",
            "internal": nova,
            "external": user,
            "event_payload": {"nachrichten_ids": ["m1"], "emotions_verlauf": [{"emotion": "x"}]},
            "momentum": "mid",
            "conversation_hypothesis": "Der Nutzer plaudert.",
            "user_intentions": ["information_teilen"],
        }
    )
    assert set(payload) >= SEED_RESPONSE_FIELDS
    assert len(SEED_RESPONSE_FIELDS) + 1 == 24  # + typ
    assert payload["nova_emotion"] == payload["emotion"] == "zufriedenheit"
    assert payload["sprach_stil"] == "locker" and payload["gespraechs_modus"] == "alltag"
    assert payload["intent"] == "personal" and payload["beziehungs_dynamik"] == "vertrauen"
    assert payload["momentum"] == "mid" and payload["gespraechsvektor"] == "Der Nutzer plaudert."
    assert payload["emotions_verlauf"] == [{"emotion": "x"}]
