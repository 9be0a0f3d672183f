"""ei_calc_persist node: consolidate and persist Nova's state
(docs/behaviour/nodes.md#ei-calc-persist).

Runs after `perception_assistant`, when `internal.emotion` holds Nova's perception of her
own final answer. The plausibility pass corrects mode and style (ei arousal → mode check →
rule-based style over Nova's recent turns, profile tiebreak → style check), and the result
is written to `nova_state:{u}:{c}` — the "default mode network" the next run wakes with
(db_access). `nutzer_zeit` is written only on user turns (from the payload's
`empfangen_am`), so a self-trigger or impulse never resets the pause clock.
"""

from __future__ import annotations

import logging
from typing import Any

from novaberg.agents.deps import GraphDeps
from novaberg.ei.persistence import resolve_user_time
from novaberg.ei.plausibility import plausibility_pass, tiebreak_profile
from novaberg.graph.personality import InternalPersonality
from novaberg.graph.state import ConversationState
from novaberg.pair import Pair
from novaberg.store import nova_state
from novaberg.store.session import ROLE_ASSISTANT
from novaberg.wire import FIELD_RECEIVED_AT, SOURCE_USER

log = logging.getLogger(__name__)


async def ei_calc_persist(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Plausibility pass on `internal.emotion`, then HSET `nova_state`."""
    internal = state.get("internal")
    user_id = state.get("user_id") or ""
    character_id = state.get("character_id") or ""
    if not isinstance(internal, InternalPersonality) or not user_id or not character_id:
        log.error(
            "ei_calc_persist: no internal state or pair ids (turn=%s); nothing persisted",
            state.get("turn_id"),
        )
        return {"_log": {"ausfall": "kein_zustand"}}

    updated = InternalPersonality.from_dict(internal.to_dict())
    emotion = updated.emotion
    result = plausibility_pass(
        emotion.emotion,
        emotion.arousal,
        emotion.mode,
        emotion.language_style,
        emotion.relationship_dynamic,
        emotion.intent,
        emotion.tone,
        list(state.get("raw_turns") or []),
        ROLE_ASSISTANT,
        tiebreak_profile(updated.character.intentions, updated.character.core),
    )
    emotion.mode = result.mode
    emotion.language_style = result.language_style

    now = deps.clock()
    user_time = None
    if state.get("event_source") == SOURCE_USER:
        received = (state.get("event_payload") or {}).get(FIELD_RECEIVED_AT)
        if received is None:
            received = state.get("received_at")
        user_time = resolve_user_time(received, now)
    fields = await nova_state.save(
        deps.redis,
        Pair(user_id, character_id),
        emotion.to_dict(),
        updated.register,
        now,
        user_time=user_time,
    )
    return {
        "internal": updated,
        "_log": {
            "ei": round(result.ei, 3),
            "modus": result.mode,
            "stil": result.language_style,
            "stil_regel": result.rule_style,
            "felder": sorted(fields),
        },
    }
