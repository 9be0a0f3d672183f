"""Directives: recognise the task; the prompt lists active and recently deleted rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from novaberg.agents import rule_store
from novaberg.agents.base import AgentState
from novaberg.agents.workflow import (
    classification_update,
    classify,
    domain_language_text,
    fail,
    hint_text,
    history_text,
    keyword_hints,
    render_prompt,
)

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

TABLE: rule_store.Table = "direktiven"

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
    aufgabe = state.get("task") or ""
    user_id = (state.get("context") or {}).get("user_id", "")
    hints = keyword_hints(aufgabe)
    active = await rule_store.active(deps.pool, TABLE, user_id)
    inactive = await rule_store.recent_inactive(deps.pool, TABLE, user_id)
    prompt = render_prompt(
        "directives_classify",
        aufgabe=aufgabe,
        hinweise=hint_text(hints),
        verlauf=history_text(state),
        aktive="\n".join(rule_store.render_rule(r) for r in active),
        inaktive="\n".join(rule_store.render_rule(r) for r in inactive),
        fachsprache=domain_language_text(DOMAIN_LANGUAGE),
    )
    result, error = await classify(deps, prompt, DirectiveClassification)
    if result is None:
        return fail("klassifizieren", "Ich konnte die Aufgabe nicht einordnen.", grund=error)
    return classification_update(
        state,
        result,
        hints,
        {
            "anweisung": result.anweisung.strip(),
            "kontext": result.kontext.strip(),
            "target_id": result.target_id,
        },
    )
