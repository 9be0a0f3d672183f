"""Run one turn's planner ⇄ agent_dispatch loop the way the CharacterGraph wires it."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import Any
from zoneinfo import ZoneInfo

from langgraph.graph import END, START, StateGraph

from novaberg.agents.registry import AgentRegistry, discover_agents
from novaberg.graph.contract import GraphDeps
from novaberg.graph.nodes.agent_dispatch import agent_dispatch
from novaberg.graph.nodes.planner import planner, route_after_planner
from novaberg.graph.state import ConversationState

BERLIN = ZoneInfo("Europe/Berlin")
NOW = datetime(2026, 7, 31, 14, 0, tzinfo=BERLIN)
"""Fri 2026-07-31 14:00 Europe/Berlin (spec agents.md §7)."""

_REGISTRY: AgentRegistry | None = None


def registry() -> AgentRegistry:
    global _REGISTRY
    if _REGISTRY is None:
        _REGISTRY = discover_agents()
    return _REGISTRY


def build_loop(deps: GraphDeps, reg: AgentRegistry | None = None) -> Any:
    reg = reg or registry()
    graph = StateGraph(ConversationState)
    graph.add_node("planner", partial(planner, deps=deps, registry=reg))
    graph.add_node("agent_dispatch", partial(agent_dispatch, deps=deps, registry=reg))

    async def conversation_vector(state: ConversationState) -> dict[str, Any]:
        return {}

    graph.add_node("conversation_vector", conversation_vector)
    graph.add_edge(START, "planner")
    graph.add_conditional_edges("planner", route_after_planner)
    graph.add_edge("agent_dispatch", "planner")
    graph.add_edge("conversation_vector", END)
    return graph.compile()


def user_turn(text: str, target: str, action: str = "agent", **extra: Any) -> dict[str, Any]:
    return {
        "user_id": "u1",
        "character_id": "nova",
        "user_prompt": text,
        "management_action": action,
        "management_target": target,
        "management_target_type": "titel",
        "agent_results": [],
        "agent_name": "",
        "event_payload": {"reiz_herkunft": "nutzer_turn"},
        **extra,
    }


async def run_turn(
    deps: GraphDeps, text: str, target: str = "", action: str = "agent", **extra: Any
) -> dict[str, Any]:
    """A routed user turn; `action="resume"` for the answer to a pending question."""
    if action == "resume":
        target = ""
    return await build_loop(deps).ainvoke(user_turn(text, target, action, **extra))


def last(out: dict[str, Any]) -> Any:
    return out["agent_results"][-1]
