"""Imprint (Prägung): the thread gate of the imprint layer, after salience
(docs/behaviour/nodes.md#imprint).

A *thread* (`praegung_faden`) is a topic that moved the character: its strength grows
each time a turn about it passes the gate. The gate has two conditions, both on the
character's own answer of this turn:

- the **effective salience** of the answer (computed by the salience node, hence this
  position after it) is at least `SALIENCE_GATE`, and
- the character was **moved** by it: her arousal after the answer is at least
  `AROUSAL_GATE`.

An open gate adds `salienz × arousal` to the topic's thread (capped at `MAX_STRENGTH`) and
counts the turn. Every check is logged, the refused ones too (`schritt: praegung_tor` in
the node's pipeline_log row). No model call; it runs after the answer was released.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.ei.canon import parse_number
from novaberg.graph.personality import InternalPersonality
from novaberg.graph.state import ConversationState
from novaberg.memory.imprint import strengthen_thread
from novaberg.pair import Pair

SALIENCE_GATE: Final = 0.6
AROUSAL_GATE: Final = 0.5
MAX_STRENGTH: Final = 10.0
STEP: Final = "praegung_tor"


@dataclass(frozen=True, slots=True)
class GateCheck:
    """One check of the thread gate (what the log row carries)."""

    topic: str
    salience: float | None
    arousal: float
    open: bool
    reason: str  # "offen" | "keine_salienz" | "salienz_zu_niedrig" | "nicht_bewegt" | "kein_thema"

    @property
    def increment(self) -> float:
        return round((self.salience or 0.0) * self.arousal, 4) if self.open else 0.0


def strongest_write(state: ConversationState) -> dict[str, Any] | None:
    """The salience object of the answer's most salient kzg write, if any."""
    best: dict[str, Any] | None = None
    for write in state.get("pending_writes") or []:
        if write.get("target") != "kzg":
            continue
        obj = (write.get("data") or {}).get("salienz_obj") or {}
        value = parse_number(obj.get("salienz"))
        if value is not None and (best is None or value > (parse_number(best["salienz"]) or 0)):
            best = obj
    return best


def topic_of(obj: dict[str, Any] | None) -> str:
    """The thread's topic: the first theme, else the segment's short topic; normalised."""
    if not obj:
        return ""
    themes = [str(t).strip() for t in obj.get("themen") or [] if str(t).strip()]
    raw = themes[0] if themes else str(obj.get("thema_kurz") or "").strip()
    return " ".join(raw.lower().split())


def check_gate(state: ConversationState) -> GateCheck:
    """The gate's verdict for this turn (pure)."""
    internal = state.get("internal") or InternalPersonality()
    arousal = float(internal.emotion.arousal)
    obj = strongest_write(state)
    salience = parse_number(obj.get("salienz")) if obj else None
    topic = topic_of(obj)
    if salience is None:
        return GateCheck(topic, None, arousal, False, "keine_salienz")
    if salience < SALIENCE_GATE:
        return GateCheck(topic, salience, arousal, False, "salienz_zu_niedrig")
    if arousal < AROUSAL_GATE:
        return GateCheck(topic, salience, arousal, False, "nicht_bewegt")
    if not topic:
        return GateCheck(topic, salience, arousal, False, "kein_thema")
    return GateCheck(topic, salience, arousal, True, "offen")


async def imprint(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Check the thread gate; on an open gate strengthen the topic's thread."""
    check = check_gate(state)
    summary: dict[str, Any] = {
        "schritt": STEP,
        "thema": check.topic,
        "salienz": check.salience,
        "arousal": round(check.arousal, 3),
        "offen": check.open,
        "grund": check.reason,
    }
    if check.open:
        thread = await strengthen_thread(
            deps.pool,
            Pair(state["user_id"], state["character_id"]),
            check.topic,
            check.increment,
            MAX_STRENGTH,
            state.get("turn_id"),
        )
        if thread is not None:
            summary.update(staerke=round(thread.strength, 4), anzahl=thread.count)
    return {"_log": summary}
