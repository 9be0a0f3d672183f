"""EI-Calc: emotion history, vector and plausibility (docs/behaviour/nodes.md#ei-calc).
No model call. Two variants, chosen by `ei_calc_role`:

- **user** (HumanGraph): `emotions_verlauf` over the user's turns with the current
  perception injected; the user's vector → `external.emotion.emotions_vector/_quelle`; the
  plausibility pass corrects `external.emotion.mode` and `.language_style`. The rule-based
  style R reads the user's recent turns *including the current utterance* (the session
  does not hold it yet — the dispatcher writes it at the end of the graph).
- **character** (CharacterGraph): Nova's history over her own turns (`raw_turns`, which
  db_access read with the turn context), empathy
  toward `external.emotion` only when `event_source == "user"` (else pure decay, no
  conflict), Nova's vector, the top emotion transferred into `internal.emotion`, and the
  register space pulled toward the last speaker's register (factor 1.0). Writes
  `nova_emotions_verlauf` and `nova_emotion_konflikt`.
  Mode/style plausibility for Nova runs later in `ei_calc_persist`.

Personalities are copied, never mutated in place.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.agents.stimulus import StimulusError, stimulus_text
from novaberg.ei.empathy import USER_EVENT_SOURCE, character_emotion_update
from novaberg.ei.history import emotion_history
from novaberg.ei.plausibility import plausibility_pass, tiebreak_profile
from novaberg.ei.register import pull_register, register_target
from novaberg.ei.vectors import emotion_vector
from novaberg.graph.copying import emotion_copy
from novaberg.graph.personality import InternalPersonality, Personality, RegisterSpace
from novaberg.graph.state import ConversationState
from novaberg.wire import EI_ROLE_CHARACTER, EI_ROLE_USER, ROLE_USER

log = logging.getLogger(__name__)

RAUM_PULL_FACTOR: Final = 1.0
"""ei_calc pulls the register space with factor 1.0 (docs/behaviour/emotion.md#empathy)."""


def _user_variant(state: ConversationState) -> dict[str, Any]:
    external = emotion_copy(state.get("external") or Personality())
    emotion = external.emotion
    turns = list(state.get("raw_turns") or [])
    history = emotion_history(turns, emotion.emotion, emotion.arousal, ROLE_USER)
    vector = emotion_vector(turns, emotion.emotion, emotion.arousal, ROLE_USER)
    emotion.emotions_vector = vector.vector
    emotion.emotions_vector_quelle = vector.quelle

    try:
        current = [{"rolle": ROLE_USER, "inhalt": stimulus_text(state)}]
    except StimulusError:
        current = []
    profile = tiebreak_profile(external.character.intentions, external.character.core)
    checked = plausibility_pass(
        emotion.emotion,
        emotion.arousal,
        emotion.mode,
        emotion.language_style,
        emotion.relationship_dynamic,
        emotion.intent,
        emotion.tone,
        turns + current,
        ROLE_USER,
        profile,
    )
    summary = {
        "rolle": "user",
        "vektor": vector.vector,
        "vektor_quelle": vector.quelle,
        "modus": [emotion.mode, checked.mode],
        "sprach_stil": [emotion.language_style, checked.language_style],
        "ei": round(checked.ei, 4),
        "verlauf_top": history[0]["emotion"] if history else None,
    }
    emotion.mode = checked.mode
    emotion.language_style = checked.language_style
    return {"external": external, "emotion_history": history, "_log": summary}


def _character_variant(state: ConversationState) -> dict[str, Any]:
    internal = emotion_copy(state.get("internal") or InternalPersonality())
    external = state.get("external") or Personality()
    event_source = state.get("event_source", "")
    turns = list(state.get("raw_turns") or [])  # the session db_access read

    result = character_emotion_update(
        turns,
        external.emotion.emotion,
        external.emotion.arousal,
        event_source,
        internal.emotion.emotion,
        internal.emotion.arousal,
    )
    emotion = internal.emotion
    emotion.emotions_vector = result.vector.vector
    emotion.emotions_vector_quelle = result.vector.quelle
    emotion.emotion = result.emotion
    emotion.arousal = result.arousal

    source = external if event_source == USER_EVENT_SOURCE else internal
    target = register_target(
        source.emotion.mode, source.emotion.relationship_dynamic, source.emotion.language_style
    )
    pulled = pull_register(
        internal.register.depth, internal.register.closeness, target, RAUM_PULL_FACTOR
    )
    internal.register = RegisterSpace(depth=pulled.depth, closeness=pulled.closeness)
    summary = {
        "rolle": EI_ROLE_CHARACTER,
        "empathie": event_source == USER_EVENT_SOURCE,
        "emotion": emotion.emotion,
        "arousal": emotion.arousal,
        "vektor": emotion.emotions_vector,
        "konflikt": result.conflict,
        "raum": internal.register.to_dict(),
        "turns": len(turns),
    }
    return {
        "internal": internal,
        "nova_emotion_history": result.history,
        "nova_emotion_conflict": result.conflict,
        "_log": summary,
    }


async def ei_calc(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Dispatch on `ei_calc_role` ("user" | "character")."""
    role = state.get("ei_calc_role", EI_ROLE_USER)
    if role == EI_ROLE_USER:
        return _user_variant(state)
    if role == EI_ROLE_CHARACTER:
        return _character_variant(state)
    raise ValueError(f"unknown ei_calc_role {role!r}")
