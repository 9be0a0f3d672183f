"""One full turn in-process (HumanGraph → CharacterGraph), as `novaberg turn` runs it."""

from __future__ import annotations

from typing import Any

from graph_helpers import PERCEPTION_OK, script_human

from novaberg.graph.contract import RELEASE_NODE, GraphDeps
from novaberg.graph.runner import GraphRuntime, run_turn_inprocess
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store.keys import Pair
from novaberg.store.pipeline_log import read_turn
from novaberg.store.session import read_turns

PAIR = Pair("meister", "nova")


def script_main_path(scripted: ScriptedLLM) -> None:
    scripted.add(
        ".*",
        schema="RouterDecision",
        output={"needs_memory": False, "needs_web": False, "needs_timeline": False,
                "timeline_query": None, "momentum": "mid", "management_action": "",
                "management_target": "", "management_target_typ": "titel"},
    )  # fmt: skip
    for schema in ("PsychologistVerdict", "EthicistVerdict"):
        scripted.add(".*", schema=schema, output={"score": 0.05})
    scripted.add(".*", schema="JuristVerdict", output={"score": 0.05, "direktiven_score": 0.0})


async def test_full_turn_writes_both_session_turns_and_reports_stages(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_main_path(scripted)
    seen: list[tuple[str, str]] = []

    async def on_stage(graph: str, node: str, state: dict[str, Any], ms: float) -> None:
        seen.append((graph, node))
        assert ms >= 0

    result = await run_turn_inprocess(runtime, PAIR, "Wie geht's dir?", on_stage)
    assert "pfad1_ausfall" not in result.event_payload
    assert seen[:5] == [
        ("human", n) for n in ("perception", "enricher", "ei_calc", "salience", "dispatcher")
    ]
    assert ("character", RELEASE_NODE) in seen and seen[-1] == ("character", "dispatcher")

    user_turn, nova_turn = await read_turns(deps.redis, PAIR)
    assert (user_turn["rolle"], user_turn["inhalt"]) == ("user", "Wie geht's dir?")
    assert nova_turn["rolle"] == "assistant"
    assert nova_turn["inhalt"] == result.response["nachricht"] != ""
    assert nova_turn["emotion"] == result.response["emotion"]
    assert user_turn["turn_id"] == nova_turn["turn_id"] == result.turn_id
    assert nova_turn["nachrichten_ids"] == user_turn["nachrichten_ids"]

    response = result.response
    assert response["turn_id"] == result.turn_id
    assert response["reiz_herkunft"] == "nutzer_turn"
    assert response["tribunal_verdict"] == "ok"
    assert response["nachrichten_ids"] == result.event_payload["nachrichten_ids"]

    await deps.log.flush()  # type: ignore[union-attr]
    rows = [r for r in await read_turn(deps.pool, result.turn_id) if r["art"] == "node"]
    assert [(r["quelle"], r["node"]) for r in rows] == seen
    assert all(r["ergebnis"] == "ok" for r in rows)


async def test_human_only_turn_stops_after_path_one(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    result = await run_turn_inprocess(runtime, PAIR, "Hallo Nova", with_character=False)
    assert result.character_state == {}
    assert [t["rolle"] for t in await read_turns(deps.redis, PAIR)] == ["user"]


async def test_a_worker_process_gets_its_graphs_compiled_before_the_first_turn(
    settings, redis, db, model
) -> None:  # type: ignore[no-untyped-def]
    """`graph_runtime` (serve and worker) builds both graphs at startup, so they are part of
    the heap the process freezes and the first turn does not compile them."""
    from novaberg.events.worker import graph_runtime

    graphs = graph_runtime(settings, redis, db, model)
    assert isinstance(graphs, GraphRuntime)
    assert graphs._human is not None
    assert graphs._character is not None
    assert set(graphs._character.nodes) >= {"db_access", "tribunal", "dispatcher"}
    await graphs.deps.log.close()  # type: ignore[union-attr]


async def test_a_healthy_first_turn_logs_no_error(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM, caplog: Any
) -> None:
    """ERROR means someone must act. The first turn of a pair (no emotion history yet, no
    gravity points) is an expected state: it may log at DEBUG, never at ERROR. A neutral
    first utterance leaves Nova's history empty (no empathy entry)."""
    neutral = {**PERCEPTION_OK, "emotional": {"emotion": "neutral", "arousal": 0.3}}
    script_human(scripted, perception=neutral)
    script_main_path(scripted)
    caplog.set_level("DEBUG", logger="novaberg")
    result = await run_turn_inprocess(runtime, PAIR, "Hallo, wir kennen uns noch nicht.")
    assert result.response["nachricht"]
    errors = [r.getMessage() for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")]
    assert errors == []
    assert any("empty emotion history" in r.getMessage() for r in caplog.records), (
        "the first turn takes the empty-history path this test is about"
    )
