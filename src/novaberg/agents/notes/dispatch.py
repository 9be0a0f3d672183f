"""dispatch_notes: ConversationState ⇄ AgentState for the notes agent
(docs/behaviour/agents.md#dispatch)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents.base import BaseAgent
from novaberg.agents.dispatch_common import run_dispatch

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


async def dispatch_notes(
    state: dict[str, Any], deps: GraphDeps, agent: BaseAgent
) -> dict[str, Any]:
    update, _result, _final = await run_dispatch(state, deps, agent)
    return update
