"""Responder node: Nova's answer (docs/behaviour/nodes.md#responder).

One chat call (role chat, temperature 0.7). The system prompt carries `[IDENTITAET]`
("Du bist <name>" + the character instructions), both persons' profiles, Nova's and the
user's emotion, `[DIREKTIVEN]`, `[EIGENER GEDANKE]` on an impulse, the agents'
`[AUFGABE]` block and the conversation vector; the messages are the recent session history
and the `[AKTUELLER PROMPT]`. The answer follows the user's language.

**Content, not memory:** the responder never reads memory itself. The composer decided
what to say (`response_content`, `[INHALT]`); the responder gives it Nova's form. When the
composer's objection verdict contests the utterance's premise, an `[EINWAND]` block says so:
a premise that does not hold is contradicted, a deviating value may be quoted but is not
built on (docs/behaviour/nodes.md#objection-verdict). On `task_context_cut` (an agent
reported what it did) the content and the conversation vector are left out, as the task
block demands.

**Stance:** the turn's stance (`haltung`, five magnitudes and whether Nova may lead,
docs/behaviour/nodes.md#stance) is a `[HALTUNG]` block: the form, not the content.

A failed or empty call raises: without an answer the turn has failed, and the event
consumer reports `turn_gescheitert` instead of sending a made-up text.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.agents.stimulus import stimulus_is_own_thought, stimulus_text
from novaberg.config import Role
from novaberg.graph.nodes.context_text import directives_text, identities_text, task_text
from novaberg.graph.nodes.stance import stance_text
from novaberg.graph.objection import ASSESSMENT_DEVIATES, ASSESSMENT_FAILS
from novaberg.graph.person_block import responder_person
from novaberg.graph.personality import Character, Emotion
from novaberg.graph.state import ConversationState, turn_context
from novaberg.llm.accounting import track_calls
from novaberg.llm.base import Message
from novaberg.llm.errors import ModelOutputError
from novaberg.prompts import render
from novaberg.wire import ROLE_ASSISTANT

log = logging.getLogger(__name__)

RESPONDER_TEMPERATURE: Final = 0.7
"""The one creative call of a turn: Nova's own words."""

HISTORY_TURNS: Final = 6
HISTORY_CHARS: Final = 300
PROFILE_CHARS: Final = 240
"""Prompt budget: the bundled model has a 2048-token context (docs/behaviour/llm.md#local-model)."""

CURRENT_PROMPT_HEADER: Final = "[AKTUELLER PROMPT]"
IMPULSE_PROMPT: Final = (
    "Niemand hat dir gerade etwas geschrieben. Du meldest dich von dir aus und teilst "
    "deinen eigenen Gedanken."
)
"""The current-prompt message on an impulse: the thought itself is in [EIGENER GEDANKE]."""

_PROFILE_LABELS: Final = (
    ("core", "Kern"),
    ("relationship", "Beziehung"),
    ("intentions", "Absichten"),
    ("emotions", "Gefühle"),
    ("adaptive", "Anpassung"),
)


