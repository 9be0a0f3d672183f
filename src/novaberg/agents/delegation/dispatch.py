"""The delegation agent's dispatch: the promise's parameters into the agent's state
(agents/delegation/promise.py), then the common dispatch."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents.base import BaseAgent
from novaberg.agents.delegation.promise import promise_parameters
from novaberg.agents.dispatch_common import run_dispatch

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


async def dispatch_delegation(
    state: dict[str, Any], deps: GraphDeps, agent: BaseAgent
) -> dict[str, Any]:
    update, _result, _final = await run_dispatch(
        state, deps, agent, extra_parameter=promise_parameters(state)
    )
    return update
