"""Character identity: recognise the task; create beyond three active → konsolidieren."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from novaberg.agents import rule_store
from novaberg.agents.base import AgentState
from novaberg.agents.character_identity.repository import MAX_ACTIVE, TABLE
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

DOMAIN_LANGUAGE: dict[str, Any] = {
    "aktionen": [
        "create",
        "read",
        "update",
        "delete",
        "delete_alle",
        "reactivate",
        "replace",
    ],
    "umgangssprache": {
        "Du bist ab jetzt ein lustiges Mädel vom Land": "create",
        "Wer bist du laut meinen Anweisungen?": "read",
        "Sei nicht mehr so frech": "update",
        "Sei wieder normal": "delete_alle",
        "Geh zurück zum Mädel vom Land": "reactivate",
        "Vergiss alles, du bist jetzt ein Butler": "replace",
    },
}


class IdentityClassification(BaseModel):
    """What the identity agent should do."""

    action: Literal[
        "create", "read", "update", "delete", "delete_alle", "reactivate", "replace", "rejected"
    ]
    anweisung: str = ""
    target_id: int | None = None
    normalisiert: str = ""
    grund: str = ""


class IdentityMerge(BaseModel):
    """One instruction that merges the active ones with a new one."""

    anweisung: str


async def classify_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    aufgabe = state.get("task") or ""
    user_id = (state.get("context") or {}).get("user_id", "")
    hints = keyword_hints(aufgabe)
    active = await rule_store.active(deps.pool, TABLE, user_id)
    inactive = await rule_store.recent_inactive(deps.pool, TABLE, user_id)
    prompt = render_prompt(
        "identity_classify",
        aufgabe=aufgabe,
        hinweise=hint_text(hints),
        verlauf=history_text(state),
        aktive="\n".join(rule_store.render_rule(r) for r in active),
        inaktive="\n".join(rule_store.render_rule(r) for r in inactive),
        fachsprache=domain_language_text(DOMAIN_LANGUAGE),
    )
    result, error = await classify(deps, prompt, IdentityClassification)
    if result is None:
        return fail("klassifizieren", "Ich konnte die Aufgabe nicht einordnen.", grund=error)
    action: str = result.action
    if action == "create" and len(active) >= MAX_ACTIVE:
        action = "konsolidieren"
    return classification_update(
        state,
        result,
        hints,
        {
            "anweisung": result.anweisung.strip(),
            "target_id": result.target_id,
        },
        action=action,
    )


async def merge_instructions(deps: GraphDeps, active: list[str], new: str) -> str | None:
    prompt = render_prompt("identity_merge", aktive="\n".join(f"- {a}" for a in active), neu=new)
    result, _error = await classify(deps, prompt, IdentityMerge, node="zusammenfassen")
    return None if result is None or not result.anweisung.strip() else result.anweisung.strip()
