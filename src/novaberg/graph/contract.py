"""What the layers above the graphs (events, CLI, Pixie) may rely on.

`GraphDeps` is everything a node may touch; `TurnGraphs` is how a caller runs a
turn: build the initial state, stream the graph node by node, and read the
wire payloads out of the resulting state. The event consumer streams
`stream_character` itself because the answer must leave the moment
`perception_assistant` has run, not at the end of the run (docs/behaviour/events.md#release).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from novaberg.agents.deps import GraphDeps
from novaberg.pair import Pair

__all__ = [
    "AGENT_NODE",
    "ANSWER_JOIN",
    "HUMAN_EVENT_NODE",
    "HUMAN_TAIL_NODE",
    "POST_RELEASE_NODE",
    "RELEASE_NODE",
    "CharacterTurn",
    "GraphDeps",
    "HumanTurn",
    "TurnGraphs",
    "release_ready",
]

RELEASE_NODE = "perception_assistant"
"""The node whose perception of the final answer text the release waits for: the answer
leaves at the first node after which `release_ready` holds (evaluate on ok, or
perception_assistant itself after a fallback replaced the text)."""

HUMAN_EVENT_NODE = "session_turn"
"""The HumanGraph node after which the `message` event leaves (the user's session turn is
stored); the rest of the HumanGraph runs off the answer's path."""

HUMAN_TAIL_NODE = "salience"
"""The HumanGraph node after which its salience results go to the CharacterGraph
(`pfad1_nachlauf`, awaited by the CharacterGraph's enricher, graph/nodes/human_tail.py)."""

ANSWER_JOIN = "composer"
"""The deferred node where the concurrent pre-answer branches meet (character_graph)."""

POST_RELEASE_NODE = "ei_calc_persist"
"""The first node after the release (the post-release tail nobody waits for)."""

DECISION_OK = "ok"
DECISION_FALLBACK = "fallback"
DECISION_CORRECT = "correct"
"""`evaluate_decision` values."""

RELEASING_DECISIONS = frozenset({DECISION_OK, DECISION_FALLBACK})


def release_ready(state: dict[str, Any]) -> bool:
    """True once the answer may leave: evaluate accepted it (ok or fallback) and
    perception_assistant has perceived exactly the text that leaves. perception_assistant
    runs speculatively next to the tribunal; a draft the corrector replaced, or a fallback
    that replaced the text, fails the comparison, so its perception is never released."""
    if state.get("evaluate_decision") not in RELEASING_DECISIONS:
        return False
    perceived = state.get("perceived_response")
    return perceived is not None and perceived == (state.get("response") or "")


AGENT_NODE = "agent_dispatch"
"""The CharacterGraph node in which task agents act (the event consumer never abandons a
run once it ran)."""


@dataclass(frozen=True)
class HumanTurn:
    """One block of user utterances cut by the prompt consumer (docs/behaviour/events.md#block).

    The HumanGraph perceives `prompt` (the block's own utterances, `message_ids`); the
    `message` event it hands on also names the ids of runs superseded before it
    (`carried_ids`, first) and carries what the supersede rule reads: when the block's
    last utterance arrived and how many runs in a row were given up (events/queues.py)."""

    pair: Pair
    turn_id: str
    prompt: str
    message_ids: list[str]
    received_at: float
    carried_ids: list[str] = field(default_factory=list)
    last_received_at: float | None = None
    superseded_runs: int = 0

    @property
    def answered_ids(self) -> list[str]:
        """Every id the turn's one outcome names: the carried ones first, then the block's."""
        return [*self.carried_ids, *self.message_ids]


@dataclass(frozen=True)
class CharacterTurn:
    """One CharacterGraph run, built from an event (docs/behaviour/events.md#event-model)."""

    pair: Pair
    turn_id: str
    event_source: str
    event_payload: dict[str, Any]
    trigger_count: int = 0


class TurnGraphs(Protocol):
    """Implemented by `graph.runner.GraphRuntime`."""

    @property
    def agent_graph(self) -> Any:
        """The compiled AgentGraph (an own thought arising; the reminder loop runs it)."""
        ...

    def human_state(self, turn: HumanTurn) -> dict[str, Any]: ...

    def stream_human(self, state: dict[str, Any]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """Yield `(node_name, state_after_node)` for each HumanGraph node."""
        ...

    async def run_human(
        self,
        turn: HumanTurn,
        on_node: Any,
        on_event: Any,
        failure_text: Any,
    ) -> dict[str, Any] | None:
        """Run the HumanGraph; `on_event(state, failure)` hands the turn on once, as soon
        as the user's turn is stored (`HUMAN_EVENT_NODE`) — the rest runs after it."""
        ...

    def human_event_payload(
        self, turn: HumanTurn, final_state: dict[str, Any] | None, failure: str | None
    ) -> dict[str, Any]:
        """The `message` event payload (wire names), complete: the event is built from it
        as it is; `failure` marks `pfad1_ausfall`."""
        ...

    def character_state(self, turn: CharacterTurn) -> dict[str, Any]: ...

    def stream_character(self, state: dict[str, Any]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """Yield `(node_name, state_after_node)` for each CharacterGraph node."""
        ...

    def response_payload(self, state: dict[str, Any]) -> dict[str, Any]:
        """The `character_response` fields, complete, from the state at the release: the
        run's identity (character_id, turn_id, nachrichten_ids, reiz_herkunft,
        ausloeser_turn_id) as its event named it, then nachricht, emotion, arousal, ...
        The answer is sent as it is."""
        ...
