"""Directives resume node: the answer to the gate or choice question
(docs/behaviour/agents.md#gate).

Only an approval executes: a rule that changes every later turn is never written on an
unclear answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents.base import AgentState
from novaberg.agents.gate import read_gate_answer

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


async def resume_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    outcome, update = read_gate_answer(state)
    if outcome == "stop":
        return update
    next_node = "execute" if outcome == "execute" else "db_validate"
    update["parameter"] = {**update["parameter"], "weiter": next_node}
    return update


def after_resume(state: AgentState) -> str:
    return str((state.get("parameter") or {}).get("weiter") or "db_validate")
