"""ResearchAgent: the `recherche` subgraph (docs/behaviour/agents.md#research).

validate → classify → search → execute → confirm. No model call but the memory search's
embedding; the web only through the configured provider.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from langgraph.graph import END, START, StateGraph

from novaberg.agents.base import AgentState, BaseAgent
from novaberg.agents.research import NAME
from novaberg.agents.research.classify import DOMAIN_LANGUAGE, classify_node
from novaberg.agents.research.crud import execute_node
from novaberg.agents.research.search import search_node
from novaberg.agents.workflow import Workflow, confirm_node, unless_decided, validate_node

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


def lookup_workflow(deps: GraphDeps, **_nodes: Any) -> Any:
    graph = StateGraph(AgentState)
    graph.add_node("validate", validate_node)
    graph.add_node("classify", classify_node)
    graph.add_node("search", partial(search_node, deps=deps))
    graph.add_node("execute", partial(execute_node, deps=deps))
    graph.add_node("confirm", confirm_node)
    graph.add_edge(START, "validate")
    graph.add_conditional_edges("validate", unless_decided("classify"))
    graph.add_conditional_edges("classify", unless_decided("search"))
    graph.add_edge("search", "execute")
    graph.add_edge("execute", "confirm")
    graph.add_edge("confirm", END)
    return graph.compile()


class ResearchAgent(BaseAgent):
    name = NAME
    aliases = ("research", "recherchieren", "nachschauen")
    routable = False
    rejection_hint = "Sag zum Beispiel: 'Kannst du nachschauen, wann der Wertstoffhof offen hat?'."
    domain_language = DOMAIN_LANGUAGE
    workflow = Workflow(lookup_workflow)
