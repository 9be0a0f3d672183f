"""Notes: recognise the task (classify) and the model calls that draft or rewrite text.

The classifier speaks the agent's domain language ([FACHSPRACHE]); keyword hints are an
independent cross-check whose agreement is stored as `konfidenz` in the audit
(docs/behaviour/agents.md#classification).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from novaberg.agents.base import AgentState
from novaberg.agents.offers import offer_blocks
from novaberg.agents.workflow import classify, classify_task, render_prompt

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

NoteAction = Literal[
    "create",
    "read",
    "update",
    "delete",
    "add_content",
    "remove_content",
    "clear_content",
    "rename",
    "append",
    "rejected",
]

DOMAIN_LANGUAGE: dict[str, Any] = {
    "aktionen": [
        "create",
        "read",
        "update",
        "delete",
        "add_content",
        "remove_content",
        "clear_content",
        "rename",
        "append",
    ],
    "umgangssprache": {
        "schreib auf: ...": "create",
        "mach ne neue Liste": "create",
        "leg sie an (nach einer Aufzählung)": "create",
        "was steht auf ...": "read",
        "streich X von der Liste": "remove_content",
        "hau X raus": "remove_content",
        "schmeiß/setz X drauf": "add_content",
        "Ach, und Butter! (nach einer besprochenen Liste)": "add_content",
        "streich/lösch die Liste": "delete",
        "leere die Liste": "clear_content",
        "nenn die Liste um in ...": "rename",
    },
}


class NotesClassification(BaseModel):
    """What the notes agent should do."""

    action: NoteAction
    target: str = Field(default="", description="Name der Notiz, nie erfunden")
    target_typ: Literal["titel", "inhalt", "thema"] = "titel"
    elemente: list[str] = Field(
        default_factory=list, description="Einträge zum Hinzufügen/Streichen"
    )
    neuer_name: str = ""
    normalisiert: str = ""
    grund: str = ""


class NoteDraft(BaseModel):
    """A new note extracted from the instruction."""

    name: str
    typ: Literal["einkauf", "todo", "merkliste", "notiz", "entwurf", "idee"] = "notiz"
    text: str = ""
    themen: list[str] = Field(default_factory=list)


class NoteRewrite(BaseModel):
    """The complete new text of a note after an instruction."""

    text: str


def _clean_items(items: list[str]) -> list[str]:
    return [i.strip() for i in items if i and i.strip()]


async def classify_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    return await classify_task(
        state,
        deps,
        prompt_name="notes_classify",
        schema=NotesClassification,
        domain_language=DOMAIN_LANGUAGE,
        fields=lambda result: {
            "target": result.target.strip(),
            "target_typ": result.target_typ,
            "elemente": _clean_items(result.elemente),
            "neuer_name": result.neuer_name.strip(),
        },
        blocks=offer_blocks(state.get("context")),
    )


async def draft_note(deps: GraphDeps, normalisiert: str, aufgabe: str) -> NoteDraft | None:
    prompt = render_prompt("notes_draft", normalisiert=normalisiert or aufgabe, aufgabe=aufgabe)
    draft, _error = await classify(deps, prompt, NoteDraft, node="entwurf")
    return draft


async def rewrite_text(deps: GraphDeps, name: str, text: str, instruction: str) -> str | None:
    prompt = render_prompt(
        "notes_rewrite", notiz=name, text=text or "(leer)", anweisung=instruction
    )
    result, _error = await classify(deps, prompt, NoteRewrite, node="umschreiben")
    return None if result is None else result.text.strip()
