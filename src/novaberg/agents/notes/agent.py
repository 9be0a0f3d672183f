"""NotesAgent: the `notizen` subgraph (spec agents.md §3.1).

validate → (resume | classify) → (create → execute | search → execute) → confirm.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from langgraph.graph import END, START, StateGraph

from novaberg.agents.base import AgentState, BaseAgent
from novaberg.agents.notes.classify import DOMAIN_LANGUAGE, classify_node
from novaberg.agents.notes.crud import execute_node
from novaberg.agents.notes.resume import resume_node
from novaberg.agents.notes.search import search_node
from novaberg.agents.workflow import (
    confirm_node,
    create_or_search,
    resume_or_classify,
    unless_decided,
    validate_node,
)

if TYPE_CHECKING:
    from novaberg.graph.contract import GraphDeps


class NotesAgent(BaseAgent):
    router_intents = ("notizen_management",)
    aliases = ("notes", "notiz", "liste", "listen", "einkaufsliste")
    rejection_hint = "Sag zum Beispiel: 'Schreib Milch auf die Einkaufsliste'."

    @property
    def name(self) -> str:
        return "notizen"

    @property
    def capabilities(self) -> list[str]:
        return list(DOMAIN_LANGUAGE["aktionen"])

    @property
    def domain_language(self) -> dict[str, Any]:
        return DOMAIN_LANGUAGE

    def build_graph(self, deps: GraphDeps) -> Any:
        graph = StateGraph(AgentState)
        graph.add_node("validate", validate_node)
        graph.add_node("resume", partial(resume_node, deps=deps))
        graph.add_node("classify", partial(classify_node, deps=deps))
        graph.add_node("search", partial(search_node, deps=deps))
        graph.add_node("execute", partial(execute_node, deps=deps))
        graph.add_node("confirm", confirm_node)
        graph.add_edge(START, "validate")
        graph.add_conditional_edges("validate", unless_decided(resume_or_classify))
        graph.add_conditional_edges("resume", unless_decided("execute"))
        graph.add_conditional_edges("classify", unless_decided(create_or_search))
        graph.add_conditional_edges("search", unless_decided("execute"))
        graph.add_edge("execute", "confirm")
        graph.add_edge("confirm", END)
        return graph.compile()
