"""Timeline: recognise the task (classify) in the agent's domain language."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from novaberg.agents.base import AgentState
from novaberg.agents.timeline.display import spoken_now
from novaberg.agents.workflow import (
    classification_update,
    classify,
    domain_language_text,
    fail,
    hint_text,
    history_text,
    keyword_hints,
    now_from,
    render_prompt,
)

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

DOMAIN_LANGUAGE: dict[str, Any] = {
    "aktionen": ["create", "read", "reschedule", "update", "delete"],
    "umgangssprache": {
        "Zahnarzt am Donnerstag um 14 Uhr": "create",
        "hau mir Montag nen Zahnarzt rein": "create",
        "Morgen muss ich Getränke kaufen": "create",
        "Annas Geburtstag ist am 15. Mai": "create (geburtstag)",
        "was steht morgen an?": "read",
        "verschieb/verleg den Zahnarzt auf Freitag": "reschedule",
        "sag den Zahnarzt ab / stornier / streich den Termin": "delete",
        "beim Zahnarzt bitte Unterlagen mitbringen notieren": "update",
    },
}


class TimelineClassification(BaseModel):
    """What the timeline agent should do."""

    action: Literal["create", "read", "reschedule", "update", "delete", "rejected"]
    target: str = Field(default="", description="kürzester eindeutiger Titel")
    zeitausdruck: str = Field(default="", description="wörtlich, nie ausgerechnet")
    event_type: Literal["termin", "geburtstag", "deadline", "jahrestag"] = "termin"
    details: str = ""
    normalisiert: str = ""
    grund: str = ""


async def classify_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    aufgabe = state.get("task") or ""
    hints = keyword_hints(aufgabe)
    now = now_from(deps)
    prompt = render_prompt(
        "timeline_classify",
        aufgabe=aufgabe,
        jetzt=spoken_now(now, deps.settings.tz),
        hinweise=hint_text(hints),
        verlauf=history_text(state),
        fachsprache=domain_language_text(DOMAIN_LANGUAGE),
    )
    result, error = await classify(deps, prompt, TimelineClassification)
    if result is None:
        return fail("klassifizieren", "Ich konnte die Aufgabe nicht einordnen.", grund=error)
    return classification_update(
        state,
        result,
        hints,
        {
            "target": result.target.strip(),
            "zeitausdruck": result.zeitausdruck.strip(),
            "event_type": result.event_type,
            "details": result.details.strip(),
        },
    )
