"""The dispatcher's delegation trigger: what Nova sets herself to do after a turn
(docs/behaviour/nodes.md#delegation-trigger).

After a character run that answered the user (never an impulse, never the AgentGraph):
- **delegation**: the user's emotion vector is under pressure (absturz/spirale/einbruch),
  or the turn's intentions ask for knowledge or help → a `delegation` task on the shadow
  queue (Pixie routes it: nachfragen under pressure, else recherche);
- **commitment**: Nova's answer promises to come back ("ich schau mal nach und melde mich")
  → kept at once by a continue run (graph/follow_up.py: its research agent hands what is
  slow to Pixie itself); only when no continue follows (follow-ups off, or the thinker's
  retry holds the self-trigger), a `recherche` task naming this turn (`bezug_id`), whose result arrives later as an
  impulse with this turn as `ausloeser_turn_id`;
- **knowledge gap**: Nova's answer admits she does not know ("das weiß ich nicht", "da
  bin ich mir nicht sicher", "keine Ahnung") or the thinker's fact check failed → a
  `wissensluecken` task (not next to a commitment, which already researches the turn);
- the run's momentum is kept for five minutes (`momentum_to_keep`, which the dispatcher
  writes with its other early writes; `momentum:{u}:{c}`: low momentum lets
  delivery fire before the silence has run out).
Failures are logged; they never touch the turn.
"""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.agents.stimulus import stimulus_is_own_thought
from novaberg.ei.vectors import PRESSURE_VECTORS
from novaberg.graph.follow_up import commitment_in, keeps_promises
from novaberg.graph.personality import Personality
from novaberg.graph.state import ConversationState
from novaberg.impulses.turn_tasks import (
    TASK_DELEGATION,
    TASK_KNOWLEDGE_GAP,
    TASK_RESEARCH,
    ShadowTask,
    push_task,
)
from novaberg.wire import COMMITMENT_RESEARCH, GRAPH_CHARACTER

log = logging.getLogger(__name__)

DELEGATING_INTENTIONS: Final = frozenset(
    {
        "information_erfragen",
        "recherche_vertiefen",
        "gemeinsam_eruieren",
        "hilferuf",
        "emotionaler_ausdruck",
    }
)
"""Intentions that make a turn worth thinking about afterwards."""

NOT_KNOWN: Final = re.compile(
    r"\b(wei(ß|ss)\s+ich\s+(leider\s+)?(auch\s+)?nicht"
    r"|ich\s+wei(ß|ss)\s+(es\s+|das\s+)?(leider\s+)?nicht"
    r"|(bin\s+ich\s+mir|ich\s+bin\s+mir)\s+(da\s+)?(nicht|un)\s*sicher"
    r"|keine\s+ahnung"
    r"|kann\s+ich\s+(dir\s+)?(leider\s+)?nicht\s+(sicher\s+)?sagen"
    r"|da\s+muss\s+ich\s+passen)",
    re.IGNORECASE,
)
"""Phrases by which Nova's answer admits a gap in her knowledge."""

THINKER_FAILED: Final = frozenset({"ausfall", "ausfall_im_retry"})
"""`thinker_result` values of a fact check that found nothing usable."""

GAP_SALIENCE: Final = 0.6


def knowledge_gap(state: ConversationState) -> str | None:
    """Why this answer shows a gap in Nova's knowledge, or None (pure)."""
    found = NOT_KNOWN.search(state.get("response") or "")
    if found:
        return f"nicht gewusst: {found.group(0)}"
    if state.get("thinker_result") in THINKER_FAILED:
        return f"faktencheck: {state.get('thinker_result')}"
    return None


def _topic(state: ConversationState, external: Personality) -> str:
    topic = (external.emotion.prompt_topic or "").strip()
    if topic and topic != "allgemein":
        return topic
    prompt = " ".join((state.get("user_prompt") or "").split())
    return prompt[:60] or "gespräch"


def tasks_for(state: ConversationState, follow_ups: bool = True) -> list[ShadowTask]:
    """The shadow tasks this run sets (pure); `follow_ups`: the setting, whether a continue
    run may keep a promise at once."""
    if state.get("graph_role") != GRAPH_CHARACTER or stimulus_is_own_thought(state):
        return []
    user_id, character_id = state["user_id"], state["character_id"]
    if user_id == character_id:
        return []
    external = state.get("external") or Personality()
    emotion = external.emotion
    topic = _topic(state, external)
    context = (state.get("user_prompt") or "")[:2000]
    intentions = [str(i) for i in state.get("user_intentions") or []]
    common: dict[str, Any] = {
        "user_id": user_id,
        "character_id": character_id,
        "topic": topic,
        "context": context,
        "intentions": intentions,
        "emotion": emotion.emotion,
        "mode": emotion.mode,
        "arousal": emotion.arousal if 0.0 <= emotion.arousal <= 1.0 else None,
        "reference_id": state.get("turn_id"),
    }
    found: list[ShadowTask] = []
    pressure = emotion.emotions_vector in PRESSURE_VECTORS
    asked = sorted(DELEGATING_INTENTIONS.intersection(intentions))
    if pressure or asked:
        why = f"emotionsvektor {emotion.emotions_vector}" if pressure else f"intentionen {asked}"
        found.append(ShadowTask(task=TASK_DELEGATION, reason=why, **common))
    promise = commitment_in(state.get("response") or "")
    if promise is not None:
        # kept at once by the continue run (graph/follow_up.py), which hands on what is
        # slow; only when no continue follows it waits for Pixie
        if promise[0] == COMMITMENT_RESEARCH and not keeps_promises(state, follow_ups):
            found.append(
                ShadowTask(
                    task=TASK_RESEARCH, reason=f"zusage: {promise[1]}", salience=0.8, **common
                )
            )
    else:
        gap = knowledge_gap(state)
        if gap is not None:
            found.append(
                ShadowTask(task=TASK_KNOWLEDGE_GAP, reason=gap, salience=GAP_SALIENCE, **common)
            )
    return found


def momentum_to_keep(state: ConversationState) -> str | None:
    """The momentum a character run keeps for five minutes (`keys.momentum`), or None
    (pure: the dispatcher writes it with its other side writes)."""
    if state.get("graph_role") == GRAPH_CHARACTER and state.get("momentum"):
        return str(state["momentum"])
    return None


async def delegate(state: ConversationState, deps: GraphDeps) -> list[tuple[int, str]]:
    """Push this run's shadow tasks (the momentum is `momentum_to_keep`'s); never raises."""
    pushed: list[tuple[int, str]] = []
    try:
        now = datetime.fromtimestamp(deps.clock(), UTC)
        for task in tasks_for(state, deps.settings.follow_ups):
            pushed.append(await push_task(deps.pool, task, now))
    except Exception:
        log.exception("delegation trigger of turn %s failed", state.get("turn_id"))
    return pushed
