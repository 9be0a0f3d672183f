"""The node wrapper: channel check, pipeline_log rows, model-call counting."""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from novaberg.agents.registry import discover_agents
from novaberg.config import Role
from novaberg.graph.base import Node, UndeclaredChannelError, compile_graph, linear, wrap_node
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.graph.state import ConversationState
from novaberg.llm.errors import ModelOutputError
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store.pipeline_log import read_turn

STATE: ConversationState = {"turn_id": "t-wrap", "user_id": "meister", "character_id": "nova"}


async def test_ok_row_has_duration_calls_and_summary(deps: GraphDeps) -> None:
    async def two_calls(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
        await deps.model.chat(Role.ANALYSIS, [{"role": "user", "content": "eins"}])
        await deps.model.chat(Role.ANALYSIS, [{"role": "user", "content": "zwei"}])
        return {"response": "fertig", "_log": {"zeichen": 6}}

    update = await wrap_node("probe", two_calls, deps, "human")(STATE)
    assert update["response"] == "fertig"
    assert "_log" not in update
    assert set(update["node_timings"]) == {"probe"}

    await deps.log.flush()  # type: ignore[union-attr]
    rows = await read_turn(deps.pool, "t-wrap")
    assert len(rows) == 1
    row = rows[0]
    assert (row["quelle"], row["node"], row["art"], row["ergebnis"]) == (
        "human",
        "probe",
        "node",
        "ok",
    )
    assert row["modell_aufrufe"] == 2
    assert row["dauer_ms"] is not None and row["dauer_ms"] >= 0
    assert row["inhalt"]["zeichen"] == 6
    assert (row["user_id"], row["character_id"]) == ("meister", "nova")


async def test_row_tells_how_each_structured_call_ended(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """First-time valid, valid after the hint, unreadable after it: per schema, in the row."""
    scripted.add("gut", {"status": "ok"}, schema="Probe")
    scripted.add("zweiter", {"status": "ok"}, schema="Probe")
    scripted.add("zweiter", fault="malformed", times=1, schema="Probe")  # tried first
    scripted.add("schlecht", fault="malformed", schema="Probe")

    class Probe(BaseModel):
        status: Literal["ok"]

    async def three(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
        for text in ("gut", "zweiter Anlauf", "gut"):
            await deps.model.structured(Role.ANALYSIS, [{"role": "user", "content": text}], Probe)
        with pytest.raises(ModelOutputError):
            await deps.model.structured(
                Role.ANALYSIS, [{"role": "user", "content": "schlecht"}], Probe
            )
        return {}

    await wrap_node("drei", three, deps, "human")(STATE)
    await deps.log.flush()  # type: ignore[union-attr]
    (row,) = await read_turn(deps.pool, "t-wrap")
    assert row["inhalt"]["strukturiert"] == {
        "Probe": {"erster_versuch": 2, "nach_hinweis": 1, "unlesbar": 1}
    }
    assert row["modell_aufrufe"] == 6


async def test_undeclared_key_raises_and_logs_fehler(deps: GraphDeps) -> None:
    async def leaky(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
        return {"response": "x", "gibt_es_nicht": 1}

    with pytest.raises(UndeclaredChannelError, match="gibt_es_nicht"):
        await wrap_node("leaky", leaky, deps, "character")(STATE)
    await deps.log.flush()  # type: ignore[union-attr]
    rows = await read_turn(deps.pool, "t-wrap")
    assert [r["ergebnis"] for r in rows] == ["fehler"]
    assert "gibt_es_nicht" in rows[0]["inhalt"]["fehler"]


async def test_exception_is_logged_then_reraised(deps: GraphDeps) -> None:
    async def boom(state: ConversationState, deps: GraphDeps, *, how: str) -> dict[str, Any]:
        await deps.model.chat(Role.ANALYSIS, [{"role": "user", "content": "vorher"}])
        raise RuntimeError(how)

    with pytest.raises(RuntimeError, match="kaputt"):
        await wrap_node("boom", functools.partial(boom, how="kaputt"), deps, "agent")(STATE)
    await deps.log.flush()  # type: ignore[union-attr]
    (row,) = await read_turn(deps.pool, "t-wrap")
    assert (row["node"], row["ergebnis"], row["quelle"]) == ("boom", "fehler", "agent")
    assert row["modell_aufrufe"] == 1
    assert "RuntimeError: kaputt" in row["inhalt"]["fehler"]


async def test_a_declared_linear_graph_keeps_declared_keys(deps: GraphDeps) -> None:
    async def first(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
        return {"response": "a"}

    async def second(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
        return {"model": state["response"] + "b"}

    compiled = compile_graph(linear([("first", first), ("second", second)]), deps, "character")
    final = await compiled.ainvoke(dict(STATE))
    assert final["model"] == "ab"
    assert set(final["node_timings"]) == {"first", "second"}


def test_unknown_graph_name_is_rejected(deps: GraphDeps) -> None:
    async def noop(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
        return {}

    with pytest.raises(ValueError):
        wrap_node("noop", noop, deps, "menschlich")


def test_a_declaration_refuses_an_edge_to_an_undeclared_node(deps: GraphDeps) -> None:
    async def noop(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
        return {}

    with pytest.raises(ValueError, match="undeclared"):
        compile_graph((Node("a", noop, then="b"),), deps, "character")
    with pytest.raises(ValueError, match="exactly one"):
        compile_graph((Node("a", noop),), deps, "character")


def test_the_runtime_compiles_every_agent_subgraph_once(deps: GraphDeps) -> None:
    runtime = GraphRuntime(deps, registry=discover_agents()).compile()
    for agent in runtime.registry.all().values():
        assert agent._compiled is not None and agent._compiled[0] is deps, agent.name
        assert agent.compiled(deps) is agent._compiled[1]  # reused, not built again


def _recorder(name: str, ran: list[str], seconds: float = 0.0, loops: int = 0) -> Any:
    """A node that waits `seconds`, records its start, appends to node_annotations and
    (with `loops`) routes back to itself that many times, then to `join`."""

    async def node(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
        ran.append(name)
        await asyncio.sleep(seconds)
        return {"node_annotations": [name]}

    return node


async def test_fan_out_runs_branches_at_once_and_joins_run_once(deps: GraphDeps) -> None:
    """start fans out to a slow one-node branch, a two-node chain and a routed loop; the
    barrier node waits for both plain branches, the deferred join for everything and
    runs once."""
    ran: list[str] = []
    laps = {"n": 0}

    def route_loop(state: ConversationState) -> str:
        laps["n"] += 1
        return "loop" if laps["n"] < 3 else "join"

    table = (
        Node("start", _recorder("start", ran), then=("slow", "chain1", "loop")),
        Node("slow", _recorder("slow", ran, 0.2), then="both"),
        Node("chain1", _recorder("chain1", ran), then="chain2"),
        Node("chain2", _recorder("chain2", ran), then="both"),
        Node("both", _recorder("both", ran), then="join", barrier=True),
        Node("loop", _recorder("loop", ran), route=route_loop, routes=("loop", "join")),
        Node("join", _recorder("join", ran), then="end", defer=True),
        Node("end", _recorder("end", ran), then="__end__"),
    )
    final = await compile_graph(table, deps, "character").ainvoke(dict(STATE))
    assert ran.count("both") == 1 and ran.count("join") == 1 and ran.count("loop") == 3
    # the slow branch did not hold the chain or the loop back, the barrier waited for it
    assert ran.index("chain2") < ran.index("both") and ran.index("loop") < ran.index("both")
    assert ran[-2:] == ["join", "end"]
    assert sorted(final["node_annotations"]) == sorted(ran)


def test_a_routed_node_cannot_lead_to_a_barrier(deps: GraphDeps) -> None:
    async def noop(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
        return {}

    with pytest.raises(ValueError, match="barrier"):
        compile_graph(
            (
                Node("a", noop, route=lambda s: "b", routes=("b",)),
                Node("b", noop, then="__end__", barrier=True),
            ),
            deps,
            "character",
        )
