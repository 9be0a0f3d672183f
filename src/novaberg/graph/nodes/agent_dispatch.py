"""agent_dispatch node: runs the agent the planner chose, through the agent's own dispatch.

Generic on purpose: it only finds the dispatch function; a new agent is a new folder,
never a new branch here (docs/behaviour/nodes.md#agent-dispatch). A missing dispatch or an
exception becomes an `AgentResult(status="fehler")`, so a broken agent costs
the task, not the turn.
"""

from __future__ import annotations

import logging
from typing import Any

from novaberg.agents.base import AgentResult
from novaberg.agents.deps import GraphDeps
from novaberg.agents.registry import AgentRegistry
from novaberg.agents.stimulus import stimulus_origin
from novaberg.graph.state import ConversationState

log = logging.getLogger(__name__)

__all__ = ["agent_dispatch"]


def _failure(state: ConversationState, name: str, message: str) -> dict[str, Any]:
    result = AgentResult(agent_name=name, result=None, status="fehler", error=message)
    return {
        "agent_results": [*(state.get("agent_results") or []), result],
        "agent_name": "",
        "management_result": f"Fehler: {message}",
    }


async def agent_dispatch(
    state: ConversationState, deps: GraphDeps, registry: AgentRegistry
) -> dict[str, Any]:
    """Run `state["agent_name"]`; always clears `agent_name` so the planner decides next."""
    name = state.get("agent_name") or ""
    if not name:
        return {}
    initiator = stimulus_origin(state)
    agent = registry.find(name)
    dispatch = registry.get_dispatch(name)
    if agent is None or dispatch is None:
        log.error("agent_dispatch: no dispatch for agent %r", name)
        update = _failure(state, name, f"Kein Dispatch für Agent '{name}'.")
    else:
        try:
            update = dict(await dispatch(dict(state), deps, agent))
        except Exception as exc:
            log.exception("agent_dispatch: agent %r raised", name)
            update = _failure(state, name, f"Interner Fehler: {type(exc).__name__}")
    update["agent_name"] = ""
    results = update.get("agent_results") or []
    status = AgentResult.coerce(results[-1]).status if results else "?"
    log.info(
        "agent run: agent=%s initiator=%s status=%s user=%s",
        name,
        initiator,
        status,
        state.get("user_id"),
    )
    return update
