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
from novaberg.agents.dispatch_common import LEARNT
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


def run_summary(name: str, result: AgentResult | None) -> dict[str, Any]:
    """The node's log row: the agent, its status, its classification's cross-check
    (`konfidenz`, the keyword `hinweise`, the learnt phrasings that fired: `gelernt`) and
    the phrasings the carried-out task counted (`woerter_gezaehlt`)."""
    summary: dict[str, Any] = {"agent": name, "status": result.status if result else "?"}
    if result is None:
        return summary
    for found in result.steps:
        if isinstance(found, dict) and found.get("node") == "klassifizieren":
            summary["klassifikation"] = {
                key: found[key] for key in ("konfidenz", "hinweise", "gelernt") if key in found
            }
    if LEARNT in result.meta:
        summary["woerter_gezaehlt"] = result.meta[LEARNT]
    return summary


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
    last = AgentResult.coerce(results[-1]) if results else None
    status = last.status if last is not None else "?"
    update["_log"] = run_summary(name, last)
    log.info(
        "agent run: agent=%s initiator=%s status=%s user=%s",
        name,
        initiator,
        status,
        state.get("user_id"),
    )
    return update
