"""LibraryRootsAgent: the `dateien_wurzeln` subgraph (docs/behaviour/agents.md#library-roots).

validate → (resume → execute | classify → (check → question | revoke)) → confirm. No model
call: the request is read from its words, the answer by the closed consent rule.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from langgraph.graph import END, START, StateGraph

from novaberg.agents.base import AgentState, BaseAgent
from novaberg.agents.library_roots import NAME
from novaberg.agents.library_roots.folders import (
    after_classify,
    check_node,
    classify_node,
    execute_node,
    resume_node,
    revoke_node,
)
from novaberg.agents.library_roots.request import APPROVE, REVOKE
from novaberg.agents.workflow import (
    Workflow,
    confirm_node,
    resume_or_classify,
    unless_decided,
    validate_node,
)

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

DOMAIN_LANGUAGE: dict[str, Any] = {
    "aktionen": [APPROVE, REVOKE],
    "umgangssprache": {
        "Du darfst meinen Ordner ~/Notizen lesen": APPROVE,
        "You may read my folder ~/Notes": APPROVE,
        "Lies ~/Notizen nicht mehr": REVOKE,
        "Du darfst ~/Notizen nicht mehr lesen": REVOKE,
    },
}


def folders_workflow(deps: GraphDeps, **_nodes: Any) -> Any:
    graph = StateGraph(AgentState)
    graph.add_node("validate", validate_node)
    graph.add_node("resume", resume_node)
    graph.add_node("classify", classify_node)
    graph.add_node("check", partial(check_node, deps=deps))
    graph.add_node("execute", partial(execute_node, deps=deps))
    graph.add_node("revoke", partial(revoke_node, deps=deps))
    graph.add_node("confirm", confirm_node)
    graph.add_edge(START, "validate")
    graph.add_conditional_edges("validate", unless_decided(resume_or_classify))
    graph.add_conditional_edges("resume", unless_decided("execute"))
    graph.add_conditional_edges("classify", unless_decided(after_classify))
    graph.add_edge("check", "confirm")
    graph.add_edge("execute", "confirm")
    graph.add_edge("revoke", "confirm")
    graph.add_edge("confirm", END)
    return graph.compile()


class LibraryRootsAgent(BaseAgent):
    name = NAME
    aliases = ("library_roots", "bibliothek")
    routable = False
    rejection_hint = "Sag zum Beispiel: 'Du darfst meinen Ordner ~/Notizen lesen'."
    domain_language = DOMAIN_LANGUAGE
    workflow = Workflow(folders_workflow)
