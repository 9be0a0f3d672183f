"""Evaluate node: turns the tribunal's verdict into the next step
(docs/behaviour/nodes.md#evaluate).

`ok` passes. Anything else goes to the corrector while rounds are left
(`correction_round < max_corrections`). With every round used up, whatever is not `ok` —
a `warnung` as much as an `ablehnen` — is replaced by the fixed neutral fallback: an answer
the judges still object to after two rewrites is not sent with a warning attached, because
nobody downstream reads the warning (docs/behaviour/nodes.md#evaluate). The decision is
written to `evaluate_entscheidung`, and the node writes `correction_round` and
`max_corrections` back on every path: only the two side by side tell an answer that used
up its rounds from one that was accepted.

**Times nobody backs.** In a turn where task agents acted, an answer that states a date,
weekday or clock time which neither the person said, nor an agent that completed reported,
nor the memory it was written from contains (an appointment confirmed for another day than
the one stored, or one that failed) is raised from ok to warnung and the corrector is told
to drop it (`graph/time_claims.py`). Without agents the thinker checks
facts; this node does not.

**Prompt leaks.** An answer that repeats instruction text of our prompt templates
(`graph/prompt_leak.py`: word n-grams, no model call) is an `ablehnen` whatever the judges
said: the corrector is told to drop the instruction text, and an answer that still leaks
after the last round is replaced by the fallback. A leaked text is never released, so no
memory is made of it (the post-release tail reads only the released answer).

**Fallback language (decision).** The answer should follow the user's language, so when the
stimulus *looks English* (a small stop-word count, no language model involved) the English
version is used; everything else gets the German text.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.agents.stimulus import StimulusError, stimulus_text
from novaberg.graph.contract import (
    DECISION_CORRECT,
    DECISION_FALLBACK,
    DECISION_OK,
    POST_RELEASE_NODE,
    RELEASE_NODE,
    RELEASING_DECISIONS,
)
from novaberg.graph.nodes.tribunal import VOTE_OK, VOTE_REJECT, VOTE_WARN
from novaberg.graph.prompt_leak import leaked_phrases
from novaberg.graph.state import ConversationState
from novaberg.graph.time_claims import completed_agent_texts, unbacked_times

log = logging.getLogger(__name__)

MAX_CORRECTIONS: Final = 2
"""Correction rounds before the fallback: enough to fix an answer, few enough that a
conflict the judges cannot settle ends instead of looping."""

FALLBACK_DE: Final = (
    "Ich kann diese Anfrage leider nicht beantworten. Bitte formuliere deine Frage anders."
)
"""The fixed neutral answer on a final `ablehnen`."""

FALLBACK_EN: Final = (
    "I'm afraid I can't answer this request. Please phrase your question differently."
)
"""The same answer for a user who writes English (module docstring)."""

NEXT_RELEASE: Final = POST_RELEASE_NODE
NEXT_REPERCEIVE: Final = RELEASE_NODE
NEXT_CORRECT: Final = "corrector"
"""Targets of `route_after_evaluate` (node names in character_graph)."""

_ENGLISH: Final = frozenset(
    [
        "the",
        "a",
        "an",
        "is",
        "are",
        "was",
        "were",
        "you",
        "your",
        "i",
        "i'm",
        "it's",
        "what",
        "how",
        "why",
        "can",
        "could",
        "would",
        "do",
        "does",
        "don't",
        "please",
        "thanks",
        "thank",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "my",
        "me",
        "this",
        "that",
    ]
)
_GERMAN: Final = frozenset(
    [
        "der",
        "die",
        "das",
        "ist",
        "sind",
        "war",
        "du",
        "dein",
        "ich",
        "es",
        "was",
        "wie",
        "warum",
        "kann",
        "könnte",
        "würde",
        "bitte",
        "danke",
        "und",
        "oder",
        "nicht",
        "mit",
        "mein",
        "mir",
        "dies",
        "das",
        "ein",
        "eine",
        "auf",
        "für",
        "zu",
        "im",
    ]
)
ENGLISH_MIN_HITS: Final = 2
"""An utterance counts as English with ≥ 2 English and more English than German stop words."""


def looks_english(text: str) -> bool:
    """Cheap language guess for the fallback text (no model call)."""
    words = re.findall(r"[a-zäöüß']+", text.lower())
    english = sum(1 for word in words if word in _ENGLISH)
    german = sum(1 for word in words if word in _GERMAN)
    return english >= ENGLISH_MIN_HITS and english > german


def fallback_text(stimulus: str) -> str:
    """The neutral fallback in the user's language (English or the German default)."""
    return FALLBACK_EN if looks_english(stimulus) else FALLBACK_DE


def made_up_times(state: ConversationState, stimulus: str) -> list[str]:
    """In a turn where task agents acted: the times the answer states that neither the
    person, nor a completed agent result, nor the memory context backs. Without an agent
    nothing is checked here (the thinker fact-checks such answers)."""
    results = state.get("agent_results")
    if not results:
        return []
    sources = [stimulus, *completed_agent_texts(results), state.get("memory_context") or ""]
    return unbacked_times(state.get("response") or "", sources)