def _clip(text: str, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def profile_text(character: Character | None) -> str:
    """A compact one-line-per-layer profile; "" when every layer is empty."""
    if character is None:
        return ""
    lines = []
    for attr, label in _PROFILE_LABELS:
        value = getattr(character, attr, "")
        if value and str(value).strip():
            lines.append(f"{label}: {_clip(value, PROFILE_CHARS)}")
    return "\n".join(lines)


def emotion_text(nova: Emotion | None, user: Emotion | None, own_thought: bool) -> str:
    """Nova's mood and the user's perceived state (EI-micro / style adaptation)."""
    lines = []
    if nova is not None:
        lines.append(f"Deine Stimmung: {nova.emotion} (Erregung {nova.arousal:.2f}).")
    if user is not None and not own_thought:
        lines.append(
            f"Der Nutzer: {user.emotion} (Erregung {user.arousal:.2f}), Ton {user.tone}, "
            f"Stil {user.language_style}, Beziehung {user.relationship_dynamic}, "
            f"Absicht {user.intent}."
        )
    return "\n".join(lines)


def objection_text(verdict: dict[str, Any] | None) -> str:
    """The `[EINWAND]` instruction for a verdict that contests the premise; "" otherwise
    (no verdict, an unreadable one, no objection, or a premise that holds)."""
    if not verdict or not verdict.get("geliefert") or not verdict.get("einwand"):
        return ""
    checked = str(verdict.get("geprueft") or "").strip()
    if verdict.get("bewertung") == ASSESSMENT_FAILS:
        return (
            f"Die Voraussetzung des Nutzers stimmt nicht: {checked} "
            "Sag das offen und freundlich, statt darauf einzugehen."
        )
    if verdict.get("bewertung") == ASSESSMENT_DEVIATES:
        return (
            f"Der Nutzer nennt einen anderen Wert als den, den du kennst: {checked} "
            "Du darfst seinen Wert nennen, aber baue nicht auf ihm auf."
        )
    return ""


def _same(a: str, b: str) -> bool:
    return " ".join(a.split()).lower() == " ".join(b.split()).lower()


def history_messages(turns: list[dict[str, Any]], stimulus: str) -> list[Message]:
    """The last turns as chat messages; the current utterance (already in the session,
    written by the HumanGraph) is dropped because it follows as `[AKTUELLER PROMPT]`."""
    usable = [turn for turn in turns if str(turn.get("inhalt") or "").strip()]
    if (
        usable
        and usable[-1].get("rolle") != ROLE_ASSISTANT
        and _same(str(usable[-1].get("inhalt")), stimulus)
    ):
        usable = usable[:-1]
    messages: list[Message] = []
    for turn in usable[-HISTORY_TURNS:]:
        role = "assistant" if turn.get("rolle") == ROLE_ASSISTANT else "user"
        messages.append({"role": role, "content": _clip(turn.get("inhalt") or "", HISTORY_CHARS)})
    return messages


def system_prompt(state: ConversationState, name: str, stimulus: str) -> str:
    """The rendered `responder` template."""
    internal = state.get("internal")
    external = state.get("external")
    own_thought = stimulus_is_own_thought(state)
    cut = bool(state.get("task_context_cut"))
    content = "" if cut else (state.get("response_content") or "")
    identity = "\n".join(
        part
        for part in (
            f"Du bist {name}.",
            (state.get("system_prompt") or "").strip(),
            identities_text(state),
        )
        if part
    )
    return render(
        "responder",
        identitaet=identity,
        eigenes_profil=profile_text(getattr(internal, "character", None)),
        gegenueber=responder_person(state),
        nutzer_profil="" if own_thought else profile_text(getattr(external, "character", None)),
        emotion=emotion_text(
            getattr(internal, "emotion", None), getattr(external, "emotion", None), own_thought
        ),
        direktiven=directives_text(state),
        eigener_gedanke=stimulus if own_thought else "",
        aufgabe=task_text(state),
        gespraechsvektor="" if cut else (state.get("conversation_hypothesis") or ""),
        inhalt=content,
        einwand="" if cut else objection_text(state.get("objection_verdict")),
        haltung=stance_text(state.get("stance")),
    )


def build_messages(state: ConversationState, name: str) -> list[Message]:
    """System prompt + history + the current prompt."""
    stimulus = stimulus_text(state)
    own_thought = stimulus_is_own_thought(state)
    turns = list(state.get("session_turns") or state.get("raw_turns") or [])
    current = IMPULSE_PROMPT if own_thought else stimulus
    return [
        {"role": "system", "content": system_prompt(state, name, stimulus)},
        *history_messages(turns, stimulus),
        {"role": "user", "content": f"{CURRENT_PROMPT_HEADER}\n{current}"},
    ]


async def responder(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Write `response`, `model` and `token_total`."""
    name = turn_context(state).character_name
    messages = build_messages(state, name)
    with track_calls() as stats:
        text = (
            await deps.model.chat(Role.CHAT, messages, temperature=RESPONDER_TEMPERATURE)
        ).strip()
    if not text:
        log.warning("responder: empty answer (turn=%s)", state.get("turn_id"))
        raise ModelOutputError("responder: the model returned an empty answer", "")
    model_name = stats.models[0] if stats.models else deps.model.backend_name
    return {
        "response": text,
        "model": model_name,
        "token_total": stats.total_tokens,
        "_log": {
            "laenge": len(text),
            "verlauf": len(messages) - 2,
            "inhalt_laenge": len(state.get("response_content") or ""),
        },
    }
