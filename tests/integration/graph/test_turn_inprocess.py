"""One full turn in-process (HumanGraph → CharacterGraph), as `novaberg turn` runs it."""

from __future__ import annotations

from typing import Any

from graph_helpers import HUMAN_STEPS, PERCEPTION_OK, SCORE_OK, in_steps, script_human

from novaberg.graph.contract import RELEASE_NODE, GraphDeps, HumanTurn
from novaberg.graph.runner import GraphRuntime, run_turn_inprocess
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
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
    human = [node for graph, node in seen if graph == "human"]
    assert in_steps(human, HUMAN_STEPS) == HUMAN_STEPS
    # the CharacterGraph starts once the user's turn is stored (the rest of path 1 runs on)
    assert {node for _, node in seen[:2]} == {"perception", "situation_reader"}
    assert seen[2:5] == [("human", n) for n in ("enricher", "ei_calc", "session_turn")]
    assert ("character", RELEASE_NODE) in seen and ("character", "dispatcher") in seen
    assert result.released_ms is not None and result.release_node == "evaluate"

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
    assert sorted((r["quelle"], r["node"]) for r in rows) == sorted(seen)
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


# --- the HumanGraph hands on early; its tail stores the same and reaches the answer ---------


async def test_path_one_hands_on_after_the_session_turn_and_its_tail_still_arrives(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """Salience is slow here: the CharacterGraph starts before it finished, the answer still
    carries salience's intentions (through the enricher), and the stored user turn ends up
    with them and its kern, as when the turn was written at the end of Path 1."""
    script_human(scripted)
    script_main_path(scripted)
    scripted.add(".*", SCORE_OK, schema="SalienceScore", latency_ms=400)
    seen: list[tuple[str, str]] = []
    result = await run_turn_inprocess(
        runtime, PAIR, "Ich ziehe nach Köln!", lambda g, n, s, ms: seen.append((g, n))
    )
    assert seen.index(("character", "db_access")) < seen.index(("human", "salience"))
    assert result.event_payload["pfad1_nachlauf"] is True
    assert result.event_payload["salienz_human"] is None
    assert "user_intentionen" not in result.event_payload  # the session's older ones
    assert result.response["user_intentionen"] == SCORE_OK["intentionen"]
    assert result.character_state["human_salience"] == 0.8
    assert result.character_state.get("human_tail_failure") is None

    user_turn, nova_turn = await read_turns(deps.redis, PAIR)
    assert user_turn["intentionen"] == SCORE_OK["intentionen"]
    assert user_turn["kern"] == result.human_state["session_turn_core"] != ""
    assert nova_turn["intentionen"] == SCORE_OK["intentionen"]
    await deps.log.flush()  # type: ignore[union-attr]
    rows = await read_turn(deps.pool, result.turn_id)
    (enricher,) = [r for r in rows if r["node"] == "enricher" and r["quelle"] == "character"]
    assert enricher["inhalt"]["pfad1_nachlauf"]["salienz_human"] == 0.8


async def test_the_stored_user_turn_is_the_same_as_when_path_one_ran_to_its_end(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """The session holds the same user turn whether the dispatcher writes it whole (the
    table without `session_turn`) or `session_turn` stores it early and the dispatcher
    completes it."""
    from novaberg.graph.base import compile_graph, linear
    from novaberg.graph.human_graph import HUMAN_TABLE
    from novaberg.graph.runner import _stream
    from novaberg.store.keys import session_turns
    from novaberg.wire import GRAPH_HUMAN

    script_human(scripted)
    result = await run_turn_inprocess(runtime, PAIR, "Ich ziehe nach Köln!", with_character=False)
    (early,) = await read_turns(deps.redis, PAIR)
    await deps.redis.delete(session_turns(PAIR))

    whole = linear([(n.name, n.fn) for n in HUMAN_TABLE if n.name != "session_turn"])
    graph = compile_graph(whole, deps, GRAPH_HUMAN)
    state = runtime.human_state(
        HumanTurn(PAIR, result.turn_id, "Ich ziehe nach Köln!", ["m"], deps.clock())
    )
    async for _ in _stream(graph, {**state, "message_ids": early["nachrichten_ids"]}):
        pass
    (late,) = await read_turns(deps.redis, PAIR)
    assert early == late


async def test_a_tail_that_never_arrives_is_a_visible_gap(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM, monkeypatch: Any
) -> None:
    from novaberg.graph.nodes import human_tail  # the module the enricher awaits it with

    monkeypatch.setattr(human_tail, "HUMAN_TAIL_TIMEOUT_S", 0.2)
    script_human(scripted)
    script_main_path(scripted)
    scripted.add(".*", SCORE_OK, schema="SalienceScore", latency_ms=1500)
    result = await run_turn_inprocess(runtime, PAIR, "Ich ziehe nach Köln!")
    assert result.response["nachricht"]  # the answer still leaves
    assert result.character_state["human_salience"] is None
    assert result.character_state["human_tail_failure"] == "zeitueberschreitung"
    (user_turn, _) = await read_turns(deps.redis, PAIR)
    assert user_turn["intentionen"] == SCORE_OK["intentionen"]  # Path 1 still completed it
