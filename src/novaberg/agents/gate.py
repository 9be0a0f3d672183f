"""The mandatory confirmation gate of the rule agents (directives, identity).

Why a gate: rules change how Nova behaves in every later turn, and a misread request
written without asking would pile up duplicate rules or degrade an identity. Every write
therefore asks first, and the answer is read with the closed consent rule: only an
approval executes, a decline ends with `dismissed`, anything else repeats the same
question (docs/behaviour/agents.md#gate).
A choice question ("which rule?") is read with `pick_candidate` and then leads
to the gate question.
"""

from __future__ import annotations

from typing import Any

from novaberg.agents.base import AgentState
from novaberg.agents.choice import pick_candidate
from novaberg.agents.consent import Consent, interpret_consent
from novaberg.agents.workflow import ask, step

GATE = "gate"
CHOICE = "auswahl"
NODE = "resume"

DISMISSED_TEXT = "Der Nutzer hat abgelehnt; nichts wurde geändert."


def gate_question(parameter: dict[str, Any], description: str, node: str) -> dict[str, Any]:
    """Ask "Soll ich das ausfuehren? <description>" (or a custom question if given)."""
    question = parameter.pop("frage", None) or f"Soll ich das ausführen? {description}"
    return ask(node, question, {**parameter, "frage_typ": GATE, "beschreibung": description})


def choice_question(
    parameter: dict[str, Any], rows: list[dict[str, Any]], lead: str, node: str
) -> dict[str, Any]:
    kandidaten = [{"id": r["id"], "anweisung": r["anweisung"]} for r in rows]
    lines = "\n".join(f"{i}. {c['anweisung']}" for i, c in enumerate(kandidaten, 1))
    return ask(
        node, f"{lead}\n{lines}", {**parameter, "frage_typ": CHOICE, "kandidaten": kandidaten}
    )


def dismissed(parameter: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": "dismissed",
        "result": DISMISSED_TEXT,
        "parameter": parameter,
        "steps": step(NODE, "abgelehnt"),
    }


def read_gate_answer(state: AgentState) -> tuple[str, dict[str, Any]]:
    """Interpret the answer to a gate or choice question.

    Returns `(outcome, update)`: outcome "execute" (approved; update carries the
    cleaned parameters), "chosen" (a candidate picked; `target_id` set), or
    "stop" (update is the final dismissed/re-ask result).
    """
    parameter = dict(state.get("parameter") or {})
    answer = str(parameter.get("user_answer") or "")
    original = str(parameter.get("original_rueckfrage") or "")
    kind = parameter.get("frage_typ")
    consent = interpret_consent(answer)
    clean = {k: v for k, v in parameter.items() if k not in {"frage_typ", "resume", "frage"}}
    if kind == CHOICE:
        chosen = pick_candidate(answer, parameter.get("kandidaten") or [], ("anweisung",))
        if chosen is not None:
            clean["target_id"] = chosen["id"]
            return "chosen", {"parameter": clean, "steps": step(NODE, "gewaehlt")}
        if consent is Consent.DECLINE:
            return "stop", dismissed(clean)
        return "stop", ask(NODE, original, parameter, antwort="unklar")
    if consent is Consent.APPROVE:
        return "execute", {"parameter": clean, "steps": step(NODE, "zugestimmt")}
    if consent is Consent.DECLINE:
        return "stop", dismissed(clean)
    return "stop", ask(NODE, original, parameter, antwort="unklar")
