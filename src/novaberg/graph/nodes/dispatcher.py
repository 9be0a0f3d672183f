"""Dispatcher: the central writer at the end of a run (docs/behaviour/nodes.md#dispatcher).

- Writes the **complete** session turn once (the only writer of `session:{u}:{c}:turns`):
  an assistant turn from `internal.emotion` when `response` is set, else a user turn from
  `external.emotion` with `inhalt = user_prompt` (nothing on an impulse, which has no user
  prompt). Never in the AgentGraph. The turn's fields are in docs/behaviour/memory.md#session.
- Hands the run's PendingWrites on (`store_writes`): `kzg` writes go to short-term memory,
  salience's `timeline` writes become day anchors the memories of their segment link to;
  every write is recorded in `pending_writes_log` with what became of it
  (`memory/run_log.py`).
- Records an answered turn raw (`turn_roh` in pipeline_log, kept forever).
- Stores the conversation vector's trace of an answered CharacterGraph turn
  (`gv:detail`, `gv:vorturn`; `memory/pair_state.py`).
- Archives the session turn (`gespraechsarchiv`, memory/archive.py): the user's block with
  the enricher's vector, the answer embedded here. The row is written on its own
  connection as soon as it is built, while the memory writes run: the archive's indexes
  cost the server about a millisecond a row, which would otherwise be waited for with
  nothing else to do. A failed archive write is logged in the node's row (`archiv`), never
  fatal: the conversation goes on without it.
- Writes the drive snapshot `drive:short_term:{u}:{c}` after every CharacterGraph run
  (`{conversation_vector, activated_goals, gravity_term, timestamp}`, goals without their
  vectors): the goal panel's view of the last turn.
- Runs the delegation trigger (graph/nodes/delegation.py): shadow tasks for Pixie.
- Plans Nova's second message (graph/follow_up.py): a commitment, pressure or an open
  thread sets `self_trigger`, which the event consumer turns into a `continue` event.
- Settles Nova's offer (graph/offer_chain.py): binds the one the released answer made,
  else closes the one the turn found open.

The turn is written whether or not salience produced writes, and also when storing them in
short-term memory failed (they are then logged as `fehlgeschlagen`, data included): a
failed memory write must not erase what was said from the conversation.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final, cast

from novaberg.agents.deps import GraphDeps
from novaberg.agents.markers import session_marker
from novaberg.agents.stimulus import stimulus_is_own_thought, stimulus_origin, stimulus_text
from novaberg.graph.follow_up import follow_up_channels
from novaberg.graph.nodes.delegation import delegate, momentum_to_keep
from novaberg.graph.offer_chain import settle_offer
from novaberg.graph.personality import Emotion, InternalPersonality, Personality
from novaberg.graph.state import ConversationState, PendingWrite
from novaberg.memory import run_log, session_turns
from novaberg.memory.archive import archive_session_turn
from novaberg.memory.bridge import (
    ShortTermWriteOutcome,
    observer_for,
    store_short_term_writes,
    summarise_session,
)
from novaberg.memory.pair_state import write_run_trace
from novaberg.pair import Pair
from novaberg.wire import (
    EI_ROLE_USER,
    FIELD_MESSAGE_IDS,
    GRAPH_AGENT,
    GRAPH_CHARACTER,
    ROLE_ASSISTANT,
    ROLE_USER,
)

log = logging.getLogger(__name__)

WRITE_FAILED: Final = "fehlgeschlagen"
"""pending_writes_log.ergebnis when storing failed; the row keeps the write's data."""


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
    """The complete session turn of this run, or None if none is due."""
    if state.get("graph_role") == GRAPH_AGENT:
        return None
    common = {
        "zeit": now,
        "intentionen": list(state.get("user_intentions") or []),
        "kern": state.get("session_turn_core") or "",
        "herkunft": stimulus_origin(state),
        "turn_id": state.get("turn_id"),
        FIELD_MESSAGE_IDS: list(state.get("message_ids") or []),
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
    links: list[str] | None = None,
) -> int:
    """Record every write in pending_writes_log with what became of it, with this turn's
    `verbindung` rows (`memory/run_log.py`: one round trip). Returns the rows logged."""
    return await run_log.record_pending_writes(
        deps.pool,
        turn_id=state.get("turn_id"),
        user_id=state["user_id"],
        character_id=state["character_id"],
        source=state.get("graph_role", ""),
        writes=writes,
        results=results or [],
        links=links or [],
    )


