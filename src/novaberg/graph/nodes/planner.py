"""Planner node: picks the task agent for this turn, or ends the agent loop.

Wiring (docs/behaviour/nodes.md#planner):
`router → (management_action ? planner : the pre-answer join)`,
`planner → route_after_planner → agent_dispatch | the pre-answer join`,
`agent_dispatch → planner`. Every agent runs at most once per turn: the second
planner pass sees the agent's result and ends the loop with the task block
(without the guard a re-asked question recursed to the graph's recursion limit).
"""

from __future__ import annotations

import logging
from typing import Any

from novaberg.agents import notes, timeline
from novaberg.agents.base import AgentResult
from novaberg.agents.deps import GraphDeps
from novaberg.agents.pending import pending_question
from novaberg.agents.registry import AgentRegistry
from novaberg.agents.stimulus import stimulus_is_own_thought
from novaberg.agents.task_block import build_task_block
from novaberg.graph.contract import AGENT_NODE, ANSWER_JOIN
from novaberg.graph.offer_chain import offered_agent
from novaberg.graph.state import ConversationState

log = logging.getLogger(__name__)

__all__ = ["choose_agent", "planner", "ran_this_turn", "route_after_planner"]

TIMELINE_AGENT = timeline.NAME
NOTES_AGENT = notes.NAME
"""Fallback agents of the choice's first and last rule."""


def ran_this_turn(state: ConversationState, name: str) -> bool:
    return any(AgentResult.coerce(r).agent_name == name for r in state.get("agent_results") or [])


def _perception_intent(state: ConversationState) -> str:
    external = state.get("external")
    emotion = getattr(external, "emotion", None)
    return str(getattr(emotion, "intent", "") or "")


def choose_agent(state: ConversationState, registry: AgentRegistry) -> str | None:
    """The agent for an `agent` action, first match wins; only registered agents count.
    A bare yes to Nova's offer runs exactly the offered agent (graph/offer_chain.py)."""
    offered = offered_agent(state)
    if offered:
        return offered if registry.find(offered) else None
    needs_timeline = bool(state.get("needs_timeline"))
    if needs_timeline and registry.find(TIMELINE_AGENT):
        return TIMELINE_AGENT
    intent = _perception_intent(state)
    if intent:
        for name, agent in sorted(registry.all().items()):
            if intent in agent.router_intents:
                return name
    matched = registry.match_target(state.get("management_target"))
    if matched:
        return matched
    fallback = TIMELINE_AGENT if needs_timeline else NOTES_AGENT
    return fallback if registry.find(fallback) else None


def _finish(state: ConversationState, **extra: Any) -> dict[str, Any]:
    block, cut = build_task_block(state.get("agent_results"), state.get("management_result", ""))
    return {"agent_name": "", "task_block": block, "task_context_cut": cut, **extra}


async def planner(
    state: ConversationState, deps: GraphDeps, registry: AgentRegistry
) -> dict[str, Any]:
    """Choose an agent (`agent_name`) or end the loop with `task_block`."""
    action = state.get("management_action") or ""
    if not action:
        return {"agent_name": ""}
    if action == "resume":
        if stimulus_is_own_thought(state):
            # An impulse never answers the user's pending question.
            log.warning("planner: resume on an impulse turn ignored; pending question kept")
            return _finish(state, management_action="")
        pending = await pending_question(deps.redis, state.get("user_id", ""))
        name = pending.get("agent_name") if pending else None
        if name and registry.find(name):
            if ran_this_turn(state, name):
                return _finish(state)
            return {"agent_name": name, "management_result": "", "management_detail": ""}
        return _finish(state, management_action="")
    name = choose_agent(state, registry)
    if name:
        if ran_this_turn(state, name):
            return _finish(state)
        return {"agent_name": name, "management_result": "", "management_detail": ""}
    log.info("planner: no agent for target %r; handing back", state.get("management_target"))
    return _finish(state, management_action="", management_result="", management_detail="")


def route_after_planner(state: ConversationState) -> str:
    """Conditional edge after the planner."""
    return AGENT_NODE if state.get("agent_name") else ANSWER_JOIN
