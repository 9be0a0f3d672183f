"""Notes resume node: read the user's answer to the agent's open question.

Three questions exist (docs/behaviour/agents.md#notes): which of several notes
(disambiguation), create the missing note (closed consent rule), and update or
duplicate an existing note. An answer that cannot be read re-asks the same
question; a decline ends with `dismissed` and nothing written.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from novaberg.agents.base import AgentState
from novaberg.agents.choice import pick_candidate
from novaberg.agents.consent import Consent, interpret_consent
from novaberg.agents.notes import repository as repo
from novaberg.agents.notes.crud import split_items
from novaberg.agents.workflow import ask, fail, step

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

NODE = "resume"

UPDATE_STEMS = ("aktualisier", "update", "überschreib", "ersetz", "änder", "ergänz", "hinzu")
NEW_STEMS = ("neu", "zusätzlich", "extra", "trotzdem", "separat", "weitere")


def _has_stem(answer: str, stems: tuple[str, ...]) -> bool:
    words = re.findall(r"[^\W\d_]+", answer.lower())
    return any(word.startswith(stem) for word in words for stem in stems)


def _dismissed(message: str, parameter: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": "dismissed",
        "result": message,
        "parameter": parameter,
        "steps": step(NODE, "abgelehnt"),
    }


def _clean(parameter: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in parameter.items() if k not in {"frage_typ", "resume"}}


async def resume_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    answer = str(parameter.get("user_answer") or "")
    original = str(parameter.get("original_rueckfrage") or "")
    kind = parameter.get("frage_typ")
    consent = interpret_consent(answer)

    if kind == "disambiguierung":
        chosen = pick_candidate(answer, parameter.get("kandidaten") or [], ("name",))
        if chosen is not None:
            parameter = {**_clean(parameter), "note_id": chosen["id"]}
            return {"parameter": parameter, "steps": step(NODE, "gewaehlt", id=chosen["id"])}
        if consent is Consent.DECLINE:
            return _dismissed("Keine Notiz geändert.", parameter)
        return ask(NODE, original, parameter)

    if kind == "nicht_gefunden":
        target = str(parameter.get("target") or "")
        if consent is Consent.APPROVE:
            items = list(parameter.get("elemente") or [])
            parameter = {**_clean(parameter), "aktion": "create"}
            if items:  # else the note is drafted from the original utterance: it holds the item
                parameter["entwurf"] = {
                    "name": target,
                    "typ": repo.normalise_type("", target),
                    "text": ", ".join(items),
                    "themen": [],
                }
            return {
                "task": parameter.get("original_aufgabe") or state.get("task", ""),
                "parameter": parameter,
                "steps": step(NODE, "anlegen"),
            }
        if consent is Consent.DECLINE:
            return _dismissed(f"'{target}' wird nicht angelegt.", parameter)
        return ask(NODE, original, parameter)

    if kind == "duplikat":
        if consent is Consent.DECLINE:
            return _dismissed("Nichts angelegt.", parameter)
        entwurf = parameter.get("entwurf") or {}
        if _has_stem(answer, UPDATE_STEMS):
            items, _sep = split_items(str(entwurf.get("text") or ""))
            parameter = {**_clean(parameter), "aktion": "add_content", "elemente": items}
            return {"parameter": parameter, "steps": step(NODE, "aktualisieren")}
        if _has_stem(answer, NEW_STEMS):
            parameter = {**_clean(parameter), "aktion": "create", "ohne_duplikatpruefung": True}
            return {"parameter": parameter, "steps": step(NODE, "neu")}
        return ask(NODE, original, parameter)

    return fail(NODE, "Ich weiß nicht mehr, worauf sich die Antwort bezieht.")