async def store_writes(
    state: ConversationState, deps: GraphDeps, writes: list[PendingWrite]
) -> ShortTermWriteOutcome:
    """THE hand-over point for PendingWrites: `kzg` writes go to short-term memory, linked to
    the day anchor of their segment's `timeline` write (or to the row a task agent wrote). An
    AgentGraph run stores its thought once per turn id (`impuls-{entry}`): a thought formed
    again (after a crash, or after the user wrote first) finds its memory and adds none."""
    if not writes:
        return ShortTermWriteOutcome()
    return await store_short_term_writes(
        deps.redis,
        deps.pool,
        deps.model,
        Pair(state["user_id"], state["character_id"]),
        writes,
        observer=observer_for(state.get("ei_calc_role", EI_ROLE_USER)),
        turn_id=state.get("turn_id"),
        perception=None,
        timeline_id=state.get("timeline_id"),
        clock=deps.clock,
        pipeline_log=deps.log,
        promotions=deps.settings.pixie,
        link_turns=False,  # written with the pending-writes log, one round trip
        once_per_turn=state.get("graph_role") == GRAPH_AGENT,
        tz=deps.settings.tz,
    )


async def write_session_turn(
    turn: dict[str, Any] | None, deps: GraphDeps, pair: Pair
) -> dict[str, Any] | None:
    """Append the run's session turn once and summarise the session if it grew too long."""
    if turn is None:
        return None
    length = await session_turns.append(deps.redis, pair, turn)
    summary: dict[str, Any] = {"rolle": turn["rolle"], "laenge": length}
    summarised = await summarise_session(deps.redis, deps.model, pair, length=length)
    if summarised is not None:
        summary["zusammenfassung"] = str(summarised.action)
    return summary


def drive_snapshot(state: ConversationState, now: float) -> dict[str, Any]:
    """The goal panel's snapshot of this run (pure): the counterpart's emotion vector,
    the activated goals without embeddings and the gravitation term."""
    external = state.get("external") or Personality()
    goals = [
        {key: value for key, value in goal.items() if key != "embedding"}
        for goal in state.get("activated_goals") or []
    ]
    return {
        "conversation_vector": external.emotion.emotions_vector,
        "activated_goals": goals,
        "gravity_term": float(state.get("gravitation_term") or 0.0),
        "timestamp": now,
    }


async def complete_open_turn(
    state: ConversationState, deps: GraphDeps, pair: Pair
) -> dict[str, Any]:
    """The user turn the HumanGraph stored early (nodes/session_turn.py): set its two late
    fields — `intentionen` (salience's) and `kern` (condensing's) — in place and summarise
    the session. Returns the log summary."""
    late = {
        "intentionen": list(state.get("user_intentions") or []),
        "kern": state.get("session_turn_core") or "",
    }
    stored, length = await session_turns.complete(
        deps.redis, pair, str(state.get("turn_id")), ROLE_USER, late
    )
    if stored is None:
        log.error(
            "dispatcher: the stored user turn of %s is gone; intentionen/kern not set",
            state.get("turn_id"),
        )
    summary: dict[str, Any] = {"rolle": ROLE_USER, "vervollstaendigt": stored is not None}
    summarised = await summarise_session(deps.redis, deps.model, pair, length=length)
    if summarised is not None:
        summary["zusammenfassung"] = str(summarised.action)
    return summary


def stored_open_turn(state: ConversationState) -> dict[str, Any] | None:
    """The user turn as `session_turn` stored it, rebuilt from the state: the same builder
    at the same time (`session_turn_time`). The fields it lacks then, `intentionen` and
    `kern`, are not archived, so the archive row can be built before the turn is completed."""
    return build_session_turn(state, float(state["session_turn_time"]))


