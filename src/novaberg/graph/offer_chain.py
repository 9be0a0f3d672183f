"""The offer chain's thinking (docs/behaviour/agents.md#offers): Nova offers one thing an
agent can do, the offer is bound to the answer that made it, and a bare yes executes exactly
that offer. Storing is `agents/offers.py`'s.

1. **Composer** — on a turn with an acute object of the situation and nothing else going on
   (no agent acted, none was asked for, no question waits, the person did not just decline),
   the composer's prompt lists the offerable agents (`offer_choices`). The composer may then
   write one head line `ANGEBOT: <dienst> | <Sache> | <Frage>`; `read_offer_line` takes it
   out of the text (so neither the objection verdict nor the responder sees it) and keeps
   it as the turn's candidate (`offer_candidate`, wire `angebot_kandidat`).
2. **Dispatcher** — the candidate counts only if the released answer really asks it: a
   question sentence of the answer names the object (`recognised_offer`). That offer is
   bound to the pair; otherwise an offer the turn found open is closed, because the
   answer that made it is no longer the conversation's last word (`settle_offer`).
3. **Router** — the person's utterance is read with the closed consent rule
   (`agents/consent.py`) against the open offer (`read_reply`): a bare yes to an open
   offer routes to exactly the offered agent without a model call (`accepted_offer`,
   which the planner reads through `offered_agent`); a bare yes with nothing open
   executes nothing, also without a model call, and the composer is told so; a no, or
   anything else, is routed as usual (the dispatcher then closes the offer).
4. **Agent dispatch** — takes the offer from Redis before the agent runs and hands it to
   the classifier as `[OBJEKT]` and `[ZUSTIMMUNG]` (agents/dispatch_common.py).

Why the composer's line and not the situation's `angebot` field: the candidate says which
agent, which object and which sentence when the offer is made; the situation describes an
offer in free text a turn later, names no agent, and its "accepted" is a model's guess
where the consent rule is closed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Mapping
from typing import Any, Final

from novaberg.agents.consent import Consent, interpret_consent
from novaberg.agents.deps import GraphDeps
from novaberg.agents.offers import Offer, bind_offer, close_offer
from novaberg.agents.registry import AgentRegistry
from novaberg.agents.stimulus import stimulus_is_own_thought, stimulus_text
from novaberg.graph.state import ConversationState, turn_context
from novaberg.pair import Pair
from novaberg.wire import GRAPH_CHARACTER

log = logging.getLogger(__name__)

__all__ = [
    "REPLY_ACCEPTED",
    "REPLY_DECLINED",
    "REPLY_WITHOUT_OFFER",
    "offer_choices",
    "offered_agent",
    "read_offer_line",
    "read_reply",
    "recognised_offer",
    "settle_offer",
]

OFFER_GRAPH: Final = "user"
"""The agents the CharacterGraph may offer: those of the user graph, as the router's."""

REPLY_ACCEPTED: Final = "zugestimmt"
REPLY_DECLINED: Final = "abgelehnt"
REPLY_WITHOUT_OFFER: Final = "ohne_angebot"
"""`offer_reply` (router): the person's bare yes took the open offer, their no declined it,
or a bare yes met no open offer."""

BOUND: Final = "gebunden"
CLOSED: Final = "geschlossen"
NOT_ASKED: Final = "nicht_gefragt"
FAILED: Final = "fehlgeschlagen"
"""The dispatcher's log of the offer (`angebot`): bound, the open one closed, the candidate
not asked in the released answer, or the write failed."""

OBJECT_CHARS: Final = 60
SENTENCE_CHARS: Final = 200
"""Caps of the stored offer: it travels into a classifier prompt of a small model."""

_OFFER_LINE = re.compile(r"^\s*\**\s*ANGEBOT\s*\**\s*:\s*\**\s*(.*?)\s*\**\s*$", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?…]+[.!?…]*")


# --- 1. composer ----------------------------------------------------------------------------


def offer_choices(state: ConversationState, registry: AgentRegistry | None) -> str:
    """The composer's `[ANGEBOT]` lines ("- <agent>: <what it can do>"), or "" when Nova
    makes no offer this turn: no acute object, an agent acted or was asked for, a
    question of an agent waits, or the person just declined an offer."""
    if registry is None or not state.get("object_judgement"):
        return ""
    if state.get("agent_results") or state.get("management_action"):
        return ""
    if state.get("offer_reply") == REPLY_DECLINED:
        return ""
    context = state.get("turn_context")
    if context is not None and context.pending_question is not None:
        return ""
    offerable = registry.offerable(OFFER_GRAPH)
    return "\n".join(f"- {name}: {notice}" for name, notice in offerable.items())


