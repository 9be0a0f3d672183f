"""What the two rule agents (directives, character identity) share.

Both classify with the user's active and recently deleted rules of their table in the
prompt (the identity agent turns a `create` past its limit of active instructions into
`konsolidieren`), both pass every change through the confirmation gate, and both run the
same subgraph (`rule_workflow`).

The gate answer is read by the closed consent rule (docs/behaviour/agents.md#gate): only
an approval executes, so a rule that changes every later turn is never written on an
unclear answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel

from novaberg.agents import rule_store
from novaberg.agents.base import AgentState
from novaberg.agents.gate import read_gate_answer
from novaberg.agents.workflow import NodeFn, Workflow, classify_task, rule_workflow
from novaberg.store.tables import RuleTable

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

C = TypeVar("C", bound=BaseModel)

CONSOLIDATE = "konsolidieren"
"""The action a `create` becomes when the table already holds `max_active` active rules."""


async def classify_rule(
    state: AgentState,
    deps: GraphDeps,
    *,
    table: RuleTable,
    prompt_name: str,
    schema: type[C],
    domain_language: Mapping[str, Any],
    fields: Callable[[C], Mapping[str, Any]],
    max_active: int | None = None,
) -> dict[str, Any]:
    user_id = (state.get("context") or {}).get("user_id", "")
    active = await rule_store.active(deps.pool, table, user_id)
    inactive = await rule_store.recent_inactive(deps.pool, table, user_id)

    def past_the_limit(result: C) -> str | None:
        full = max_active is not None and len(active) >= max_active
        return CONSOLIDATE if full and getattr(result, "action", "") == "create" else None

    return await classify_task(
        state,
        deps,
        prompt_name=prompt_name,
        schema=schema,
        domain_language=domain_language,
        fields=fields,
        blocks={
            "aktive": "\n".join(rule_store.render_rule(r) for r in active),
            "inaktive": "\n".join(rule_store.render_rule(r) for r in inactive),
        },
        action=past_the_limit,
    )


async def resume_after_gate(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    """The answer to the gate or choice question: execute, validate again, or stop."""
    outcome, update = read_gate_answer(state)
    if outcome == "stop":
        return update
    next_node = "execute" if outcome == "execute" else "db_validate"
    update["parameter"] = {**update["parameter"], "weiter": next_node}
    return update


def after_resume(state: AgentState) -> str:
    return str((state.get("parameter") or {}).get("weiter") or "db_validate")


def rule_agent_workflow(
    *, classify: NodeFn, db_validate: NodeFn, execute: NodeFn, resume: NodeFn = resume_after_gate
) -> Workflow:
    """The subgraph of a rule agent from its own classify, db-validate and execute nodes."""
    return Workflow(
        rule_workflow,
        classify=classify,
        db_validate=db_validate,
        execute=execute,
        resume=resume,
        after_resume=after_resume,
    )