def record_raw_turn(state: ConversationState, deps: GraphDeps) -> None:
    """The `turn_roh` row of an answered turn: stimulus, answer, both emotions, origin
    and the composer's content when there was one, kept forever when the rest of pipeline_log ages out."""
    response = state.get("response") or ""
    if not response.strip() or deps.log is None:
        return
    external = state.get("external") or Personality()
    internal = state.get("internal") or InternalPersonality()
    raw: dict[str, Any] = {
        "user_prompt": stimulus_text(state),
        "response": response,
        "user_emotion": external.emotion.to_dict(),
        "nova_emotion": internal.emotion.to_dict(),
        "herkunft": stimulus_origin(state),
    }
    if state.get("response_content"):
        raw["antwort_inhalt"] = state.get("response_content")
    if isinstance(state.get("received_at"), int | float):  # which chat it belongs to
        raw["empfangen_am"] = state.get("received_at")
    raw.update(turn_record(state))
    run_log.record_raw_turn(
        deps.log,
        graph=str(state.get("graph_role") or GRAPH_CHARACTER),
        node="dispatcher",
        turn_id=state.get("turn_id"),
        user_id=state["user_id"],
        character_id=state["character_id"],
        content=raw,
    )


def turn_record(state: ConversationState) -> dict[str, Any]:
    """What the raw turn keeps besides the words, so a turn can still say afterwards how it
    went (docs/behaviour/nodes.md#dispatcher): what the memory was searched with and where
    that text came from, how an impulse's arousal was applied, and which judgement failed
    — a failure stays a failure in the record, never a silent default. Only what the run
    set."""
    record: dict[str, Any] = {}
    if state.get("search_text_source"):
        record["suchtext"] = state.get("search_text") or ""
        record["suchtext_herkunft"] = state.get("search_text_source")
    if stimulus_is_own_thought(state) and state.get("thought_level"):
        record["gedanke_level"] = state.get("thought_level")
    failures = {
        "router": state.get("router_failure"),
        "tribunal": list(state.get("tribunal_failures") or []) or None,
        "pfad1_nachlauf": state.get("human_tail_failure"),
    }
    failed = {name: failure for name, failure in failures.items() if failure}
    if failed:
        record["ausfaelle"] = failed
    return record


async def _side_writes(state: ConversationState, deps: GraphDeps, pair: Pair) -> list[str]:
    """The writes that need nothing the memory writes produce — the drive snapshot, the
    conversation vector's trace and the momentum, all of a CharacterGraph run only (other
    graphs have no vector) — in one round trip. Returns the trace's keys; a failure is
    raised once every write has been tried."""
    if state.get("graph_role") != GRAPH_CHARACTER:
        return []
    internal = state.get("internal")
    return await write_run_trace(
        deps.redis,
        pair,
        drive_snapshot=drive_snapshot(state, deps.clock()),
        detail=state.get("hypothesis_detail"),
        answer=state.get("response"),
        mode=internal.emotion.mode if isinstance(internal, InternalPersonality) else "",
        momentum=momentum_to_keep(state),
    )


