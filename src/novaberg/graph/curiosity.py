"""What the conversation vector reads of the situation and the open questions: the turn's
knowledge gaps, the colour mix of the two moods and the curiosity they give
(docs/behaviour/nodes.md#conversation-vector; the math is `ei/curiosity.py`).

Knowledge gaps, in this order and each text once (at most `MAX_GAPS`):

- the situation's open questions (`sachlage.offen`, source `sachlage`);
- the open properties of the acute objects (`objekt_urteil`, source `objekt`,
  "<object>: <property>?"): what the matter at hand still lacks;
- the pair's open knowledge questions of the turn context (a question Nova could not
  answer, knowledge that came back; source `wissensluecken` / `wissen_rueckweg`, with
  their id).

The goal boost needs each gap's closeness to an activated goal (`goal_vectors`): the gap
texts are embedded in one call, only when there are gaps and activated goals and no crisis.
A failed embedding leaves the boost unmeasured (None), never 0.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.ei.curiosity import colour_mix, curiosity, goal_boost, goal_closeness
from novaberg.graph.personality import Emotion
from novaberg.graph.state import ConversationState
from novaberg.llm.errors import ModelError, ModelUnavailable

log = logging.getLogger(__name__)

MAX_GAPS: Final = 8
"""Gaps weighed per turn (their texts are embedded together)."""

GAP_CHARS: Final = 160

SOURCE_SITUATION: Final = "sachlage"
SOURCE_OBJECT: Final = "objekt"


def _emotion(state: ConversationState, key: str) -> Emotion:
    emotion = getattr(state.get(key), "emotion", None)
    return emotion if isinstance(emotion, Emotion) else Emotion()


def _text(value: Any) -> str:
    return " ".join(str(value or "").split())[:GAP_CHARS]


def knowledge_gaps(state: ConversationState) -> list[dict[str, Any]]:
    """The turn's knowledge gaps `{frage, quelle, id}` (pure; see the module docstring)."""
    situation: Mapping[str, Any] = state.get("situation") or {}
    found: list[dict[str, Any]] = [
        {"frage": _text(q), "quelle": SOURCE_SITUATION, "id": None}
        for q in situation.get("offen") or []
    ]
    objects = {
        str(obj.get("name") or "").lower(): obj
        for obj in situation.get("objekte") or []
        if isinstance(obj, Mapping)
    }
    for judged in state.get("object_judgement") or []:
        obj = objects.get(str(judged.get("objekt") or "").lower())
        if obj is None:
            continue
        for prop in obj.get("offen") or []:
            found.append(
                {"frage": _text(f"{obj['name']}: {prop}?"), "quelle": SOURCE_OBJECT, "id": None}
            )
    context = state.get("turn_context")
    for question in context.knowledge_questions if context is not None else ():
        found.append(
            {"frage": _text(question.question), "quelle": question.source, "id": question.id}
        )
    unique: list[dict[str, Any]] = []
    seen: set[str] = set()
    for gap in found:
        key = gap["frage"].lower()
        if gap["frage"] and key not in seen:
            seen.add(key)
            unique.append(gap)
    return unique[:MAX_GAPS]


async def _closeness(
    state: ConversationState, deps: GraphDeps, gaps: list[dict[str, Any]]
) -> tuple[list[float | None] | None, str | None]:
    """Per gap its best cosine to an activated goal; (None, why) when it failed."""
    goals = [v for v in (state.get("goal_vectors") or {}).values() if v]
    if not gaps or not goals:
        return [None] * len(gaps), None
    try:
        vectors = await deps.model.embed([gap["frage"] for gap in gaps])
    except ModelUnavailable:
        raise  # the model cannot be used: the turn fails (events.outcomes)
    except ModelError as exc:
        log.warning("conversation_vector: gaps not embedded (%s); no goal boost", exc)
        return None, f"embedding_gescheitert: {type(exc).__name__}"
    return goal_closeness(vectors, goals), None


async def understanding(
    state: ConversationState, deps: GraphDeps, *, crisis: bool
) -> dict[str, Any]:
    """gv_detail's `farbton`, `wissensluecken`, `neugier`, `neugier_anteile` and
    `neugier_ausfall` for this turn."""
    user, nova = _emotion(state, "external"), _emotion(state, "internal")
    mix = colour_mix([(user.emotion, user.arousal), (nova.emotion, nova.arousal)])
    gaps = knowledge_gaps(state)
    failure: str | None = None
    closeness: list[float | None] | None = [None] * len(gaps)
    if not crisis:
        closeness, failure = await _closeness(state, deps, gaps)
    for gap, value in zip(gaps, closeness or [None] * len(gaps), strict=True):
        gap["ziel_naehe"] = value
    measured = [c for c in closeness or [] if c is not None]
    boost = None if closeness is None else goal_boost(max(measured)) if measured else 0.0
    result = curiosity(mix, len(gaps), boost, crisis=crisis)
    return {
        "farbton": mix.as_detail(),
        "wissensluecken": gaps,
        **result.as_detail(),
        "neugier_ausfall": failure,
    }
