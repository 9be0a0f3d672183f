"""Timeline resume node: the answer to "which entry?" (the agent's only question)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents.base import AgentState
from novaberg.agents.choice import pick_candidate
from novaberg.agents.consent import Consent, interpret_consent
from novaberg.agents.workflow import ask, fail, step

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

NODE = "resume"


async def resume_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    answer = str(parameter.get("user_answer") or "")
    if parameter.get("frage_typ") != "disambiguierung":
        return fail(NODE, "Ich weiß nicht mehr, worauf sich die Antwort bezieht.")
    chosen = pick_candidate(answer, parameter.get("kandidaten") or [], ("title",))
    if chosen is not None:
        parameter = {k: v for k, v in parameter.items() if k not in {"frage_typ", "resume"}}
        parameter["entry_id"] = chosen["id"]
        return {"parameter": parameter, "steps": step(NODE, "gewaehlt", id=chosen["id"])}
    if interpret_consent(answer) is Consent.DECLINE:
        return {
            "status": "dismissed",
            "result": "Kein Termin geändert.",
            "steps": step(NODE, "abgelehnt"),
        }
    return ask(NODE, str(parameter.get("original_rueckfrage") or ""), parameter)
