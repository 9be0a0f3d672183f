"""Classify for the delegation agent: no model call. The matter is in the parameters
(agents/delegation/promise.py); a promise of Nova's asks the person first, a request of the
person's is taken on at once (docs/behaviour/agents.md#delegation)."""

from __future__ import annotations

from typing import Any, Final

from novaberg.agents.base import AgentState
from novaberg.agents.delegation.repository import CAUSE_PROMISE
from novaberg.agents.gate import gate_question
from novaberg.agents.workflow import step

ACTION_TAKE_ON: Final = "uebernehmen"
NODE: Final = "klassifizieren"

DOMAIN_LANGUAGE: Final = {
    "aktionen": [ACTION_TAKE_ON],
    "umgangssprache": {
        "ich kümmere mich darum": ACTION_TAKE_ON,
        "ich behalte das im Blick": ACTION_TAKE_ON,
        "kümmer dich bitte darum": ACTION_TAKE_ON,
    },
}


def consent_question(matter: str) -> str:
    return f"Soll ich das für dich im Blick behalten und später darauf zurückkommen: „{matter}“?"


def classify_node(state: AgentState) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    matter = " ".join(str(parameter.get("anliegen") or "").split())
    if not matter:
        return {
            "status": "rejected",
            "parameter": {**parameter, "grund": "kein_anliegen"},
            "steps": step(NODE, "rejected", grund="kein_anliegen"),
        }
    parameter.update(aktion=ACTION_TAKE_ON, anliegen=matter)
    if parameter.get("anlass") == CAUSE_PROMISE:  # Nova offered it: the person decides
        return gate_question({**parameter, "frage": consent_question(matter)}, matter, NODE)
    return {"parameter": parameter, "steps": step(NODE, ACTION_TAKE_ON)}
