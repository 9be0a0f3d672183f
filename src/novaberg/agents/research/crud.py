"""Execute for the research agent: the case and what becomes of it
(docs/behaviour/agents.md#research).

The case (`delegation`, art `recherche`) is opened once per turn. With web results it is
`erledigt` at once, their titles and addresses as its sources. Without them (no provider,
a provider error, nothing found) the slow part goes to the Pixie research job: a
`recherche` shadow task naming the turn (`bezug_id`), whose note later arrives as Nova's own
impulse; the case is `an_pixie` with that task's id. What memory gave is reported either
way. The agent's result is the report the answer is written from — what was found, and
honestly what was not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from novaberg.agents.base import AgentState
from novaberg.agents.delegation.hand_on import hand_on
from novaberg.agents.delegation.repository import (
    KIND_RESEARCH,
    STATUS_DONE,
    STATUS_HANDED_ON,
    open_case,
    settle_case,
)
from novaberg.agents.workflow import now_from, step
from novaberg.impulses.turn_tasks import TASK_RESEARCH
from novaberg.pair import Pair

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

HANDED_ON_SALIENCE: Final = 0.8
"""Salience of the task a promise hands to Pixie (as the promise's task always had)."""


def report(question: str, memories: list[str], web: list[dict[str, str]], handed_on: bool) -> str:
    """The agent's result: what was found at once, and what happens next."""
    lines = [f"Recherche zu „{question}“."]
    if web:
        lines.append("Gefunden im Netz:")
        lines += [f"- {w['titel']} ({w['url']}): {w['auszug']}" for w in web]
    if memories:
        lines.append("Dazu in der Erinnerung:")
        lines += [f"- {m}" for m in memories]
    if handed_on:
        lines.append(
            "Auf die Schnelle nichts Gesichertes aus dem Netz; die Recherche läuft im "
            "Hintergrund weiter, das Ergebnis kommt später."
        )
    return "\n".join(lines)


async def execute_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    context = state.get("context") or {}
    pair = Pair(str(context["user_id"]), str(context["character_id"]))
    question = str(parameter["frage"])
    memories = [str(m) for m in parameter.get("erinnerungen") or []]
    web = list(parameter.get("web") or [])
    now = now_from(deps)
    case = await open_case(
        deps.pool,
        pair,
        kind=KIND_RESEARCH,
        cause=str(parameter["anlass"]),
        matter=question,
        topic=str(parameter.get("thema") or question),
        turn_id=str(parameter["bezug_turn_id"]),
        now=now,
    )
    handed_on = not web
    task_id: int | None = None
    if handed_on and case.shadow_task_id is None:
        task_id = await hand_on(
            deps.pool,
            pair,
            case,
            task=TASK_RESEARCH,
            context=question,
            cause=str(parameter["anlass"]),
            salience=HANDED_ON_SALIENCE,
            now=now,
        )
    text = report(question, memories, web, handed_on)
    settled = await settle_case(
        deps.pool,
        pair,
        case.id,
        status=STATUS_HANDED_ON if handed_on else STATUS_DONE,
        finding=text,
        sources=[w["url"] for w in web],
        shadow_task_id=task_id,
        now=now,
    )
    return {
        "result": text,
        "parameter": {**parameter, "fall_id": settled.id},
        "steps": step(
            "ausfuehren",
            settled.status,
            fall_id=settled.id,
            neu=case.is_new,
            shadow_auftrag=settled.shadow_task_id,
        ),
    }
