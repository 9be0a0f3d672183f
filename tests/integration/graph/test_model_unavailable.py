"""A model that cannot be used (`ModelUnavailable`: unreachable, refusing requests) ends
the run at the first node that meets it before the answer is released — no defaults, no
unjudged answer. One unreadable or slow answer keeps the node's fallback, and after the
release a dead model costs nothing but the perception of Nova's own answer."""

from __future__ import annotations

from typing import Any

import pytest
from graph_helpers import in_steps, script_human
from test_character_graph import (
    MAIN_PATH,
    PAIR,
    RESPONDER,
    run_character,
    run_human,
    script_character,
    user_turn,
)
from test_character_graph import human_turn as make_turn

from novaberg.graph.contract import RELEASE_NODE, CharacterTurn, GraphDeps, release_ready
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.errors import ModelUnavailable
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store.pipeline_log import read_turn


async def _nodes_until_failure(
    runtime: GraphRuntime,
) -> tuple[list[str], BaseException, bool]:
    """The CharacterGraph's nodes that completed before a `ModelUnavailable` ended it, and
    whether the answer would have been released on the way."""
    payload = await run_human(runtime, make_turn("Wie geht's dir?"))
    seen: list[str] = []
    released = False
    turn = CharacterTurn(
        pair=PAIR, turn_id=payload["turn_id"], event_source="user", event_payload=payload
    )
    with pytest.raises(ModelUnavailable) as caught:
        async for node, state in runtime.stream_character(runtime.character_state(turn)):
            seen.append(node)
            released = released or release_ready(state)
    return seen, caught.value, released


@pytest.mark.parametrize(
    ("failing", "rule", "ran_before"),
    [
        # Path 1 hands on no reading; the situation node calls and meets the dead model
        ("situation_node", {"schema": "SituationReading"}, {"db_access"}),
        ("router", {"schema": "RouterDecision"}, {"ei_calc"}),
        ("conversation_vector", {"match": r"\[STIMMUNG DES NUTZERS\]"}, {"enricher"}),
        ("responder", {"match": RESPONDER}, {"composer", "conversation_vector"}),
        ("thinker", {"schema": "ThinkerCheck"}, {"responder"}),
        ("tribunal", {"schema": "EthicistVerdict"}, {"thinker"}),
    ],
)
async def test_a_model_that_cannot_be_used_ends_the_run_before_the_release(
    runtime: GraphRuntime,
    scripted: ScriptedLLM,
    failing: str,
    rule: dict[str, Any],
    ran_before: set[str],
) -> None:
    script_human(scripted)
    script_character(scripted)
    # the thinker runs only for answers that state facts
    scripted.add(RESPONDER, "Dein Termin ist am Montag um 14 Uhr.")
    scripted.add(rule.get("match", ".*"), fault="error", schema=rule.get("schema"))
    nodes, exc, released = await _nodes_until_failure(runtime)
    # the nodes it depends on ran; it did not finish, nor did anything after it
    assert ran_before <= set(nodes) and failing not in nodes, f"{failing} raised: {nodes}"
    assert "evaluate" not in nodes and not released
    assert "scripted error" in str(exc)


async def test_a_failing_corrector_ends_the_run(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    scripted.add(
        "Antwort: Mir geht",
        {"score": 0.95, "begruendung": "verletzend"},
        schema="PsychologistVerdict",
    )
    scripted.add(
        "Antwort: Mir geht", {"score": 0.95, "begruendung": "schaedlich"}, schema="EthicistVerdict"
    )
    scripted.add(r"\[KRITIK\]", fault="error")
    nodes, _, released = await _nodes_until_failure(runtime)
    assert nodes[-1] == "evaluate", "the corrector was next and raised"
    assert not released


async def test_a_slow_or_unreadable_answer_keeps_the_fallbacks(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    scripted.add(".*", fault="timeout", schema="RouterDecision")
    scripted.add(".*", fault="malformed", schema="EthicistVerdict")
    nodes, final, _ = await user_turn(runtime, "Wie geht's dir?")
    assert in_steps(nodes, MAIN_PATH) == MAIN_PATH
    assert "ModelTimeout" in final["router_failure"]
    assert final["tribunal_failures"] == ["ethiker: unlesbar"]


async def test_after_the_release_a_dead_model_costs_only_nova_s_own_perception(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    scripted.add("Mir geht", fault="error", schema="PerceptionResult")  # Nova's answer
    scripted.add("Mir geht", fault="error", schema="SalienceScore")
    payload = await run_human(runtime, make_turn("Wie geht's dir?"))
    nodes, final = await run_character(runtime, payload)
    assert in_steps(nodes, MAIN_PATH) == MAIN_PATH
    assert final["response"] == "Mir geht's gut, danke der Nachfrage!"
    await deps.log.flush()  # type: ignore[union-attr]
    rows = {r["node"]: r for r in await read_turn(deps.pool, payload["turn_id"])}
    assert rows[RELEASE_NODE]["inhalt"]["ausfall"] == "modell_nicht_erreichbar"


async def test_the_users_perception_does_not_fall_back_on_a_dead_model(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    scripted.add(".*", fault="error", schema="PerceptionResult")
    turn = make_turn("Hallo?")
    with pytest.raises(ModelUnavailable):
        async for _node, _state in runtime.stream_human(runtime.human_state(turn)):
            pass