def time_order(claims: list[str]) -> str:
    """The correction order for times the answer states without backing."""
    return (
        f"Zeitangaben: Die Antwort nennt {', '.join(claims)}, ohne dass der Nutzer das "
        "gesagt oder ein abgeschlossener Auftrag es ergeben hat. Nenne keine Termine, "
        "Daten oder Uhrzeiten, die nicht belegt sind."
    )


LEAK_ORDER: Final = (
    "Anweisungstext: Die Antwort wiederholt Text aus deinen Anweisungen statt selbst zu "
    "antworten. Schreibe nur, was du der Person sagst, ohne Anweisungen, Rollen oder "
    "Überschriften."
)
"""The correction order for an answer that leaked prompt text."""


def prompt_leak(state: ConversationState, stimulus: str) -> list[str]:
    """The instruction phrases the answer repeats; the person's words and the material the
    model was given (memory, agent results) are not instructions."""
    sources = [
        stimulus,
        state.get("memory_context") or "",
        *completed_agent_texts(state.get("agent_results") or []),
    ]
    return leaked_phrases(state.get("response") or "", sources)


def decide(verdict: str, correction_round: int, max_corrections: int) -> str:
    """ok → ok; rounds left → correct; at the max anything but ok → fallback."""
    if verdict == VOTE_OK:
        return DECISION_OK
    if verdict not in (VOTE_WARN, VOTE_REJECT):
        log.error("evaluate: unknown tribunal verdict %r treated as ablehnen", verdict)
    if correction_round < max_corrections:
        return DECISION_CORRECT
    return DECISION_FALLBACK


def _limit(state: ConversationState, default: int) -> int:
    value = state.get("max_corrections")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return default


async def evaluate(
    state: ConversationState, deps: GraphDeps, max_corrections: int = MAX_CORRECTIONS
) -> dict[str, Any]:
    """Decide ok / correct / fallback; the fallback replaces `response`."""
    limit = _limit(state, max_corrections)
    rounds = int(state.get("correction_round") or 0)
    verdict = state.get("tribunal_verdict") or ""
    try:
        stimulus = stimulus_text(state)
    except StimulusError:
        stimulus = ""
    update: dict[str, Any] = {}
    made_up = made_up_times(state, stimulus)
    if made_up:  # a time nobody backs is at least a warning, with an order to fix it
        if verdict == VOTE_OK:
            verdict = VOTE_WARN
        update["tribunal_verdict"] = verdict
        update["tribunal_summary"] = "\n".join(
            part for part in (state.get("tribunal_summary") or "", time_order(made_up)) if part
        )
    leaked = prompt_leak(state, stimulus)
    if leaked:  # never released: rewritten, else replaced by the fallback
        verdict = VOTE_REJECT
        update["tribunal_verdict"] = verdict
        update["tribunal_summary"] = "\n".join(
            part
            for part in (
                update.get("tribunal_summary", state.get("tribunal_summary")) or "",
                LEAK_ORDER,
            )
            if part
        )
        log.warning(
            "evaluate: the answer repeats prompt text (%d phrases; turn=%s)",
            len(leaked),
            state.get("turn_id"),
        )
    decision = decide(verdict, rounds, limit)
    update |= {
        "evaluate_decision": decision,
        "correction_round": rounds,
        "max_corrections": limit,
        "_log": {
            "urteil": verdict,
            "entscheidung": decision,
            "runde": rounds,
            "max": limit,
            **({"unbelegte_zeiten": made_up} if made_up else {}),
            **({"prompt_leck": leaked[:5]} if leaked else {}),
        },
    }
    if decision == DECISION_FALLBACK:
        update["response"] = fallback_text(stimulus)
        update["_log"]["ersetzt"] = "fallback_nach_korrekturen"
        log.warning(
            "evaluate: tribunal still said %s after %d correction rounds; "
            "neutral fallback sent (turn=%s)",
            verdict,
            rounds,
            state.get("turn_id"),
        )
    return update


def route_after_evaluate(state: ConversationState) -> str:
    """`corrector` on correct; on ok the answer is out (perception_assistant read this very
    text next to the tribunal) and the post-release tail follows; on fallback the text was
    replaced, so perception_assistant reads the fallback before it leaves."""
    decision = state.get("evaluate_decision")
    if decision == DECISION_CORRECT:
        return NEXT_CORRECT
    if decision == DECISION_FALLBACK:
        return NEXT_REPERCEIVE
    return NEXT_RELEASE


def route_after_perception_assistant(state: ConversationState) -> str:
    """Next to the tribunal (no decision on this text yet) → evaluate; after a fallback
    (the decision is made and this was the re-read) → the post-release tail."""
    if state.get("evaluate_decision") in RELEASING_DECISIONS:
        return NEXT_RELEASE
    return "evaluate"
