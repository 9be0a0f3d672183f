"""Router node: what does this turn need, and is it a task for an agent?
(docs/behaviour/nodes.md#router)

Four ways through:

- **Resume without a model call.** A task agent left an open question
  (`pending_agent:{u}`, agents/pending.py; read with the turn context) and the stimulus is
  a real user utterance: the utterance is the answer, so `management_action="resume"` and
  the planner hands it to the waiting agent. An impulse (Nova's own thought) is nobody's
  answer and leaves the question untouched.
- **A commitment without a model call.** A self-event that keeps a promise of Nova's
  (`commitment` in the payload: `recherche`, `delegation`; graph/follow_up.py) is routed to
  the agent of that name, when it is registered.
- **A bare yes without a model call** (docs/behaviour/agents.md#offers,
  `graph/offer_chain.py`): to an open offer it routes to exactly the offered agent
  (`accepted_offer`); with no offer open it routes to nothing — a "ja" alone never makes
  an agent act. A no to an open offer is noted (`offer_reply`) and routed as usual.
- **A folder request without a model call** (docs/behaviour/agents.md#library-roots): a
  real user utterance that names a path next to a word of permission or reading ("Du
  darfst meinen Ordner ~/Notizen lesen", "Lies ~/Notizen nicht mehr") goes to the
  library-roots agent as the turn's one task. Recognised by its words
  (agents/library_roots/request.py), so the agent needs no line in `[AGENTEN]` and a plain
  message's prompt does not grow.
- **Otherwise one structured call** (temperature 0.05) with the perception values, the
  situation's acute objects (`[LAGE]`, from `objekt_urteil`: the situation node runs
  before the router, so both the agent and the conversation branch see the same
  understanding), the numbered history and the agents' notices (`[AGENTEN]`). A message that asks for several
  things names each task (`management_tasks`: the agent and the words asking for it), which
  the planner runs one after the other. An unreadable answer gives the documented
  defaults (all false, momentum mid, no management, target type "titel") and sets
  `router_ausfall`, logged at WARNING — the defaults alone would look like a decision.
  A model that cannot be used (`ModelUnavailable`) is no decision at all: the turn fails.

A management action forces momentum from low to mid (a task turn is never a lull the
proactive delivery may fill). The appointment reading runs right after the router and
then takes the router's decision (`route_after_router`): management to the planner, the
rest straight to the conversation vector.
"""

from __future__ import annotations

import logging
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from novaberg.agents.deps import GraphDeps
from novaberg.agents.library_roots import NAME as LIBRARY_ROOTS
from novaberg.agents.library_roots.request import folder_request
from novaberg.agents.offers import Offer
from novaberg.agents.registry import AgentRegistry
from novaberg.agents.stimulus import stimulus_is_own_thought, stimulus_text
from novaberg.config import Role
from novaberg.graph.contract import ANSWER_JOIN
from novaberg.graph.offer_chain import REPLY_ACCEPTED, REPLY_WITHOUT_OFFER, read_reply
from novaberg.graph.state import ConversationState, turn_context
from novaberg.graph.turn_head import head_of, with_head
from novaberg.llm.errors import ModelError, ModelUnavailable
from novaberg.prompts import render
from novaberg.wire import COMMITMENTS, FIELD_COMMITMENT

log = logging.getLogger(__name__)

ROUTER_TEMPERATURE: Final = 0.05
"""Near-deterministic: the same turn should be routed the same way."""

ACTION_AGENT: Final = "agent"
ACTION_RESUME: Final = "resume"
"""`management_action` values besides ""."""

MOMENTUM_LOW: Final = "low"
MOMENTUM_MID: Final = "mid"

DEFAULT_TARGET_TYPE: Final = "titel"
"""`management_target_typ` when the router says nothing."""

AGENT_GRAPH_SUITABILITY: Final = "user"
"""The CharacterGraph dispatches the user agents (`graph_suitability` "user")."""

NEXT_PLANNER: Final = "planner"
NEXT_CONVERSATION: Final = ANSWER_JOIN
"""No management: the router's branch ends at the pre-answer join."""


# The decision's limits are advertised to constrained decoding, not enforced (as the
# situation reading's, nodes/situation.py): a small local model otherwise wrote tasks and
# words until its token budget cut the JSON, twice, and the turn went on with defaults
# (bench/local_model.py: 45-50 s of router in 3 of 5 turns). Bounded, its longest answer is
# valid JSON and its call gets a cap of its own (llm/token_caps.py). Another backend's
# longer answer is still read.
DATE_CHARS: Final = 32
"""An ISO date or date-time with offset (25 characters) and some room."""
WORDS_CHARS: Final = 60
"""A target, a keyword or a title: a few words."""
TASK_TEXT_CHARS: Final = 120
"""The words of one task, quoted from the message."""
MAX_TASKS: Final = 3
"""Tasks named in one message (docs/behaviour/agents.md#several-tasks-in-one-message)."""


