"""CharacterIdentityAgent: the `charakter_identitaet` subgraph (spec agents.md §3.4).

validate → (resume → execute | db_validate) | classify → (read → execute | db_validate → ask).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

from langgraph.graph import END, START, StateGraph

from novaberg.agents.base import AgentState, BaseAgent
from novaberg.agents.character_identity.classify import DOMAIN_LANGUAGE, classify_node
from novaberg.agents.character_identity.crud import execute_node
from novaberg.agents.character_identity.resume import after_resume, resume_node
from novaberg.agents.character_identity.validate_db import db_validate_node
from novaberg.agents.workflow import (
    confirm_node,
    resume_or_classify,
    unless_decided,
    validate_node,
)

if TYPE_CHECKING:
    from novaberg.graph.contract import GraphDeps


def read_or_validate(state: AgentState) -> str:
    return "execute" if (state.get("parameter") or {}).get("aktion") == "read" else "db_validate"


class CharacterIdentityAgent(BaseAgent):
    aliases = ("character_identity", "identitaet", "identität", "charakter", "identity")
    rejection_hint = "Sag zum Beispiel: 'Du bist ab jetzt ein lustiges Mädel vom Land'."

    @property
    def name(self) -> str:
        return "charakter_identitaet"

    @property
    def capabilities(self) -> list[str]:
        return [*DOMAIN_LANGUAGE["aktionen"], "konsolidieren"]

    @property
    def domain_language(self) -> dict[str, Any]:
        return DOMAIN_LANGUAGE

    def build_graph(self, deps: GraphDeps) -> Any:
        graph = StateGraph(AgentState)
        graph.add_node("validate", validate_node)
        graph.add_node("resume", partial(resume_node, deps=deps))
        graph.add_node("classify", partial(classify_node, deps=deps))
        graph.add_node("db_validate", partial(db_validate_node, deps=deps))
        graph.add_node("execute", partial(execute_node, deps=deps))
        graph.add_node("confirm", confirm_node)
        graph.add_edge(START, "validate")
        graph.add_conditional_edges("validate", unless_decided(resume_or_classify))
        graph.add_conditional_edges("resume", unless_decided(after_resume))
        graph.add_conditional_edges("classify", unless_decided(read_or_validate))
        graph.add_conditional_edges("db_validate", unless_decided("confirm"))
        graph.add_edge("execute", "confirm")
        graph.add_edge("confirm", END)
        return graph.compile()
