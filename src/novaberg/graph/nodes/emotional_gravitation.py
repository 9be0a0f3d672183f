"""emotional_gravitation: emotionally charged memories near the turn pull Nova's emotion
(docs/behaviour/nodes.md#emotional-gravitation, maths in docs/behaviour/emotion.md#gravitation).

The enricher collects the gravity points while it reads the memory (`gravity_points`:
short-term hits and long-term memories with their similarity, `ei/gravitation.py` keeps
g ≥ 0.40, the two strongest). This node, right after the enricher, applies them to Nova's
emotion history (`nova_emotion_history`, from ei_calc) and takes the history's new top as
Nova's emotion — the same transfer ei_calc does. The enricher's memory choice saw the
state before the pull. No model call.

**Origin gate.** When the stimulus is Nova's own thought (an impulse), the points are not
applied: the thought grew out of her memory in the first place, and the memories near it
are its own sources — letting them pull her emotion would count the same feeling twice and
let a thought talk itself up turn after turn. Her state on an impulse already carries the
thought's arousal (db_access raises it by the thought's level). The points stay in the
state and the pipeline_log row says the gate closed (`tor: eigener_gedanke`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.agents.stimulus import stimulus_is_own_thought
from novaberg.ei.empathy import transfer_dominant
from novaberg.ei.gravitation import (
    apply_gravity,
    long_term_point,
    select_gravity_points,
    short_term_point,
)
from novaberg.graph.copying import emotion_copy
from novaberg.graph.personality import InternalPersonality
from novaberg.graph.state import ConversationState

GATE_OWN_THOUGHT: Final = "eigener_gedanke"
GATE_OPEN: Final = "offen"
"""pipeline_log values: the origin gate kept the points from pulling (module docstring), or
let them pull."""


def short_term_cosine(similarity: object) -> float | None:
    """A short-term hit carries its similarity as (1 + cos) / 2; the pull uses cos."""
    if not isinstance(similarity, int | float) or isinstance(similarity, bool):
        return None
    value = 2.0 * float(similarity) - 1.0
    return value if math.isfinite(value) else None


def gravity_points(
    short_term: Iterable[Mapping[str, Any]],
    long_term: Iterable[Mapping[str, Any]],
    now: float,
) -> list[dict[str, Any]]:
    """The turn's gravity points from the enricher's memory read.

    `short_term`: ContextEntry dicts of the short-term hits (salience in `gewicht`, the
    rest in `meta`); `long_term`: the spreading read's memories (`Memory.as_dict`), of which
    only those with a cosine to the turn (the nearest nodes) can pull."""
    points: list[dict[str, Any] | None] = []
    for hit in short_term:
        meta = dict(hit.get("meta") or {})
        cos = short_term_cosine(meta.get("similarity"))
        if cos is None:
            continue
        entry = {**meta, "salienz": hit.get("gewicht"), "inhalt": hit.get("inhalt", "")}
        points.append(short_term_point(entry, cos, now))
    for memory in long_term:
        cos = memory.get("cosine")
        if not isinstance(cos, int | float) or isinstance(cos, bool):
            continue
        points.append(long_term_point(memory, float(cos), now))
    return select_gravity_points(points)


async def emotional_gravitation(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Apply the collected points to Nova's history and emotion."""
    points = list(state.get("gravitation_points") or [])
    history = list(state.get("nova_emotion_history") or [])
    if not points:
        return {"_log": {"punkte": 0}}
    if stimulus_is_own_thought(state):  # the origin gate (module docstring)
        return {"_log": {"punkte": len(points), "tor": GATE_OWN_THOUGHT}}
    pulled = apply_gravity(history, points)
    internal = emotion_copy(state.get("internal") or InternalPersonality())
    before = (internal.emotion.emotion, internal.emotion.arousal)
    emotion, arousal = transfer_dominant(pulled, internal.emotion.emotion, internal.emotion.arousal)
    internal.emotion.emotion = emotion
    internal.emotion.arousal = arousal
    return {
        "internal": internal,
        "nova_emotion_history": pulled,
        "_log": {
            "punkte": len(points),
            "tor": GATE_OPEN,
            "quellen": [point.get("quelle") for point in points],
            "vorher": list(before),
            "nachher": [emotion, arousal],
        },
    }
