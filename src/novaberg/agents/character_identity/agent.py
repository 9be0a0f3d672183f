"""CharacterIdentityAgent: the `charakter_identitaet` subgraph (docs/behaviour/agents.md#identity).

validate → (resume → execute | db_validate) | classify → (read → execute | db_validate → ask).
"""

from __future__ import annotations

from novaberg.agents.base import BaseAgent
from novaberg.agents.character_identity import NAME
from novaberg.agents.character_identity.classify import DOMAIN_LANGUAGE, classify_node
from novaberg.agents.character_identity.crud import execute_node
from novaberg.agents.character_identity.resume import resume_node
from novaberg.agents.character_identity.validate_db import db_validate_node
from novaberg.agents.rule_agent import CONSOLIDATE, rule_agent_workflow


class CharacterIdentityAgent(BaseAgent):
    name = NAME
    aliases = ("character_identity", "identitaet", "identität", "charakter", "identity")
    rejection_hint = "Sag zum Beispiel: 'Du bist ab jetzt ein lustiges Mädel vom Land'."
    domain_language = DOMAIN_LANGUAGE
    workflow = rule_agent_workflow(
        classify=classify_node,
        db_validate=db_validate_node,
        execute=execute_node,
        resume=resume_node,
    )

    @property
    def capabilities(self) -> list[str]:
        return [*super().capabilities, CONSOLIDATE]
