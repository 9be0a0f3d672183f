"""Classify for the research agent: no model call. The question is the matter of the
promise or request (agents/delegation/promise.py), already in the parameters; a run
without one is refused."""

from __future__ import annotations

from typing import Any, Final

from novaberg.agents.base import AgentState
from novaberg.agents.workflow import step

ACTION_RESEARCH: Final = "recherchieren"

DOMAIN_LANGUAGE: Final = {
    "aktionen": [ACTION_RESEARCH],
    "umgangssprache": {
        "ich schau mal nach": ACTION_RESEARCH,
        "ich werde das für dich recherchieren": ACTION_RESEARCH,
        "find das mal heraus": ACTION_RESEARCH,
    },
}


def classify_node(state: AgentState) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    question = " ".join(str(parameter.get("anliegen") or "").split())
    if not question:
        return {
            "status": "rejected",
            "parameter": {**parameter, "grund": "keine_frage"},
            "steps": step("klassifizieren", "rejected", grund="keine_frage"),
        }
    parameter.update(aktion=ACTION_RESEARCH, frage=question)
    return {"parameter": parameter, "steps": step("klassifizieren", ACTION_RESEARCH)}