def _advertised(limit: int, *, alias: str | None = None) -> Any:
    return Field(default="", alias=alias, json_schema_extra={"maxLength": limit})


class TimelineQuery(BaseModel):
    """The turn's timeline question."""

    model_config = ConfigDict(populate_by_name=True)

    type: Literal["range", "search"]
    from_: str = _advertised(DATE_CHARS, alias="from")
    to: str = _advertised(DATE_CHARS)
    keyword: str = _advertised(WORDS_CHARS)
    direction: Literal["forward", "backward", "both"] = "forward"
    limit: int = 10
    date: str = _advertised(DATE_CHARS)
    title: str = _advertised(WORDS_CHARS)


class RouterTask(BaseModel):
    """One task of a message that asks for several: the agent and the words asking for it."""

    target: str = _advertised(WORDS_CHARS)
    text: str = _advertised(TASK_TEXT_CHARS)


class RouterDecision(BaseModel):
    """The router's answer. `management_tasks` names each task of a message that asks for
    several (docs/behaviour/agents.md#several-tasks-in-one-message); one task needs only
    `management_target`."""

    needs_web: bool = False
    needs_timeline: bool = False
    timeline_query: TimelineQuery | None = None
    momentum: Literal["low", "mid", "high"] = MOMENTUM_MID
    management_action: Literal["", "agent"] = ""
    management_target: str = _advertised(WORDS_CHARS)
    management_target_typ: Literal["titel", "inhalt", "thema"] = DEFAULT_TARGET_TYPE
    management_tasks: list[RouterTask] = Field(
        default_factory=list, json_schema_extra={"maxItems": MAX_TASKS}
    )


def decision_update(decision: RouterDecision) -> dict[str, Any]:
    """State channels from a decision, with the management → momentum ≥ mid rule."""
    momentum = decision.momentum
    if decision.management_action and momentum == MOMENTUM_LOW:
        momentum = MOMENTUM_MID
    query: dict[str, Any] = {}
    if decision.needs_timeline and decision.timeline_query is not None:
        query = decision.timeline_query.model_dump(by_alias=True)
    return {
        "needs_web": decision.needs_web,
        "needs_timeline": decision.needs_timeline,
        "timeline_query": query,
        "momentum": momentum,
        "management_action": decision.management_action,
        "management_target": decision.management_target.strip()
        if decision.management_action
        else "",
        "management_target_type": decision.management_target_typ,
        "management_tasks": [task.model_dump() for task in decision.management_tasks]
        if decision.management_action
        else [],
    }


def resume_update() -> dict[str, Any]:
    """The fixed answer on a pending question (no model call)."""
    return {
        "needs_web": False,
        "needs_timeline": False,
        "timeline_query": {},
        "momentum": MOMENTUM_MID,
        "management_action": ACTION_RESUME,
        "management_target": "",
        "management_target_type": DEFAULT_TARGET_TYPE,
        "management_tasks": [],
        "router_failure": None,
    }


def commitment_of(state: ConversationState) -> str | None:
    """The promise this run keeps: the `commitment` of a self-event, else None."""
    payload = state.get("event_payload") or {}
    commitment = payload.get(FIELD_COMMITMENT)
    if commitment in COMMITMENTS and stimulus_is_own_thought(state):
        return str(commitment)
    return None


def commitment_update(agent: str) -> dict[str, Any]:
    """The fixed answer on a commitment (no model call): the promise's agent acts."""
    return {
        "needs_web": False,
        "needs_timeline": False,
        "timeline_query": {},
        "momentum": MOMENTUM_MID,
        "management_action": ACTION_AGENT,
        "management_target": agent,
        "management_target_type": DEFAULT_TARGET_TYPE,
        "router_failure": None,
    }


def _perception_text(state: ConversationState) -> str:
    emotion = getattr(state.get("external"), "emotion", None)
    if emotion is None:
        return "keine"
    return (
        f"Absicht {emotion.intent}, Ton {emotion.tone}, Emotion {emotion.emotion} "
        f"(Erregung {emotion.arousal:.2f}), Modus {emotion.mode}, Thema {emotion.prompt_topic or '-'}"
    )


def situation_lines(state: ConversationState) -> str:
    """The `[LAGE]` block: per acute object of the situation (`objekt_urteil`, written by
    the situation node before the router) its state, how much is known and what is still
    open; the object this utterance is about is marked. "" when nothing is acute, so a
    plain message's prompt does not grow."""
    situation = state.get("situation") or {}
    open_by_name = {
        str(obj.get("name") or "").lower(): list(obj.get("offen") or [])
        for obj in situation.get("objekte") or []
    }
    reference = str(state.get("object_reference") or "").lower()
    lines = []
    for judged in state.get("object_judgement") or []:
        name = str(judged.get("objekt") or "")
        missing = open_by_name.get(name.lower()) or []
        line = (
            f"- {name}{' (Bezug der Äußerung)' if name.lower() == reference else ''}: "
            f"{judged.get('status')}, {judged.get('bekannt', 0)} bekannt, "
            f"{judged.get('strecke', 0)} offen"
        )
        lines.append(line + (f" ({', '.join(missing)})" if missing else ""))
    return "\n".join(lines)


