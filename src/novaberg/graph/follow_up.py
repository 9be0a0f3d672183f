"""Whether Nova writes a second message right away: the self-event rule
(docs/behaviour/events.md#self-events).

After a CharacterGraph run the dispatcher asks `follow_up_channels(state)` (unless the
`follow_ups` setting is off); a planned
follow-up becomes the run's `self_trigger` / `self_trigger_payload`, which the event
consumer turns into a `continue` event — through the same loop guard as the thinker's
retry, pushed in the step that frees the turn marker. First match wins:

1. **commitment** — Nova's answer promises to look something up (`recherche`) or to take a
   matter on (`delegation`): the continue run's router hands the promise to the agent of
   that name, so a promise becomes a plan in the same conversation. Not in a run where a
   task agent acted: that answer reports what the agent did ("ich behalte es im Blick"
   after the case was opened), it promises nothing new.
2. **pressure** — on a run that answered the person: their mood vector is
   absturz/spirale/einbruch, or what they said this turn is a negative emotion with
   arousal ≥ `PRESSURE_AROUSAL` → `absicht: nachfragen`.
3. **open thread** — on a run that answered the person: they asked for help (intention
   `hilferuf`) → `absicht: nachfragen`.

2 and 3 only when her answer does not already end in a question (she asked already; a
second message asking again would crowd the person). Never when the thinker already asked
for a retry (that run's answer is a placeholder), never when an agent asked the person
something (the next message is its answer), never without an answer.

Why no model call: every value the rule reads was computed by the turn already — the
person's emotion, arousal and vector (Path 1's perception and EI), the intentions
(Path 1's salience), Nova's answer text, the agents' results. A plain message pays a few
comparisons and two regular expressions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from novaberg.agents.base import AgentResult
from novaberg.agents.stimulus import stimulus_arousal, stimulus_is_own_thought, stimulus_text
from novaberg.ei.canon import NEGATIVE, canonicalise, group_of
from novaberg.ei.vectors import PRESSURE_VECTORS
from novaberg.graph.personality import Personality
from novaberg.wire import (
    COMMITMENT_DELEGATION,
    COMMITMENT_RESEARCH,
    FIELD_COMMITMENT,
    FIELD_INTENT,
    FIELD_ORIGIN,
    FIELD_OWN_THOUGHT,
    FIELD_THOUGHT_AROUSAL,
    GRAPH_CHARACTER,
    INTENT_FOLLOW_UP,
    ORIGIN_OWN_THOUGHT,
    SOURCE_USER,
)

PRESSURE_AROUSAL: Final = 0.6
"""A negative emotion at least this aroused counts as pressure without a vector (a first
heavy message has no history, so its vector cannot say it yet)."""

HELP_INTENTION: Final = "hilferuf"
"""The intention that leaves a thread open: the person asked for help."""

QUOTE_CHARS: Final = 300
"""How much of the person's words the thought quotes."""

RESEARCH_PROMISE: Final = re.compile(
    r"\b(ich\s+(schau|schaue|guck|gucke|seh|sehe)\s+(mal\s+|gleich\s+)?nach"
    r"|ich\s+melde\s+mich"
    r"|ich\s+(finde|find)\s+(das\s+|es\s+)?(mal\s+)?heraus"
    r"|ich\s+(recherchiere|informiere\s+mich)"
    r"|ich\s+komme?\s+(darauf\s+)?zur[üu]ck"
    r"|ich\s+werde\s+(das\s+|es\s+|mal\s+|gleich\s+|für\s+dich\s+)*"
    r"(recherchieren|nachschauen|nachsehen|herausfinden|nachlesen)"
    r"|lass\s+mich\s+(das\s+|es\s+|mal\s+|kurz\s+)*(nachschauen|nachsehen|recherchieren))",
    re.IGNORECASE,
)
"""Phrases by which Nova's answer promises to come back with something she looks up."""

CARE_PROMISE: Final = re.compile(
    r"\b(ich\s+k[üu]mmere\s+mich(\s+darum)?"
    r"|ich\s+werde\s+mich\s+(darum\s+)?k[üu]mmern"
    r"|ich\s+behalte\s+(das|es)\s+im\s+(blick|auge)"
    r"|ich\s+übernehme\s+das"
    r"|ich\s+denke\s+(für\s+dich\s+)?daran)",
    re.IGNORECASE,
)
"""Phrases by which Nova's answer promises to take a matter on for the person."""


@dataclass(frozen=True)
class FollowUp:
    """A planned second message: its intent or commitment, the thought it starts from,
    and why (logged)."""

    thought: str
    reason: str
    intent: str | None = None
    commitment: str | None = None

    def payload(self, arousal: float | None) -> dict[str, Any]:
        """The `continue` payload without its turn ids (the event consumer, who starts the
        turn, gives it a new `turn_id` and names this one as `ausloeser_turn_id`)."""
        payload: dict[str, Any] = {
            FIELD_OWN_THOUGHT: self.thought,
            FIELD_ORIGIN: ORIGIN_OWN_THOUGHT,
            FIELD_THOUGHT_AROUSAL: arousal,
        }
        if self.intent:
            payload[FIELD_INTENT] = self.intent
        if self.commitment:
            payload[FIELD_COMMITMENT] = self.commitment
        return payload


