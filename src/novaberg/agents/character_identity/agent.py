"""CharacterIdentityAgent: the `charakter_identitaet` subgraph (docs/behaviour/agents.md#identity).

validate → (resume → execute | db_validate) | classify → (read → execute | db_validate → ask).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents.base import BaseAgent
from novaberg.agents.character_identity.classify import DOMAIN_LANGUAGE, classify_node
from novaberg.agents.character_identity.crud import execute_node
from novaberg.agents.character_identity.resume import after_resume, resume_node
from novaberg.agents.character_identity.validate_db import db_validate_node
from novaberg.agents.workflow import rule_workflow

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


class CharacterIdentityAgent(BaseAgent):
    aliases = ("character_identity", "identitaet", "identität", "charakter", "identity")
    rejection_hint = "Sag zum Beispiel: 'Du bist ab jetzt ein lustiges Mädel vom Land'."
    domain_language = DOMAIN_LANGUAGE

    @property
    def name(self) -> str:
        return "charakter_identitaet"

    @property
    def capabilities(self) -> list[str]:
        return [*super().capabilities, "konsolidieren"]

    def build_graph(self, deps: GraphDeps) -> Any:
        return rule_workflow(
            deps,
            classify=classify_node,
            db_validate=db_validate_node,
            execute=execute_node,
            resume=resume_node,
            after_resume=after_resume,
        )
