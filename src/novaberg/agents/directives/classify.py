"""Directives: recognise the task; the prompt lists active and recently deleted rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from novaberg.agents.base import AgentState
from novaberg.agents.rule_agent import classify_rule
from novaberg.store.tables import DIRECTIVES

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

DOMAIN_LANGUAGE: dict[str, Any] = {
    "aktionen": ["create", "read", "update", "delete", "reactivate"],
    "umgangssprache": {
        "Nenn mich ab jetzt Boss": "create",
        "Sag das nie mehr!": "create (Gemeintes aus dem Verlauf)",
        "Welche Regeln hast du?": "read",
        "Du darfst wieder über X reden": "delete",
        "Mach die Regel rückgängig / stell sie wieder her": "reactivate",
        "Ändere die Regel mit dem Siezen: ab jetzt duzen": "update",
    },
}


class DirectiveClassification(BaseModel):
    """What the directives agent should do."""

    action: Literal["create", "read", "update", "delete", "reactivate", "rejected"]
    anweisung: str = ""
    kontext: str = ""
    target_id: int | None = None
    normalisiert: str = ""
    grund: str = ""


async def classify_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    return await classify_rule(
        state,
        deps,
        table=DIRECTIVES,
        prompt_name="directives_classify",
        schema=DirectiveClassification,
        domain_language=DOMAIN_LANGUAGE,
        fields=lambda result: {
            "anweisung": result.anweisung.strip(),
            "kontext": result.kontext.strip(),
            "target_id": result.target_id,
        },
    )
