"""AgentGraph: a thought is judged and stored as Nova's memory, never as a session turn."""

from __future__ import annotations

from novaberg.agents.stimulus import stimulus_is_own_thought
from novaberg.graph.agent_graph import build_agent_graph, run_agent_graph
from novaberg.pair import Pair
from novaberg.store.pipeline_log import read_turn
from novaberg.store.session import read_turns


async def test_thought_is_judged_but_writes_no_session_turn(deps, redis, db) -> None:  # type: ignore[no-untyped-def]
    pair = Pair("anna", "nova")
    final = await run_agent_graph(
        build_agent_graph(deps),
        pair,
        "impuls-1",
        "Anna wollte mehr über Vulkane auf Island wissen.",
        0.6,
    )
    assert stimulus_is_own_thought(final)
    assert final["graph_role"] == "agent"
    assert await read_turns(redis, pair) == []
    assert final.get("salienz_human") is None  # nobody spoke on this path
    await deps.log.flush()
    rows = await read_turn(db, "impuls-1")
    nodes = [row["node"] for row in rows if row.get("art") == "node"]
    assert nodes == ["enricher", "salience", "dispatcher"]
    assert {row["quelle"] for row in rows if row.get("art") == "node"} == {"agent"}