def commitment_in(response: str) -> tuple[str, str] | None:
    """(commitment, the promising phrase) of an answer, or None (pure). A promise to look
    something up wins over one to take care of it: research is what can start at once."""
    for commitment, pattern in (
        (COMMITMENT_RESEARCH, RESEARCH_PROMISE),
        (COMMITMENT_DELEGATION, CARE_PROMISE),
    ):
        found = pattern.search(response or "")
        if found:
            return commitment, found.group(0)
    return None


def _quote(text: str) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= QUOTE_CHARS else flat[: QUOTE_CHARS - 1] + "…"


def _under_pressure(person: Personality) -> str | None:
    """Why the person's values of this turn show pressure, or None."""
    emotion = person.emotion
    if emotion.emotions_vector in PRESSURE_VECTORS:
        return f"emotionsvektor {emotion.emotions_vector}"
    name = canonicalise(emotion.emotion) if emotion.emotion else ""
    if group_of(name) == NEGATIVE and PRESSURE_AROUSAL <= emotion.arousal <= 1.0:
        return f"emotion {name} arousal {emotion.arousal:.2f}"
    return None


def _agent_asked(state: Mapping[str, Any]) -> bool:
    return any(
        AgentResult.coerce(r).status == "rueckfrage" for r in state.get("agent_results") or []
    )


def keeps_promises(state: Mapping[str, Any], enabled: bool) -> bool:
    """Whether a promise in this run's answer is kept by a continue run: follow-ups are on
    and the thinker's retry does not hold the self-trigger (pure)."""
    return enabled and not state.get("self_trigger")


def plan_follow_up(state: Mapping[str, Any]) -> FollowUp | None:
    """The follow-up this run plans, or None (pure; the rule is the module docstring)."""
    if state.get("graph_role") != GRAPH_CHARACTER or state.get("self_trigger"):
        return None
    response = str(state.get("response") or "").strip()
    if not response or _agent_asked(state):
        return None
    stimulus = _quote(stimulus_text(state))
    promise = commitment_in(response)
    if promise is not None and state.get("agent_results"):
        return None  # she reports what an agent did this turn: that is no new promise
    if promise is not None:
        commitment, phrase = promise
        matter = stimulus if not stimulus_is_own_thought(state) else _quote(response)
        verb = "zu recherchieren" if commitment == COMMITMENT_RESEARCH else "mich darum zu kümmern"
        return FollowUp(
            thought=f"Ich habe zugesagt, {verb}: „{matter}“.",
            reason=f"zusage: {phrase}",
            commitment=commitment,
        )
    answered_person = state.get("event_source") == SOURCE_USER and not stimulus_is_own_thought(
        state
    )
    if not answered_person or response.endswith("?"):
        return None
    person = state.get("external") or Personality()
    why = _under_pressure(person)
    if why is None and HELP_INTENTION in (state.get("user_intentions") or []):
        why = f"intention {HELP_INTENTION}"
    if why is None:
        return None
    return FollowUp(
        thought=(
            f"Ich möchte noch einmal nachfragen, wie es dir mit dem geht, was du gerade "
            f"erzählt hast („{stimulus}“), und anbieten, darüber zu reden."
        ),
        reason=why,
        intent=INTENT_FOLLOW_UP,
    )


def _arousal(state: Mapping[str, Any]) -> float | None:
    """Nova's arousal after her answer (the state the thought is formed in), or None."""
    internal = state.get("internal")
    if isinstance(internal, Personality):
        value = internal.emotion.arousal
        if isinstance(value, int | float) and 0.0 <= float(value) <= 1.0:
            return float(value)
    return stimulus_arousal(state)


def follow_up_channels(
    state: Mapping[str, Any], *, enabled: bool = True
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The dispatcher's update — `self_trigger` and its payload when a follow-up is
    planned, else nothing — and the entry for the node's log row (`nachfrage`: on every
    CharacterGraph run, so "none planned" is told apart from "never asked"; None in the
    other graphs). `enabled` is the `follow_ups` setting: off, nothing is planned."""
    if state.get("graph_role") != GRAPH_CHARACTER:
        return {}, None
    if not enabled:
        return {}, {"geplant": False, "grund": "abgeschaltet"}
    planned = plan_follow_up(state)
    if planned is None:
        return {}, {"geplant": False}
    update = {
        "self_trigger": True,
        "self_trigger_payload": planned.payload(_arousal(state)),
    }
    entry = {
        "geplant": True,
        "absicht": planned.intent,
        "commitment": planned.commitment,
        "grund": planned.reason,
    }
    return update, entry
