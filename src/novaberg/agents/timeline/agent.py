"""TimelineAgent: the `timeline` subgraph (docs/behaviour/agents.md#timeline).

validate → (resume | classify) → (create → execute | search → execute) → confirm.
"""

from __future__ import annotations

from novaberg.agents.base import BaseAgent
from novaberg.agents.timeline import NAME
from novaberg.agents.timeline.classify import DOMAIN_LANGUAGE, classify_node
from novaberg.agents.timeline.crud import execute_node
from novaberg.agents.timeline.resume import resume_node
from novaberg.agents.timeline.search import search_node
from novaberg.agents.workflow import Workflow, search_workflow


class TimelineAgent(BaseAgent):
    name = NAME
    router_intents = ("timeline_management",)
    aliases = ("termin", "termine", "kalender", "calendar", "appointments")
    rejection_hint = "Sag zum Beispiel: 'Trag mir Zahnarzt am Donnerstag um 14 Uhr ein'."
    domain_language = DOMAIN_LANGUAGE
    workflow = Workflow(
        search_workflow,
        classify=classify_node,
        search=search_node,
        execute=execute_node,
        resume=resume_node,
    )
