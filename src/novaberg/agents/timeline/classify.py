"""Timeline: recognise the task (classify) in the agent's domain language."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from novaberg.agents.base import AgentState
from novaberg.agents.offers import offer_blocks
from novaberg.agents.timeline.display import spoken_now
from novaberg.agents.workflow import classify_task, now_from

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
    return await classify_task(
        state,
        deps,
        prompt_name="timeline_classify",
        schema=TimelineClassification,
        domain_language=DOMAIN_LANGUAGE,
        fields=lambda result: {
            "target": result.target.strip(),
            "zeitausdruck": result.zeitausdruck.strip(),
            "event_type": result.event_type,
            "details": result.details.strip(),
        },
        blocks={
            "jetzt": spoken_now(now_from(deps), deps.settings.tz),
            **offer_blocks(state.get("context")),
        },
    )
