"""Identity resume node: gate/choice answers (closed rule) and the consolidation answer.

The answer to the consolidation question (more than three active instructions): a named
candidate or
"ersetz…" + a choice replaces that one, "zusammen…" merges all into one,
"trotzdem/zusätzlich/auch" adds the new one; a decline dismisses; anything else
asks again.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from novaberg.agents.base import AgentState
from novaberg.agents.choice import pick_candidate
from novaberg.agents.consent import Consent, interpret_consent
from novaberg.agents.gate import dismissed
from novaberg.agents.rule_agent import CONSOLIDATE, resume_after_gate
from novaberg.agents.workflow import ask, step

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

NODE = "resume"
MERGE_STEMS = ("zusammen", "merge", "kombinier", "vereinig", "fasse")
ADD_STEMS = ("trotzdem", "zusätzlich", "dazu", "auch", "hinzu", "add")
REPLACE_STEMS = ("ersetz", "statt", "austausch", "tausch", "replace")


def _stems(answer: str, stems: tuple[str, ...]) -> bool:
    words = re.findall(r"[^\W\d_]+", answer.lower())
    return any(w.startswith(s) for w in words for s in stems)


def _consolidation(parameter: dict[str, Any]) -> dict[str, Any]:
    answer = str(parameter.get("user_answer") or "")
    clean = {k: v for k, v in parameter.items() if k not in {"frage_typ", "resume"}}
    if interpret_consent(answer) is Consent.DECLINE:
        return dismissed(clean)
    if _stems(answer, MERGE_STEMS):
        clean.update(aktion="merge", weiter="execute")
        return {"parameter": clean, "steps": step(NODE, "zusammenfuehren")}
    chosen = pick_candidate(answer, parameter.get("kandidaten") or [], ("anweisung",))
    if chosen is not None and (_stems(answer, REPLACE_STEMS) or not _stems(answer, ADD_STEMS)):
        clean.update(aktion="update", target_id=chosen["id"], weiter="execute")
        return {"parameter": clean, "steps": step(NODE, "ersetzen", id=chosen["id"])}
    if _stems(answer, ADD_STEMS):
        clean.update(aktion="create", weiter="execute")
        return {"parameter": clean, "steps": step(NODE, "hinzufuegen")}
    return ask(NODE, str(parameter.get("original_rueckfrage") or ""), parameter, antwort="unklar")


async def resume_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    if parameter.get("frage_typ") == CONSOLIDATE:
        return _consolidation(parameter)
    return await resume_after_gate(state, deps)
