"""NotesAgent: the `notizen` subgraph (docs/behaviour/agents.md#notes).

validate → (resume | classify) → (create → execute | search → execute) → confirm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents.base import BaseAgent
from novaberg.agents.notes.classify import DOMAIN_LANGUAGE, classify_node
from novaberg.agents.notes.crud import execute_node
from novaberg.agents.notes.resume import resume_node
from novaberg.agents.notes.search import search_node
from novaberg.agents.workflow import search_workflow

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


class NotesAgent(BaseAgent):
    router_intents = ("notizen_management",)
    aliases = ("notes", "notiz", "liste", "listen", "einkaufsliste")
    rejection_hint = "Sag zum Beispiel: 'Schreib Milch auf die Einkaufsliste'."
    domain_language = DOMAIN_LANGUAGE

    @property
    def name(self) -> str:
        return "notizen"

    def build_graph(self, deps: GraphDeps) -> Any:
        return search_workflow(
            deps,
            classify=classify_node,
            search=search_node,
            execute=execute_node,
            resume=resume_node,
        )
