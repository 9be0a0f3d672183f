"""AgentGraph — the first half of an impulse turn (docs/behaviour/graphs.md#agent-graph).

    enricher → salience → dispatcher → END

Here Nova's own thought *arises*: it gets context, is judged for salience and
stored as memory from Nova's perspective (the role flags `AGENT_ROLES`, so
short-term entries carry `beobachter="assistant"`). It has no responder and
therefore never writes a session turn (the dispatcher skips
`graph_role="agent"`). The CharacterGraph then thinks the thought in the
event that follows; both runs share the impulse's `turn_id`.

The graph is called directly, not through an event; the origin mark travels in
`event_payload` anyway (the payload carries the origin whether or not an event produced
it), so `stimulus_is_own_thought` is true here.
"""

from __future__ import annotations

from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.graph.base import compile_graph, linear, node_names
from novaberg.graph.nodes.dispatcher import dispatcher
from novaberg.graph.nodes.enricher import enricher
from novaberg.graph.nodes.salience import salience
from novaberg.graph.personality import InternalPersonality, Personality
from novaberg.graph.roles import AGENT_ROLES
from novaberg.pair import Pair
from novaberg.wire import GRAPH_AGENT, ORIGIN_OWN_THOUGHT, SOURCE_CHARACTER

__all__ = ["AGENT_NODE_NAMES", "AGENT_TABLE", "agent_state", "build_agent_graph", "run_agent_graph"]

AGENT_TABLE: Final = linear(
    [
        ("enricher", enricher),
        ("salience", salience),
        ("dispatcher", dispatcher),
    ]
)
"""The AgentGraph's declaration."""

AGENT_NODE_NAMES: Final = node_names(AGENT_TABLE)


def build_agent_graph(deps: GraphDeps) -> Any:
    """The compiled AgentGraph (compiled once, by `GraphRuntime.compile`)."""
    return compile_graph(AGENT_TABLE, deps, GRAPH_AGENT)


def agent_state(
    pair: Pair, turn_id: str, thought: str, thought_arousal: float | None
) -> dict[str, Any]:
    """Initial state for one own thought; the caller sets the origin mark itself."""
    return {
        "user_id": pair.user_id,
        "character_id": pair.character_id,
        "turn_id": turn_id,
        "message_ids": [],
        "user_prompt": "",
        "own_thought": thought,
        "event_source": SOURCE_CHARACTER,
        "event_payload": {
            "reiz_herkunft": ORIGIN_OWN_THOUGHT,
            "turn_id": turn_id,
            "gedanke_arousal": thought_arousal,
        },
        "trigger_count": 0,
        **AGENT_ROLES,
        "external": Personality(),
        "internal": InternalPersonality(),
        "pending_writes": [],
        "node_annotations": [],
        "node_timings": {},
    }


async def run_agent_graph(
    compiled: Any, pair: Pair, turn_id: str, thought: str, thought_arousal: float | None
) -> dict[str, Any]:
    """Run the compiled AgentGraph once for a thought and return its final state."""
    return await compiled.ainvoke(agent_state(pair, turn_id, thought, thought_arousal))
