"""Planner node: runs every task agent the turn needs, one after the other, then ends the
agent loop (docs/behaviour/nodes.md#planner).

Wiring: `router → (management_action ? planner : the pre-answer join)`,
`planner → route_after_planner → agent_dispatch | the pre-answer join`,
`agent_dispatch → planner`. The first pass makes the turn's plan (`agent_plan`,
agents/task_plan.py): the router's tasks — the situation's acute object first
(`objekt_urteil`), then in the order the person said them — each with its part of the
utterance; a lone router target or a resume is a plan of one. Every later pass
takes the next task; an empty plan ends the loop with the task block. The plan is fixed on the first pass, so
every task runs exactly
once however its agent ends — without that bound a question asked again recursed to the
graph's recursion limit.
"""

from __future__ import annotations

import logging
from typing import Any

from novaberg.agents import notes, timeline
from novaberg.agents.deps import GraphDeps
from novaberg.agents.pending import pending_question
from novaberg.agents.registry import AgentRegistry
from novaberg.agents.stimulus import stimulus_is_own_thought, stimulus_text
from novaberg.agents.task_block import build_task_block
from novaberg.agents.task_plan import (
    PlannedTask,
    object_priority,
    over_limit_result,
    plan_tasks,
    single_task,
)
from novaberg.graph.contract import AGENT_NODE, ANSWER_JOIN
from novaberg.graph.offer_chain import offered_agent
from novaberg.graph.state import ConversationState

log = logging.getLogger(__name__)

__all__ = ["choose_agent", "planner", "route_after_planner"]

TIMELINE_AGENT = timeline.NAME
NOTES_AGENT = notes.NAME
"""Fallback agents of the choice's first and last rule."""


def _perception_intent(state: ConversationState) -> str:
    external = state.get("external")
    emotion = getattr(external, "emotion", None)
    return str(getattr(emotion, "intent", "") or "")


def choose_agent(state: ConversationState, registry: AgentRegistry) -> str | None:
    """The agent for a lone `agent` action, first match wins; only registered agents count.
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


async def _make_plan(
    state: ConversationState, deps: GraphDeps, registry: AgentRegistry
) -> tuple[list[PlannedTask], dict[str, Any]]:
    """The turn's plan and what the first pass adds to the update when nothing runs."""
    if state.get("management_action") == "resume":
        if stimulus_is_own_thought(state):
            # An impulse never answers the user's pending question.
            log.warning("planner: resume on an impulse turn ignored; pending question kept")
            return [], {"management_action": ""}
        pending = await pending_question(deps.redis, state.get("user_id", ""))
        name = pending.get("agent_name") if pending else None
        if name and registry.find(name):
            return single_task(name), {}
        return [], {"management_action": ""}
    acute = object_priority(
        state.get("object_judgement") or [], str(state.get("object_reference") or "")
    )
    plan = plan_tasks(state.get("management_tasks") or [], stimulus_text(state), registry, acute)
    if not plan:
        name = choose_agent(state, registry)
        plan = single_task(name) if name else []
    if not plan:
        log.info("planner: no agent for target %r; handing back", state.get("management_target"))
        return [], {"management_action": "", "management_result": ""}
    if len(plan) > 1:
        log.info("planner: %d tasks: %s", len(plan), [task.agent for task in plan])
    return plan, {"_log": _plan_log(plan, acute)}


def _plan_log(plan: list[PlannedTask], acute: list[str]) -> dict[str, Any]:
    """The plan in the node's pipeline_log row: each task in run order, and the acute
    objects that ordered it (from the situation's `objekt_urteil`)."""
    row: dict[str, Any] = {"plan": [{"agent": t.agent, "teil": t.text} for t in plan]}
    if acute:
        row["nach_objekt"] = acute
    return row


def _finish(state: ConversationState, results: list[Any], **extra: Any) -> dict[str, Any]:
    block, cut = build_task_block(results, state.get("management_result", ""))
    return {
        "agent_name": "",
        "agent_task": "",
        "agent_plan": [],
        "agent_results": results,
        "task_block": block,
        "task_context_cut": cut,
        **extra,
    }


async def planner(
    state: ConversationState, deps: GraphDeps, registry: AgentRegistry
) -> dict[str, Any]:
    """Run the next task of the plan (`agent_name`, `agent_task`) or end the loop."""
    if not state.get("management_action"):
        return {"agent_name": ""}
    extra: dict[str, Any] = {}
    plan = state.get("agent_plan")
    if plan is None:
        plan, extra = await _make_plan(state, deps, registry)
    results = list(state.get("agent_results") or [])
    remaining = list(plan)
    while remaining:
        task = remaining.pop(0)
        if task.over_limit:
            results.append(over_limit_result(task))
            continue
        step = {
            "agent_name": task.agent,
            "agent_task": task.text,
            "agent_plan": remaining,
            "agent_results": results,
            "management_result": "",
        }
        if "_log" in extra:  # the first pass: the plan goes into this run's row
            step["_log"] = extra["_log"]
        return step
    return _finish(state, results, **extra)


def route_after_planner(state: ConversationState) -> str:
    """Conditional edge after the planner."""
    return AGENT_NODE if state.get("agent_name") else ANSWER_JOIN
