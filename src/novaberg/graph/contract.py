"""What the layers above the graphs (events, CLI, Pixie) may rely on.

`GraphDeps` is everything a node may touch; `TurnGraphs` is how a caller runs a
turn: build the initial state, stream the graph node by node, and read the
wire payloads out of the resulting state. The event consumer streams
`stream_character` itself because the answer must leave the moment
`perception_assistant` has run, not at the end of the run (docs/behaviour/events.md#release).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from novaberg.agents.deps import GraphDeps
from novaberg.store.keys import Pair

__all__ = [
    "AGENT_NODE",
    "RELEASE_NODE",
    "CharacterTurn",
    "GraphDeps",
    "HumanTurn",
    "TurnGraphs",
]

RELEASE_NODE = "perception_assistant"
"""The node after which the answer is released to the client."""

AGENT_NODE = "agent_dispatch"
"""The CharacterGraph node in which task agents act (the event consumer never abandons a
run once it ran)."""


@dataclass(frozen=True)
class HumanTurn:
    """One block of user utterances cut by the prompt consumer (docs/behaviour/events.md#block)."""

    pair: Pair
    turn_id: str
    prompt: str
    message_ids: list[str]
    received_at: float


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

    def human_event_payload(
        self, turn: HumanTurn, final_state: dict[str, Any] | None, failure: str | None
    ) -> dict[str, Any]:
        """The `message` event payload (wire names); `failure` marks `pfad1_ausfall`."""
        ...

    def character_state(self, turn: CharacterTurn) -> dict[str, Any]: ...

    def stream_character(self, state: dict[str, Any]) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """Yield `(node_name, state_after_node)` for each CharacterGraph node."""
        ...

    def response_payload(self, state: dict[str, Any]) -> dict[str, Any]:
        """`character_response` fields read from the state after `RELEASE_NODE`:
        nachricht, turn_id, nachrichten_ids, reiz_herkunft, emotion, arousal, ..."""
        ...
