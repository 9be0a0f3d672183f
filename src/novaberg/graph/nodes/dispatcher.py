"""Dispatcher (seed 002 §3.5, spec pipeline §2/§5): the central writer at the end of a run.

- Writes the **complete** session turn once (the only writer of `session:{u}:{c}:turns`):
  an assistant turn from `internal.emotion` when `response` is set, else a user turn from
  `external.emotion` with `inhalt = user_prompt` (nothing on an impulse, which has no user
  prompt). Never in the AgentGraph. The turn carries the spec §2 fields plus `turn_id` and
  `nachrichten_ids`.
- Hands the run's PendingWrites on (`hand_over_writes`). Until the memory work lands this
  records each one in `pending_writes_log` with ergebnis "offen"; the memory developer
  replaces that one call with the short-term-memory hand-over.

Unlike the seed's code (spec pipeline §5: "without pending_writes no session turn"), the
turn is written whether or not salience produced writes: a failed salience must not erase
what was said from the conversation.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from psycopg.types.json import Jsonb

from novaberg.agents.markers import session_marker
from novaberg.graph.contract import GraphDeps
from novaberg.graph.personality import Emotion, InternalPersonality, Personality
from novaberg.graph.reiz import stimulus_origin
from novaberg.graph.state import ConversationState, PendingWrite
from novaberg.memory.bridge import observer_for, store_kzg_writes, summarise_session
from novaberg.store.keys import Pair
from novaberg.store.session import ROLE_ASSISTANT, ROLE_USER, append_turn

log = logging.getLogger(__name__)

GRAPH_AGENT: Final = "agent"
WRITE_OPEN: Final = "offen"
"""pending_writes_log.ergebnis of a write nobody carried out yet."""

_PENDING_SQL: Final = (
    "INSERT INTO pending_writes_log (turn_id, user_id, character_id, quelle, ziel, aktion,"
    " daten, beschreibung, ergebnis) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
)


def _emotion_fields(emotion: Emotion) -> dict[str, Any]:
    return {
        "emotion": emotion.emotion,
        "arousal": emotion.arousal,
        "modus": emotion.mode,
        "emotions_vektor": emotion.emotions_vector,
        "sprach_stil": emotion.language_style,
        "beziehungs_dynamik": emotion.relationship_dynamic,
        "tone": emotion.tone,
    }


def build_session_turn(state: ConversationState, now: float) -> dict[str, Any] | None:
    """The complete session turn of this run (spec pipeline §2), or None if none is due."""
    if state.get("graph_rolle") == GRAPH_AGENT:
        return None
    common = {
        "zeit": now,
        "intentionen": list(state.get("user_intentionen") or []),
        "kern": state.get("session_turn_kern") or "",
        "herkunft": stimulus_origin(state),
        "turn_id": state.get("turn_id"),
        "nachrichten_ids": list(state.get("nachrichten_ids") or []),
    }
    response = state.get("response") or ""
    if response.strip():
        internal = state.get("internal") or InternalPersonality()
        turn = {
            "rolle": ROLE_ASSISTANT,
            "inhalt": response,
            **_emotion_fields(internal.emotion),
            **common,
        }
        marker = session_marker(state.get("agent_results"))
        if marker:
            turn["marker"] = marker  # shown on the user line this turn answered
        return turn
    prompt = state.get("user_prompt") or ""
    if not prompt.strip():
        return None  # an impulse without an answer: nothing was said
    external = state.get("external") or Personality()
    topic = external.emotion.prompt_topic
    return {
        "rolle": ROLE_USER,
        "inhalt": prompt,
        **_emotion_fields(external.emotion),
        **common,
        "themen": [topic] if topic else [],
        "embedding": state.get("prompt_embedding"),
    }


async def record_pending_writes(
    state: ConversationState,
    deps: GraphDeps,
    writes: list[PendingWrite],
    results: list[str] | None = None,
) -> int:
    """Record every write in pending_writes_log with what became of it."""
    if not writes:
        return 0
    outcomes = list(results or [])
    rows = [
        (
            state.get("turn_id"),
            state["user_id"],
            state["character_id"],
            state.get("graph_rolle", ""),
            write["ziel"],
            write["aktion"],
            Jsonb(write["daten"]),
            write.get("beschreibung", ""),
            outcomes[index] if index < len(outcomes) else WRITE_OPEN,
        )
        for index, write in enumerate(writes)
    ]
    async with deps.pool.connection() as conn, conn.cursor() as cur:
        await cur.executemany(_PENDING_SQL, rows)
    return len(rows)


async def hand_over_writes(
    state: ConversationState, deps: GraphDeps, writes: list[PendingWrite]
) -> tuple[str, dict[str, Any]]:
    """THE hand-over point for PendingWrites: `kzg` writes go to short-term memory.

    Returns the kern of the strongest stored entry (for the session turn) and a
    summary for the node log; every write is recorded with its outcome.
    """
    if not writes:
        return "", {"aufgezeichnet": 0, "ziele": []}
    pair = Pair(state["user_id"], state["character_id"])
    outcome = await store_kzg_writes(
        deps.redis,
        deps.pool,
        deps.model,
        pair,
        writes,
        observer=observer_for(state.get("ei_calc_rolle", "user")),
        turn_id=state.get("turn_id"),
        perception=None,
        timeline_id=state.get("timeline_id"),
        clock=deps.clock,
        pipeline_log=deps.log,
        promotions=deps.settings.pixie,
    )
    recorded = await record_pending_writes(state, deps, writes, outcome.results)
    summary = {
        "aufgezeichnet": recorded,
        "ziele": sorted({w["ziel"] for w in writes}),
        **outcome.summary(),
    }
    return outcome.session_turn_kern, summary


async def dispatcher(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Store the run's memories, then write the session turn (once, complete)."""
    summary: dict[str, Any] = {}
    update: dict[str, Any] = {}
    pair = Pair(state["user_id"], state["character_id"])

    writes = list(state.get("pending_writes") or [])
    kern, summary["pending_writes"] = await hand_over_writes(state, deps, writes)
    if kern:
        update["session_turn_kern"] = kern
    turn_state = {**state, **update}

    turn = (
        None
        if state.get("session_turn_geschrieben")
        else build_session_turn(turn_state, deps.clock())  # type: ignore[arg-type]
    )
    if turn is not None:
        length = await append_turn(deps.redis, pair, turn)
        update["session_turn_geschrieben"] = True
        summary["session_turn"] = {"rolle": turn["rolle"], "laenge": length}
        summarised = await summarise_session(deps.redis, deps.model, pair)
        if summarised is not None:
            summary["session_zusammenfassung"] = str(summarised.action)
    else:
        summary["session_turn"] = None
    return {**update, "_log": summary}
