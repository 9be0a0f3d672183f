"""DelegationAgent: the `delegation` subgraph (docs/behaviour/agents.md#delegation).

validate → (resume → execute | stop) | classify → (consent question | execute) → confirm.
No model call: the matter comes with the promise or the request.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from langgraph.graph import END, START, StateGraph

from novaberg.agents.base import AgentState, BaseAgent
from novaberg.agents.delegation import NAME
from novaberg.agents.delegation.classify import DOMAIN_LANGUAGE, classify_node
from novaberg.agents.delegation.crud import after_resume, execute_node, resume_node
from novaberg.agents.workflow import (
    Workflow,
    confirm_node,
    resume_or_classify,
    unless_decided,
    validate_node,
)

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


def case_workflow(deps: GraphDeps, **_nodes: Any) -> Any:
    graph = StateGraph(AgentState)
    graph.add_node("validate", validate_node)
    graph.add_node("classify", classify_node)
    graph.add_node("resume", partial(resume_node, deps=deps))
    graph.add_node("execute", partial(execute_node, deps=deps))
    graph.add_node("confirm", confirm_node)
    graph.add_edge(START, "validate")
    graph.add_conditional_edges("validate", unless_decided(resume_or_classify))
    graph.add_conditional_edges("classify", unless_decided("execute"))
    graph.add_conditional_edges("resume", after_resume)
    graph.add_edge("execute", "confirm")
    graph.add_edge("confirm", END)
    return graph.compile()


class DelegationAgent(BaseAgent):
    name = NAME
    aliases = ("uebernehmen", "kuemmern")
    routable = False
    rejection_hint = (
        "Sag zum Beispiel: 'Kümmer dich bitte darum, dass ich die Frist nicht vergesse.'"
    )
    domain_language = DOMAIN_LANGUAGE
    workflow = Workflow(case_workflow)