def read_offer_line(text: str, offerable: Collection[str]) -> tuple[str, dict[str, str] | None]:
    """(text without any `ANGEBOT:` line, the candidate `{dienst, objekt, satz}` of the
    first line that names an offerable agent, an object and a question — else None)."""
    kept: list[str] = []
    candidate: dict[str, str] | None = None
    for line in text.splitlines():
        match = _OFFER_LINE.match(line)
        if match is None:
            kept.append(line)
            continue
        if candidate is None:
            candidate = _candidate(match.group(1), offerable)
    return "\n".join(kept), candidate


def _candidate(value: str, offerable: Collection[str]) -> dict[str, str] | None:
    parts = [" ".join(part.split()) for part in value.split("|")]
    if len(parts) != 3:
        return None
    agent, name, sentence = parts
    if agent.lower() not in offerable or not name or not sentence:
        return None
    return {"dienst": agent.lower(), "objekt": name[:OBJECT_CHARS], "satz": sentence}


# --- 2. dispatcher --------------------------------------------------------------------------


def _questions(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip().endswith("?")]


def _flat(text: str) -> str:
    return " ".join(text.split()).lower()


def recognised_offer(
    candidate: Mapping[str, Any] | None, answer: str, situation: Mapping[str, Any] | None
) -> Offer | None:
    """The offer the released `answer` makes, or None: a question sentence of the answer
    must name the candidate's object (the composer's own sentence if the answer has it,
    else the last such question). The object's known properties come from the situation."""
    if not candidate:
        return None
    name = str(candidate.get("objekt") or "")
    agent = str(candidate.get("dienst") or "")
    if not name or not agent:
        return None
    names_it = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)", re.IGNORECASE)
    asked = [q for q in _questions(answer) if names_it.search(q)]
    if not asked:
        return None
    composed = _flat(str(candidate.get("satz") or ""))
    sentence = next((q for q in asked if _flat(q) == composed), asked[-1])
    properties: dict[str, str] = {}
    for obj in (situation or {}).get("objekte") or []:
        if str(obj.get("name") or "").lower() == name.lower():
            properties = {str(k): str(v) for k, v in (obj.get("eigenschaften") or {}).items()}
            break
    return Offer(
        agent=agent, object=name, sentence=sentence[:SENTENCE_CHARS], properties=properties
    )


async def settle_offer(state: ConversationState, deps: GraphDeps) -> str | None:
    """After a CharacterGraph run that released an answer: bind the offer the answer made,
    else close the one the turn found open. Returns the log value (None: nothing to do).
    A failed write is logged and reported, never raised: the answer has left, and a lost
    offer only means a later yes executes nothing."""
    answer = state.get("response") or ""
    if state.get("graph_role") != GRAPH_CHARACTER or not answer.strip():
        return None
    context = state.get("turn_context")
    was_open = context is not None and context.open_offer is not None
    candidate = state.get("offer_candidate")
    offer = recognised_offer(candidate, answer, state.get("situation"))
    pair = Pair(state["user_id"], state["character_id"])
    try:
        if offer is not None:
            await bind_offer(deps.redis, pair, offer)
            return BOUND
        if was_open:
            await close_offer(deps.redis, pair)
            return CLOSED
    except Exception:
        log.exception("offer of turn %s not settled", state.get("turn_id"))
        return FAILED
    return NOT_ASKED if candidate else None


# --- 3. router and planner ------------------------------------------------------------------


def read_reply(
    state: ConversationState, registry: AgentRegistry | None
) -> tuple[str, Offer | None]:
    """(offer_reply, the accepted offer) of this utterance: `REPLY_ACCEPTED` and the offer
    for a bare yes to an open offer of a registered agent; `REPLY_WITHOUT_OFFER` for a
    bare yes with none; `REPLY_DECLINED` for a no to an open offer; ("", None) for
    anything else and for Nova's own thoughts (nobody's answer)."""
    if stimulus_is_own_thought(state):
        return "", None
    consent = interpret_consent(stimulus_text(state))
    usable = turn_context(state).open_offer
    if usable is not None and (registry is None or registry.find(usable.agent) is None):
        log.warning("open offer names an agent not registered (%r); ignored", usable.agent)
        usable = None
    if consent is Consent.APPROVE:
        return (REPLY_ACCEPTED, usable) if usable is not None else (REPLY_WITHOUT_OFFER, None)
    if consent is Consent.DECLINE and usable is not None:
        return REPLY_DECLINED, None
    return "", None


def offered_agent(state: ConversationState) -> str | None:
    """The agent of the offer the person accepted this turn, or None — the planner runs
    exactly this one and no other."""
    offer = state.get("accepted_offer")
    return offer.agent if isinstance(offer, Offer) else None
