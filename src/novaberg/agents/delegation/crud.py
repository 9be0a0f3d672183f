"""Resume and execute for the delegation agent (docs/behaviour/agents.md#delegation).

Resume reads the answer to the consent question by the closed rule (agents/gate.py,
agents/consent.py): yes executes, no dismisses, anything else asks again. Execute opens the
case (`delegation`, art `delegation`, once per turn) and hands it to Pixie as a `delegation`
shadow task naming the turn — routed there to a follow-up question while the person is under
pressure, to research otherwise — so Nova comes back to the matter on her own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from novaberg.agents.base import AgentState
from novaberg.agents.delegation.hand_on import hand_on
from novaberg.agents.delegation.repository import (
    KIND_DELEGATION,
    STATUS_HANDED_ON,
    open_case,
    settle_case,
)
from novaberg.agents.gate import read_gate_answer
from novaberg.agents.workflow import now_from, step
from novaberg.impulses.turn_tasks import TASK_DELEGATION
from novaberg.pair import Pair

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

NODE: Final = "ausfuehren"
CASE_SALIENCE: Final = 0.8


async def resume_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    """The person's answer to the consent question (the update says whether to execute)."""
    _outcome, update = read_gate_answer(state)
    return update


def after_resume(state: AgentState) -> str:
    return "confirm" if (state.get("status") or "laufend") != "laufend" else "execute"


async def execute_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    context = state.get("context") or {}
    pair = Pair(str(context["user_id"]), str(context["character_id"]))
    matter = str(parameter["anliegen"])
    now = now_from(deps)
    case = await open_case(
        deps.pool,
        pair,
        kind=KIND_DELEGATION,
        cause=str(parameter["anlass"]),
        matter=matter,
        topic=str(parameter.get("thema") or matter),
        turn_id=str(parameter["bezug_turn_id"]),
        now=now,
    )
    task_id: int | None = None
    if case.shadow_task_id is None:
        task_id = await hand_on(
            deps.pool,
            pair,
            case,
            task=TASK_DELEGATION,
            context=matter,
            cause=str(parameter["anlass"]),
            salience=CASE_SALIENCE,
            now=now,
        )
    text = f"Übernommen: „{matter}“. Ich behalte es im Blick und komme von mir aus darauf zurück."
    settled = await settle_case(
        deps.pool,
        pair,
        case.id,
        status=STATUS_HANDED_ON,
        finding=text,
        shadow_task_id=task_id,
        now=now,
    )
    return {
        "status": "abgeschlossen",
        "result": text,
        "parameter": {**parameter, "fall_id": settled.id},
        "steps": step(NODE, settled.status, fall_id=settled.id, neu=case.is_new),
    }