async def dispatcher(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Store the run's memories, then write the session turn (once, complete).

    What does not depend on the memory writes (the snapshot, the trace and the turn's
    archive row — its embedding and its insert; the row does not carry the `kern`) runs
    alongside them: the node costs its longest chain of round trips, not their sum. The
    delegation trigger runs last, once the turn is in the session."""
    pair = Pair(state["user_id"], state["character_id"])
    side = asyncio.ensure_future(_side_writes(state, deps, pair))
    opened = bool(state.get("session_turn_open"))
    turn: dict[str, Any] | None = None
    if opened:  # stored early by the HumanGraph: archived as stored
        archived_turn = stored_open_turn(state)
    else:
        if not state.get("session_turn_written"):
            # built now; the kern of the memory writes below is filled in before it is written
            turn = build_session_turn(state, deps.clock())
        archived_turn = turn
    archiving = asyncio.ensure_future(  # embeds meanwhile, written on its own connection
        archive_session_turn(
            deps.pool, deps.model, pair, archived_turn, int(state.get("trigger_count") or 0)
        )
    )
    try:
        update = await _store_and_write(
            state, deps, pair, side, turn, opened, archiving, archived_turn is not None
        )
    except BaseException:
        started = [job for job in (side, archiving) if not job.done()]
        if started:  # never leave a write running behind a failed or cancelled node
            await asyncio.wait(started)
        raise
    offer = await settle_offer(state, deps)
    if offer:
        update["_log"]["angebot"] = offer
    return update


async def _session_then_delegate(
    state: ConversationState, deps: GraphDeps, pair: Pair, turn: dict[str, Any] | None
) -> tuple[dict[str, Any] | None, list[tuple[int, str]] | None]:
    """Write the session turn, then run the delegation trigger (its tasks may read the
    session); the trigger is skipped when the write failed (it raises)."""
    written = await write_session_turn(turn, deps, pair)
    return written, await delegate(state, deps)


async def _store_and_write(
    state: ConversationState,
    deps: GraphDeps,
    pair: Pair,
    side: asyncio.Future[list[str]],
    turn: dict[str, Any] | None,
    opened: bool,
    archiving: asyncio.Future[int | BaseException | None],
    has_row: bool,
) -> dict[str, Any]:
    """The dispatcher's memory writes, then the write log and the session write, joined
    with the side writes and the archive row."""
    update: dict[str, Any] = {}

    writes = list(state.get("pending_writes") or [])
    try:
        outcome = await store_writes(state, deps, writes)
    except Exception:  # what was said stays in the conversation; the writes stay in the log
        log.exception(
            "dispatcher: short-term memory writes of turn %s failed; recorded as %r, "
            "the session turn is written anyway",
            state.get("turn_id"),
            WRITE_FAILED,
        )
        outcome = ShortTermWriteOutcome(results=[WRITE_FAILED] * len(writes))
    if outcome.session_turn_kern:
        update["session_turn_core"] = outcome.session_turn_kern
        if turn is not None:
            turn["kern"] = outcome.session_turn_kern
    links = [entry.key for entry in outcome.stored]
    # the write log, the session and the side writes are independent: all round trips at
    # once, and a failure of one is raised only once the others have finished
    recording = record_pending_writes(state, deps, writes, outcome.results, links)
    written: Any
    if opened:  # stored early by the HumanGraph: complete it; delegated below
        merged = cast(ConversationState, {**state, **update})
        recorded, written, sides, archived = await asyncio.gather(
            recording,
            complete_open_turn(merged, deps, pair),
            side,
            archiving,
            return_exceptions=True,
        )
        shadow_tasks = None
    else:
        recorded, session, sides, archived = await asyncio.gather(
            recording,
            _session_then_delegate(state, deps, pair, turn),
            side,
            archiving,
            return_exceptions=True,
        )
        written, shadow_tasks = (session, None) if isinstance(session, BaseException) else session
    for result in (recorded, written, sides):
        if isinstance(result, BaseException):
            raise result
    if isinstance(archived, BaseException):
        log.error("dispatcher: turn %s not archived: %s", state.get("turn_id"), archived)
    session_turn = cast(dict[str, Any] | None, written)
    trace = cast(list[str], sides)
    if session_turn is not None:
        update["session_turn_written"] = True
        update["session_turn_open"] = False
        record_raw_turn(state, deps)
    summary: dict[str, Any] = {
        "pending_writes": (
            {
                "aufgezeichnet": recorded,
                "ziele": sorted({w["target"] for w in writes}),
                **outcome.summary(),
            }
            if writes
            else {"aufgezeichnet": 0, "ziele": []}
        ),
        "session_turn": session_turn,
        "gv": trace,
        "archiv": (
            "fehlgeschlagen"
            if isinstance(archived, BaseException)
            else ("vorhanden" if archived is None and has_row else archived)
        ),
    }
    if session_turn is not None and "zusammenfassung" in session_turn:
        summary["session_zusammenfassung"] = session_turn.pop("zusammenfassung")
    if shadow_tasks is None:
        shadow_tasks = await delegate(state, deps)
    if shadow_tasks:
        summary["shadow_auftrag"] = [{"id": i, "push": how} for i, how in shadow_tasks]
    # Nova's second message (graph/follow_up.py)
    follow_up, planned = follow_up_channels(state, enabled=deps.settings.follow_ups)
    if planned is not None:
        summary["nachfrage"] = planned
    return {**update, **follow_up, "_log": summary}
