"""The per-agent dispatch contract, written once (docs/behaviour/agents.md#dispatch).

`run_dispatch`: ConversationState → AgentState, run the subgraph, AgentState →
AgentResult → state update. An agent without a `dispatch.py` is run by
`default_dispatch`; one that adds to the update (timeline) calls `run_dispatch` itself. A question is stored
as `pending_agent:{user_id}`; a resume deletes that key *before* the agent runs
and the agent stores it again if it asks again. When a message holds several tasks, the
agent's task is its part (`agent_task`, set by the planner), and only the first question of
the run is stored: the key holds one question, and the person answers one at a time.
A task the agent carried out counts the person's phrasings of it (agents/verb_mappings.py).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from novaberg.agents.base import RUNNING, AgentResult, AgentState, BaseAgent, Correction
from novaberg.agents.offers import CONTEXT_KEY, Offer, offer_context, take_offer
from novaberg.agents.pending import pending_question, store_pending, take_pending
from novaberg.agents.stimulus import stimulus_origin, stimulus_text
from novaberg.agents.task_block import QUESTION_HELD
from novaberg.agents.verb_mappings import learn_from_task
from novaberg.memory.session_view import numbered_view
from novaberg.pair import Pair

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

log = logging.getLogger(__name__)

__all__ = ["LEARNT", "default_dispatch", "history_lines", "run_dispatch"]

HISTORY_PAIRS = 5
HISTORY_CHARS = 100
"""Classifier context: last 5 turn pairs, ≤100 chars each."""

LEARNT = "gelernt"
"""`AgentResult.meta` key: the phrasings a carried-out task counted (agents/verb_mappings.py)."""

OFFER_GONE = "Das Angebot war nicht mehr offen; nichts wurde ausgeführt."
"""The fault of an accepted offer another run already took (agents/offers.py)."""


def history_lines(state: dict[str, Any]) -> list[str]:
    """The last turn pairs as numbered lines for the `[KONTEXT]` block (shared view)."""
    turns = list(state.get("session_turns") or state.get("raw_turns") or [])
    view = numbered_view(turns, pairs=HISTORY_PAIRS, width=HISTORY_CHARS)
    return view.splitlines() if view else []


def _to_result(agent: BaseAgent, final: AgentState, resume: bool) -> AgentResult:
    status = final.get("status") or RUNNING
    meta = {"resume": resume}
    steps = list(final.get("steps") or [])
    if status == "rejected":
        grund = (final.get("parameter") or {}).get("grund") or "unklar"
        return AgentResult(
            agent_name=agent.name,
            result=None,
            status="abgelehnt",
            correction=Correction(
                finding="Nicht als Aufgabe für mich verstanden.",
                evidence=f"Klassifikation: rejected/{grund}",
                suggestion=agent.rejection_hint,
            ),
            steps=steps,
            meta=meta,
        )
    if status == RUNNING or status not in {"abgeschlossen", "fehler", "rueckfrage", "dismissed"}:
        return AgentResult(
            agent.name, None, "fehler", error="Agent endete ohne Ergebnis.", steps=steps
        )
    if status == "fehler" and not final.get("error"):
        final = {**final, "error": "Unbekannter Fehler."}
    return AgentResult(
        agent_name=agent.name,
        result=final.get("result"),
        status=status,
        error=final.get("error"),
        question=final.get("question"),
        steps=steps,
        meta=meta,
    )


def _summary(result: AgentResult) -> str:
    """`management_result` of a result: what the task block says when it has no line of
    its own for the result."""
    if result.status == "rueckfrage":
        return result.question or ""
    if result.status == "fehler":
        return f"Fehler: {result.error}"
    if result.status == "abgelehnt" and result.correction is not None:
        return ""
    if result.status == "dismissed":
        return "Nutzer hat abgelehnt, nichts geändert."
    return str(result.result or "")


def _question_open(state: dict[str, Any]) -> bool:
    """Whether an earlier agent of this run stored a question."""
    earlier = (AgentResult.coerce(r) for r in state.get("agent_results") or [])
    return any(r.status == "rueckfrage" and not r.meta.get(QUESTION_HELD) for r in earlier)


async def run_dispatch(
    state: dict[str, Any],
    deps: GraphDeps,
    agent: BaseAgent,
    *,
    extra_parameter: dict[str, Any] | None = None,
) -> tuple[dict[str, Any], AgentResult, AgentState]:
    """Run `agent` for this turn; return `(state update, result, final AgentState)`."""
    user_id = str(state.get("user_id") or "")
    action = str(state.get("management_action") or "")
    target = str(state.get("management_target") or "")
    # a task of several in one message gets its own part; a resume gets the answer
    task = str(state.get("agent_task") or "") if action != "resume" else ""
    task = task or stimulus_text(state)
    parameter: dict[str, Any] = {
        "action": action,
        "target": target,
        "target_typ": state.get("management_target_type") or "titel",
        **(extra_parameter or {}),
    }
    resume = False
    if action == "resume":
        pending = await pending_question(deps.redis, user_id)
        if pending and pending.get("agent_name") == agent.name:
            # taken (read and deleted at once) before resuming: if another run of this user
            # took it in between, it is answered there, not a second time here
            pending = await take_pending(deps.redis, user_id)
        if pending and pending.get("agent_name") == agent.name:
            resume = True
            parameter = {
                **(pending.get("parameter") or {}),
                "resume": True,
                "user_answer": task,
                "original_rueckfrage": pending.get("rueckfrage") or "",
            }
        else:
            log.info("resume for %s without its pending question; classifying anew", agent.name)
            parameter["action"] = "agent"
    context: dict[str, Any] = {
        "user_id": user_id,
        "character_id": state.get("character_id") or "",
        "memory_context": state.get("memory_context") or "",
        "verlauf": history_lines(state),
        "initiator": stimulus_origin(state),
    }
    offer = state.get("accepted_offer")
    offer_taken: bool | None = None  # None: this run executes no offer
    if isinstance(offer, Offer) and offer.agent == agent.name and not resume:
        # taken (read and deleted at once) before the agent runs: a yes executes its offer once
        offer_taken = (
            await take_offer(deps.redis, Pair(user_id, context["character_id"])) is not None
        )
        context[CONTEXT_KEY] = offer_context(offer, task)
    agent_state = AgentState(
        task=task,
        task_type="workflow",
        agent_name=agent.name,
        context=context,
        parameter=parameter,
        steps=[],
        result=None,
        status=RUNNING,
        question=None,
        error=None,
    )
    if offer_taken is False:
        log.warning("offer for %s already taken or expired; not executed again", agent.name)
        final = agent_state.copy()
        final["status"], final["error"] = "fehler", OFFER_GONE
    else:
        final = await agent.invoke(agent_state, deps)
    result = _to_result(agent, final, resume)
    if result.status == "abgeschlossen":  # a carried-out task teaches the person's phrasings
        learnt = await learn_from_task(deps, user_id, agent.name, final.get("parameter") or {})
        if learnt is not None:
            result.meta[LEARNT] = learnt.as_log()
    if result.status == "rueckfrage" and _question_open(state):
        # one open question at a time: the one asked first in this run is the one stored
        result.meta[QUESTION_HELD] = True
        log.info("%s asked back after another agent of this run; question not stored", agent.name)
    elif result.status == "rueckfrage":
        await store_pending(
            deps.redis,
            user_id,
            agent_name=agent.name,
            action=action,
            target=target,
            rueckfrage=result.question or "",
            parameter=dict(final.get("parameter") or {}),
        )
    update = {
        "agent_results": [*(state.get("agent_results") or []), result],
        "agent_name": "",
        "management_result": _summary(result),
    }
    return update, result, final


async def default_dispatch(
    state: dict[str, Any], deps: GraphDeps, agent: BaseAgent
) -> dict[str, Any]:
    """The dispatch of an agent without a `dispatch.py`: the state update of `run_dispatch`."""
    update, _result, _final = await run_dispatch(state, deps, agent)
    return update