def router_prompt(state: ConversationState, registry: AgentRegistry | None) -> str:
    """The router's own part; the conversation and the utterance are in the turn's head."""
    notices = registry.descriptions(AGENT_GRAPH_SUITABILITY) if registry is not None else ""
    return render(
        "router",
        wahrnehmung=_perception_text(state),
        lage=situation_lines(state),
        agenten=notices,
    )


async def router(
    state: ConversationState, deps: GraphDeps, registry: AgentRegistry | None = None
) -> dict[str, Any]:
    """Set the routing channels (see the module docstring)."""
    own_thought = stimulus_is_own_thought(state)
    if not own_thought:
        pending = turn_context(state).pending_question
        if pending is not None:
            update = resume_update()
            update["_log"] = {"weg": "resume", "agent": pending.get("agent_name")}
            return update
    commitment = commitment_of(state)
    if commitment is not None:
        if registry is not None and registry.find(commitment) is not None:
            update = commitment_update(commitment)
            update["_log"] = {"weg": "zusage", "agent": commitment}
            return update
        log.warning("router: no agent %r keeps the commitment; routed by the model", commitment)
    reply, offer = read_reply(state, registry)
    if reply in (REPLY_ACCEPTED, REPLY_WITHOUT_OFFER):
        return consent_update(reply, offer)
    stimulus = stimulus_text(state)
    if not own_thought and registry is not None and registry.find(LIBRARY_ROOTS) is not None:
        request = folder_request(stimulus)
        if request is not None:
            update = folder_update(stimulus)
            update["_log"] = {"weg": "ordner", "agent": LIBRARY_ROOTS, "aktion": request.action}
            return update
    acute = [str(j.get("objekt")) for j in state.get("object_judgement") or []]
    try:
        decision = await deps.model.structured(
            Role.ANALYSIS,
            with_head(head_of(state, deps), router_prompt(state, registry)),
            RouterDecision,
            temperature=ROUTER_TEMPERATURE,
        )
    except ModelUnavailable:
        raise  # the model cannot be used: the turn fails (events.outcomes)
    except ModelError as exc:
        reason = f"{type(exc).__name__}: {exc}"[:300]
        log.warning(
            "router: unreadable decision (%s); defaults used (turn=%s)",
            reason,
            state.get("turn_id"),
        )
        update = decision_update(RouterDecision())
        update["router_failure"] = reason
        update["_log"] = {"weg": "standard", "ausfall": reason}
    else:
        update = decision_update(decision)
        update["router_failure"] = None
        update["_log"] = {
            "weg": "modell",
            "management": update["management_action"],
            "ziel": update["management_target"],
            "momentum": update["momentum"],
        }
        if update["management_tasks"]:
            update["_log"]["auftraege"] = [task["target"] for task in update["management_tasks"]]
    if acute:  # what the [LAGE] block showed the model
        update["_log"]["lage"] = acute
    if reply:  # a no to the open offer: noted, routed as any utterance
        update["offer_reply"] = update["_log"]["angebot"] = reply
    return update


def consent_update(reply: str, offer: Offer | None) -> dict[str, Any]:
    """The fixed answer on a bare yes (no model call): the accepted offer's agent, or —
    with no offer open — nothing to do."""
    if offer is None:
        update = decision_update(RouterDecision())
        update.update(router_failure=None, offer_reply=reply)
        update["_log"] = {"weg": "zustimmung", "angebot": reply}
        return update
    update = decision_update(
        RouterDecision(management_action=ACTION_AGENT, management_target=offer.agent)
    )
    update.update(router_failure=None, offer_reply=reply, accepted_offer=offer)
    update["_log"] = {"weg": "zustimmung", "angebot": reply, "agent": offer.agent}
    return update


def folder_update(stimulus: str) -> dict[str, Any]:
    """The fixed answer on a folder request (no model call): the library-roots agent is the
    turn's one task, named as a task so no perception intent can pick another agent."""
    update = decision_update(
        RouterDecision(
            management_action=ACTION_AGENT,
            management_target=LIBRARY_ROOTS,
            management_tasks=[RouterTask(target=LIBRARY_ROOTS, text=stimulus)],
        )
    )
    update["router_failure"] = None
    return update


def route_after_router(state: ConversationState) -> str:
    """Conditional edge: management (agent or resume) → planner, else the pre-answer join."""
    return NEXT_PLANNER if state.get("management_action") else NEXT_CONVERSATION
