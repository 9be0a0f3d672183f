"""DirectivesAgent: the `direktiven` subgraph (docs/behaviour/agents.md#directives).

validate → (resume → execute | db_validate) | classify → (read → execute | db_validate → ask).
"""

from __future__ import annotations

from novaberg.agents.base import BaseAgent
from novaberg.agents.directives import NAME
from novaberg.agents.directives.classify import DOMAIN_LANGUAGE, classify_node
from novaberg.agents.directives.crud import execute_node
from novaberg.agents.directives.validate_db import db_validate_node
from novaberg.agents.rule_agent import rule_agent_workflow


class DirectivesAgent(BaseAgent):
    name = NAME
    aliases = ("directives", "direktive", "regel", "regeln", "rules")
    rejection_hint = "Sag zum Beispiel: 'Nenn mich ab jetzt Boss' oder 'Welche Regeln hast du?'."
    domain_language = DOMAIN_LANGUAGE
    workflow = rule_agent_workflow(
        classify=classify_node, db_validate=db_validate_node, execute=execute_node
    )
