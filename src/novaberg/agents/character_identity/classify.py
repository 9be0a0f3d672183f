"""Character identity: recognise the task; create beyond three active → konsolidieren."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from novaberg.agents.base import AgentState
from novaberg.agents.character_identity import MAX_ACTIVE
from novaberg.agents.rule_agent import classify_rule
from novaberg.agents.workflow import classify, render_prompt
from novaberg.store.tables import IDENTITIES

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
    return await classify_rule(
        state,
        deps,
        table=IDENTITIES,
        prompt_name="identity_classify",
        schema=IdentityClassification,
        domain_language=DOMAIN_LANGUAGE,
        fields=lambda result: {
            "anweisung": result.anweisung.strip(),
            "target_id": result.target_id,
        },
        max_active=MAX_ACTIVE,
    )


async def merge_instructions(deps: GraphDeps, active: list[str], new: str) -> str | None:
    prompt = render_prompt("identity_merge", aktive="\n".join(f"- {a}" for a in active), neu=new)
    result, _error = await classify(deps, prompt, IdentityMerge, node="zusammenfassen")
    return None if result is None or not result.anweisung.strip() else result.anweisung.strip()
