"""NotesAgent: the `notizen` subgraph (docs/behaviour/agents.md#notes).

validate → (resume | classify) → (create → execute | search → execute) → confirm.
"""

from __future__ import annotations

from novaberg.agents.base import BaseAgent
from novaberg.agents.notes import NAME
from novaberg.agents.notes.classify import DOMAIN_LANGUAGE, classify_node
from novaberg.agents.notes.crud import execute_node
from novaberg.agents.notes.resume import resume_node
from novaberg.agents.notes.search import search_node
from novaberg.agents.workflow import Workflow, search_workflow


class NotesAgent(BaseAgent):
    name = NAME
    router_intents = ("notizen_management",)
    aliases = ("notes", "notiz", "liste", "listen", "einkaufsliste")
    rejection_hint = "Sag zum Beispiel: 'Schreib Milch auf die Einkaufsliste'."
    domain_language = DOMAIN_LANGUAGE
    workflow = Workflow(
        search_workflow,
        classify=classify_node,
        search=search_node,
        execute=execute_node,
        resume=resume_node,
    )
