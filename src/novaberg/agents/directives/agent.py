"""DirectivesAgent: the `direktiven` subgraph (docs/behaviour/agents.md#directives).

validate → (resume → execute | db_validate) | classify → (read → execute | db_validate → ask).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents.base import BaseAgent
from novaberg.agents.directives.classify import DOMAIN_LANGUAGE, classify_node
from novaberg.agents.directives.crud import execute_node
from novaberg.agents.directives.resume import after_resume, resume_node
from novaberg.agents.directives.validate_db import db_validate_node
from novaberg.agents.workflow import rule_workflow

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


class DirectivesAgent(BaseAgent):
    aliases = ("directives", "direktive", "regel", "regeln", "rules")
    rejection_hint = "Sag zum Beispiel: 'Nenn mich ab jetzt Boss' oder 'Welche Regeln hast du?'."
    domain_language = DOMAIN_LANGUAGE

    @property
    def name(self) -> str:
        return "direktiven"

    def build_graph(self, deps: GraphDeps) -> Any:
        return rule_workflow(
            deps,
            classify=classify_node,
            db_validate=db_validate_node,
            execute=execute_node,
            resume=resume_node,
            after_resume=after_resume,
        )
