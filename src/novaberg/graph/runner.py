"""`GraphRuntime`: builds the graphs once and implements `contract.TurnGraphs`.

Callers (prompt consumer, event consumer, CLI, bench) build a turn's initial state here,
stream the graph node by node — `(node, full_state_after_node)` — and read the wire
payloads out of the resulting state. `run_turn_inprocess` runs HumanGraph then
CharacterGraph back to back without queues (the `novaberg turn` command and the bench).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, Final, get_origin, get_type_hints

from novaberg.agents.questions import awaited_answer
from novaberg.agents.receipts import stored_changes
from novaberg.agents.stimulus import stimulus_origin
from novaberg.graph.agent_graph import build_agent_graph
from novaberg.graph.character_graph import MAX_CORRECTIONS, build_character_graph
from novaberg.graph.contract import (
    HUMAN_EVENT_NODE,
    HUMAN_TAIL_NODE,
    CharacterTurn,
    GraphDeps,
    HumanTurn,
    release_ready,
)
from novaberg.graph.human_graph import build_human_graph
from novaberg.graph.personality import InternalPersonality, Personality
from novaberg.graph.roles import CHARACTER_ROLES, HUMAN_ROLES
from novaberg.graph.state import ConversationState
from novaberg.memory.pair_state import publish_path1_tail
from novaberg.pair import Pair
from novaberg.wire import (
    FIELD_AWAITING,
    FIELD_CHANGES,
    FIELD_EMOTION_HISTORY,
    FIELD_HUMAN_SALIENCE,
    FIELD_LAST_RECEIVED,
    FIELD_MESSAGE_IDS,
    FIELD_ORIGIN,
    FIELD_OWN_THOUGHT,
    FIELD_PATH1_FAILURE,
    FIELD_PATH1_TAIL,
    FIELD_RECEIVED_AT,
    FIELD_SITUATION_READING,
    FIELD_SUPERSEDED,
    FIELD_TRIGGER_TURN_ID,
    FIELD_TURN_ID,
    FIELD_USER_INTENTIONS,
    FIELD_USER_PROMPT,
    GRAPH_CHARACTER,
    GRAPH_HUMAN,
    ORIGIN_OWN_THOUGHT,
    ORIGIN_USER,
    SOURCE_CHARACTER,
    SOURCE_USER,
)

log = logging.getLogger(__name__)

StageCallback = Callable[[str, str, dict[str, Any], float], Awaitable[None] | None]
"""on_stage(graph, node, state_after_node, duration_ms)."""

HumanNodeCallback = Callable[[str, dict[str, Any]], Awaitable[None]]
"""on_node(node, state_after_node) during a HumanGraph run."""
HumanEventCallback = Callable[[dict[str, Any] | None, str | None], Awaitable[None]]
"""on_event(state, failure): hand the turn on (called exactly once per run)."""
FailureText = Callable[[BaseException, str], str]
"""failure_text(exc, last_node): how a Path 1 failure is named in `pfad1_ausfall`."""


def _fresh_channels() -> dict[str, Any]:
    return {"pending_writes": [], "node_annotations": [], "node_timings": {}}


def _reducers() -> dict[str, Callable[[Any, Any], Any]]:
    """Channel → reducer for the channels declared with one (Annotated[..., reducer])."""
    hints = get_type_hints(ConversationState, include_extras=True)
    found: dict[str, Callable[[Any, Any], Any]] = {}
    for name, hint in hints.items():
        if get_origin(hint) is Annotated:
            reducer = hint.__metadata__[-1]
            if callable(reducer):
                found[name] = reducer
    return found


_REDUCERS: Final = _reducers()


def merge_update(state: dict[str, Any], update: dict[str, Any] | None) -> None:
    """Apply one node's update to `state` the way LangGraph's channels do."""
    for key, value in (update or {}).items():
        reducer = _REDUCERS.get(key)
        state[key] = reducer(state.get(key), value) if reducer else value


async def _stream(compiled: Any, state: dict[str, Any]) -> AsyncIterator[tuple[str, dict]]:
    """Yield (node, state after that node) for every node run.

    Streams only the per-node updates and folds them into a local copy of the state with
    the channels' own reducers: the "values" stream mode would make LangGraph read every
    channel after every step, which costs more than most nodes do.
    """
    current = dict(state)
    async for chunk in compiled.astream(state, stream_mode="updates"):
        for name, update in chunk.items():
            if name.startswith("__"):
                continue
            merge_update(current, update)
            yield name, dict(current)


class GraphRuntime:
    """Compiled HumanGraph and CharacterGraph with the state/payload helpers around them."""

    def __init__(self, deps: GraphDeps, registry: Any = None) -> None:
        self.deps = deps
        self.registry = registry
        self._human: Any = None
        self._character: Any = None
        self._agent: Any = None

    # --- graphs ------------------------------------------------------------------------

    @property
    def human_graph(self) -> Any:
        if self._human is None:
            self._human = build_human_graph(self.deps)
        return self._human

    @property
    def character_graph(self) -> Any:
        if self._character is None:
            self._character = build_character_graph(self.deps, self.registry)
        return self._character

    @property
    def agent_graph(self) -> Any:
        """The AgentGraph (an own thought arising; the reminder loop runs it)."""
        if self._agent is None:
            self._agent = build_agent_graph(self.deps)
        return self._agent

    def compile(self) -> GraphRuntime:
        """Build every graph and agent subgraph now: a server process does this at startup,
        so its first turn does not pay for it and the graphs are part of the heap it
        freezes."""
        _ = self.human_graph, self.character_graph, self.agent_graph
        if self.registry is not None:
            for agent in self.registry.all().values():
                agent.compiled(self.deps)
        return self

    # --- HumanGraph ----------------------------------------------------------------------

    def human_state(self, turn: HumanTurn) -> dict[str, Any]:
        """Initial HumanGraph state for one block of user utterances."""
        return {
            "user_id": turn.pair.user_id,
            "character_id": turn.pair.character_id,
            "turn_id": turn.turn_id,
            "message_ids": list(turn.message_ids),
            "user_prompt": turn.prompt,
            "own_thought": "",
            "received_at": turn.received_at,
            "event_source": SOURCE_USER,
            "event_payload": {
                FIELD_ORIGIN: ORIGIN_USER,
                FIELD_TURN_ID: turn.turn_id,
                FIELD_RECEIVED_AT: turn.received_at,
                FIELD_MESSAGE_IDS: list(turn.message_ids),
            },
            "trigger_count": 0,
            **HUMAN_ROLES,
            "external": Personality(),
            "internal": InternalPersonality(),
            **_fresh_channels(),
        }

    def stream_human(self, state: dict[str, Any]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        return _stream(self.human_graph, state)

    async def run_human(
        self,
        turn: HumanTurn,
        on_node: HumanNodeCallback,
        on_event: HumanEventCallback,
        failure_text: FailureText,
    ) -> dict[str, Any] | None:
        """Run the HumanGraph for `turn`, handing the turn on as early as it can
        (docs/behaviour/graphs.md#human-graph).

        `on_event(state, failure)` is called exactly once: right after `HUMAN_EVENT_NODE`
        (the user's turn is stored), or — when the graph fails before it — with the
        failure text. The rest of the graph runs after it; after `HUMAN_TAIL_NODE` its
        salience results are published for the CharacterGraph's enricher (a
        failure before that publishes the failure, so nobody waits in vain). A failure
        after the hand-over is logged and returned as part of nothing: the turn already
        has its event. Exceptions of the callbacks propagate. Returns the last state."""
        state: dict[str, Any] | None = self.human_state(turn)
        handed_on = published = False
        last_node = "start"
        try:
            async for node, after in self.stream_human(state or {}):
                state, last_node = after, node
                await on_node(node, after)
                if node == HUMAN_EVENT_NODE:
                    handed_on = True
                    await on_event(after, None)
                elif node == HUMAN_TAIL_NODE and handed_on:
                    published = True
                    await publish_path1_tail(self.deps.redis, turn.turn_id, tail_result(after))
        except Exception as exc:
            failure = failure_text(exc, last_node)
            if not handed_on:
                log.warning("path 1 of turn %s failed: %s", turn.turn_id, failure, exc_info=True)
                await on_event(state, failure)
                return state
            log.error(
                "path 1 of turn %s failed after its event left (%s); the turn keeps its answer",
                turn.turn_id,
                failure,
                exc_info=True,
            )
            if not published:
                await publish_path1_tail(
                    self.deps.redis, turn.turn_id, {**tail_result(state or {}), "ausfall": failure}
                )
            return state
        if not handed_on:  # a table without the event node: hand on at the end
            await on_event(state, None)
        return state

    def human_event_payload(
        self, turn: HumanTurn, final_state: dict[str, Any] | None, failure: str | None
    ) -> dict[str, Any]:
        """The `message` event payload, complete, also after a failure
        (docs/behaviour/events.md#user-payload): the prompt consumer enqueues it as it is.
        It names every id the turn answers (`turn.answered_ids`: a superseded run's first)."""
        state = final_state or {}
        external = state.get("external")
        emotion = external.emotion if isinstance(external, Personality) else None
        tail_follows = bool(state.get("session_turn_open")) and not failure
        payload: dict[str, Any] = {
            FIELD_TURN_ID: turn.turn_id,
            FIELD_RECEIVED_AT: turn.received_at,
            FIELD_USER_PROMPT: turn.prompt,
            FIELD_ORIGIN: ORIGIN_USER,
            FIELD_HUMAN_SALIENCE: state.get("human_salience"),
            "current_emotion": emotion.emotion if emotion else None,
            "current_arousal": emotion.arousal if emotion else None,
            "gespraechs_modus": emotion.mode if emotion else None,
            "intent": emotion.intent if emotion else None,
            "tone": emotion.tone if emotion else None,
            "sprach_stil": emotion.language_style if emotion else None,
            "beziehungs_dynamik": emotion.relationship_dynamic if emotion else None,
            "emotions_vektor": emotion.emotions_vector if emotion else None,
            "prompt_thema": emotion.prompt_topic if emotion else None,
            FIELD_EMOTION_HISTORY: list(state.get("emotion_history") or []),
            FIELD_MESSAGE_IDS: turn.answered_ids,
        }
        if state.get("situation_reading"):  # the situation node writes it forward
            payload[FIELD_SITUATION_READING] = state["situation_reading"]
        if tail_follows:  # salience runs on: its results reach the CharacterGraph later
            payload[FIELD_PATH1_TAIL] = True
        else:
            payload[FIELD_USER_INTENTIONS] = list(state.get("user_intentions") or [])
        if failure is not None:
            payload[FIELD_PATH1_FAILURE] = failure
        if turn.last_received_at is not None:  # the supersede rule's block window
            payload[FIELD_LAST_RECEIVED] = turn.last_received_at
        if turn.superseded_runs:  # the supersede cap counts the runs given up in a row
            payload[FIELD_SUPERSEDED] = turn.superseded_runs
        return payload

    # --- CharacterGraph --------------------------------------------------------------------

    def character_state(self, turn: CharacterTurn) -> dict[str, Any]:
        """Initial CharacterGraph state for one event. db_zugriff fills the personalities."""
        payload = dict(turn.event_payload)
        own = payload.get(FIELD_ORIGIN) == ORIGIN_OWN_THOUGHT
        return {
            "user_id": turn.pair.user_id,
            "character_id": turn.pair.character_id,
            "turn_id": turn.turn_id,
            "message_ids": list(payload.get(FIELD_MESSAGE_IDS) or []),
            "user_prompt": "" if own else str(payload.get(FIELD_USER_PROMPT) or ""),
            "own_thought": str(payload.get(FIELD_OWN_THOUGHT) or "") if own else "",
            "received_at": payload.get(FIELD_RECEIVED_AT),
            "event_source": turn.event_source,
            "event_payload": payload,
            "trigger_count": turn.trigger_count,
            **CHARACTER_ROLES,
            "external": Personality(),
            "internal": InternalPersonality(),
            "human_salience": payload.get(FIELD_HUMAN_SALIENCE),
            "correction_round": 0,
            "max_corrections": MAX_CORRECTIONS,
            **_fresh_channels(),
        }

    def stream_character(self, state: dict[str, Any]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        return _stream(self.character_graph, state)

    def response_payload(self, state: dict[str, Any]) -> dict[str, Any]:
        """`character_response` fields, complete, from the state at the release
        (docs/behaviour/events.md#release): the event consumer sends them as they are.

        The run's identity is its event's, which `character_state` put into the state and
        no node writes: `turn_id`, the `nachrichten_ids` of a user's event (a run the
        character started answers none), the event's `reiz_herkunft` (else the
        stimulus's), its `ausloeser_turn_id` when it names one. Then the 23 payload fields
        of the documented list (`typ` is the 24th, set by the message model) plus
        `tribunal_verdict`, `user_emotion` and `user_arousal`. `emotion`, `arousal` and
        `emotions_vektor` are Nova's (the chat page shows them; `nova_*` repeat them under
        their own names); `sprach_stil`, `beziehungs_dynamik`, `intent`, `tone`,
        `gespraechs_modus` and `emotions_verlauf` are the user's, as perceived by Path 1.
        Last, what the run's agents did for the person: `aenderungen`, the receipts of their
        verified writes, and `erwartet_antwort`, the question left waiting for the person's
        answer (the event kind `awaiting_user`; null when none)."""
        internal = state.get("internal")
        emotion = internal.emotion if isinstance(internal, Personality) else None
        external = state.get("external")
        user = external.emotion if isinstance(external, Personality) else None
        payload = state.get("event_payload") or {}
        own_event = state.get("event_source") == SOURCE_CHARACTER
        results = state.get("agent_results")
        awaited = awaited_answer(results)
        ids = [] if own_event else payload.get(FIELD_MESSAGE_IDS) or state.get("message_ids")
        answer: dict[str, Any] = {
            "character_id": state.get("character_id"),
            "nachricht": state.get("response") or "",
            "turn_id": state.get("turn_id"),
            FIELD_MESSAGE_IDS: [str(message_id) for message_id in ids or []],
            FIELD_ORIGIN: payload[FIELD_ORIGIN]
            if FIELD_ORIGIN in payload
            else stimulus_origin(state),
            "modell": state.get("model"),
            "token_total": state.get("token_total"),
            "emotion": emotion.emotion if emotion else None,
            "arousal": emotion.arousal if emotion else None,
            "emotions_vektor": emotion.emotions_vector if emotion else None,
            FIELD_EMOTION_HISTORY: payload.get(FIELD_EMOTION_HISTORY),
            "sprach_stil": user.language_style if user else None,
            "beziehungs_dynamik": user.relationship_dynamic if user else None,
            "nova_emotion": emotion.emotion if emotion else None,
            "nova_arousal": emotion.arousal if emotion else None,
            "nova_emotions_verlauf": state.get("nova_emotion_history"),
            "nova_emotions_vektor": emotion.emotions_vector if emotion else None,
            "nova_emotion_konflikt": state.get("nova_emotion_conflict"),
            "intent": user.intent if user else None,
            "tone": user.tone if user else None,
            "gespraechs_modus": user.mode if user else None,
            FIELD_USER_INTENTIONS: list(state.get("user_intentions") or []),
            "momentum": state.get("momentum"),
            "gespraechsvektor": state.get("conversation_hypothesis"),
            "tribunal_verdict": state.get("tribunal_verdict"),
            "user_emotion": user.emotion if user else None,
            "user_arousal": user.arousal if user else None,
            FIELD_CHANGES: [change.wire() for change in stored_changes(results)],
            FIELD_AWAITING: awaited.wire() if awaited else None,
        }
        if payload.get(FIELD_TRIGGER_TURN_ID) is not None:
            answer[FIELD_TRIGGER_TURN_ID] = payload[FIELD_TRIGGER_TURN_ID]
        return answer


def tail_result(state: dict[str, Any]) -> dict[str, Any]:
    """What Path 1's salience found, for the CharacterGraph (nodes/human_tail.py)."""
    failure = state.get("salience_failure")
    return {
        FIELD_HUMAN_SALIENCE: state.get("human_salience"),
        FIELD_USER_INTENTIONS: list(state.get("user_intentions") or []),
        **({"ausfall": failure} if failure else {}),
    }


# --- in-process turn (CLI, bench) ---------------------------------------------------------


@dataclass
class TurnResult:
    """Everything one in-process turn produced.

    `released_ms`: from the start of the HumanGraph to the node after which the answer
    left (`contract.release_ready`) — what the user waits; None if it never left."""

    turn_id: str
    human_state: dict[str, Any] = field(default_factory=dict)
    event_payload: dict[str, Any] = field(default_factory=dict)
    character_state: dict[str, Any] = field(default_factory=dict)
    response: dict[str, Any] = field(default_factory=dict)
    stages: list[tuple[str, str, float]] = field(default_factory=list)
    human_ms: float = 0.0
    character_ms: float = 0.0
    released_ms: float | None = None
    release_node: str | None = None


async def _emit(on_stage: StageCallback | None, *args: Any) -> None:
    if on_stage is None:
        return
    result = on_stage(*args)
    if result is not None:
        await result


def _failure_text(exc: BaseException, last_node: str) -> str:
    return f"{type(exc).__name__}: {exc} (nach {last_node})"


async def run_turn_inprocess(
    runtime: GraphRuntime,
    pair: Pair,
    text: str,
    on_stage: StageCallback | None = None,
    *,
    with_character: bool = True,
) -> TurnResult:
    """HumanGraph then CharacterGraph for one utterance, without queues — timed as the
    workers run them: the CharacterGraph starts when the HumanGraph hands the turn on
    (after `HUMAN_EVENT_NODE`) while the HumanGraph's tail runs on concurrently.

    `on_stage(graph, node, state, ms)` is called after every node. A HumanGraph failure
    before the hand-over is carried into the event payload as `pfad1_ausfall` (as the
    prompt consumer does); a CharacterGraph failure propagates (after the HumanGraph's tail
    has finished).
    """
    turn_id = uuid.uuid4().hex
    human_turn = HumanTurn(
        pair=pair,
        turn_id=turn_id,
        prompt=text,
        message_ids=[uuid.uuid4().hex],
        received_at=runtime.deps.clock(),
    )
    result = TurnResult(turn_id=turn_id)
    handed_on = asyncio.Event()
    started = time.perf_counter()

    async def on_node(node: str, after: dict[str, Any]) -> None:
        ms = float((after.get("node_timings") or {}).get(node, 0.0))
        result.stages.append((GRAPH_HUMAN, node, ms))
        await _emit(on_stage, GRAPH_HUMAN, node, after, ms)

    async def on_event(state: dict[str, Any] | None, failure: str | None) -> None:
        result.event_payload = runtime.human_event_payload(human_turn, state, failure)
        handed_on.set()

    async def human() -> None:
        try:
            final = await runtime.run_human(human_turn, on_node, on_event, _failure_text)
            result.human_state = final or {}
        finally:
            result.human_ms = (time.perf_counter() - started) * 1000
            handed_on.set()

    human_task = asyncio.create_task(human(), name=f"inprocess-path1:{turn_id}")
    try:
        await handed_on.wait()
        if with_character and result.event_payload:
            await _character(runtime, pair, turn_id, result, on_stage, started)
    finally:
        await human_task
    return result


async def _character(
    runtime: GraphRuntime,
    pair: Pair,
    turn_id: str,
    result: TurnResult,
    on_stage: StageCallback | None,
    turn_started: float,
) -> None:
    character_turn = CharacterTurn(
        pair=pair, turn_id=turn_id, event_source=SOURCE_USER, event_payload=result.event_payload
    )
    cstate = runtime.character_state(character_turn)
    started = time.perf_counter()
    async for node, after in runtime.stream_character(cstate):
        cstate = after
        ms = float((after.get("node_timings") or {}).get(node, 0.0))
        result.stages.append((GRAPH_CHARACTER, node, ms))
        if result.released_ms is None and release_ready(after):
            result.released_ms = (time.perf_counter() - turn_started) * 1000
            result.release_node = node
            result.response = runtime.response_payload(after)
        await _emit(on_stage, GRAPH_CHARACTER, node, after, ms)
    result.character_ms = (time.perf_counter() - started) * 1000
    result.character_state = cstate
    if result.released_ms is None:
        result.response = runtime.response_payload(cstate)
