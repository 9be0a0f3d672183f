"""dispatch_directives: ConversationState ⇄ AgentState for the directives agent
(docs/behaviour/agents.md#dispatch)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents.base import BaseAgent
from novaberg.agents.dispatch_common import run_dispatch

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


async def dispatch_directives(
    state: dict[str, Any], deps: GraphDeps, agent: BaseAgent
) -> dict[str, Any]:
    update, _result, _final = await run_dispatch(state, deps, agent)
    return update
