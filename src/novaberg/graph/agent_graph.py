"""AgentGraph — the first half of an impulse turn (docs/behaviour/graphs.md#agent-graph).

    enricher → salience → dispatcher → END

Here Nova's own thought *arises*: it gets context, is judged for salience and
stored as memory from Nova's perspective (`ei_calc_rolle="character"`, so
short-term entries carry `beobachter="assistant"`). It has no responder and
therefore never writes a session turn (the dispatcher skips
`graph_rolle="agent"`). The CharacterGraph then thinks the thought in the
event that follows; both runs share the impulse's `turn_id`.

The graph is called directly, not through an event; the origin mark travels in
`event_payload` anyway (the payload carries the origin whether or not an event produced
it), so `stimulus_is_own_thought` is true here.
"""

from __future__ import annotations

from typing import Any, Final

from langgraph.graph import END, START, StateGraph

from novaberg.agents.deps import GraphDeps
from novaberg.graph.base import add_node
from novaberg.graph.nodes.dispatcher import dispatcher
from novaberg.graph.nodes.enricher import enricher
from novaberg.graph.nodes.salience import salience
from novaberg.graph.personality import InternalPersonality, Personality
from novaberg.graph.state import ConversationState
from novaberg.store.keys import Pair

GRAPH: Final = "agent"

AGENT_NODES: Final = (
    ("enricher", enricher),
    ("salience", salience),
    ("dispatcher", dispatcher),
)

AGENT_ROLES: Final = {
    "graph_rolle": "agent",
    "ei_calc_rolle": "character",
    "perzeption_rolle": "assistant",
}
"""Role flags of an AgentGraph state (docs/behaviour/graphs.md#role-flags)."""

OWN_IMPULSE: Final = "eigener_impuls"


def build_agent_graph(deps: GraphDeps) -> Any:
    builder = StateGraph(ConversationState)
    previous = START
    for name, fn in AGENT_NODES:
        add_node(builder, name, fn, deps, GRAPH)
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, END)
    return builder.compile()


def agent_state(
    pair: Pair, turn_id: str, thought: str, thought_arousal: float | None
) -> dict[str, Any]:
    """Initial state for one own thought; the caller sets the origin mark itself."""
    return {
        "user_id": pair.user_id,
        "character_id": pair.character_id,
        "turn_id": turn_id,
        "nachrichten_ids": [],
        "user_prompt": "",
        "eigener_gedanke": thought,
        "event_source": "character",
        "event_payload": {
            "reiz_herkunft": OWN_IMPULSE,
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
    deps: GraphDeps, pair: Pair, turn_id: str, thought: str, thought_arousal: float | None
) -> dict[str, Any]:
    """Run the AgentGraph once for a thought and return its final state."""
    compiled = build_agent_graph(deps)
    return await compiled.ainvoke(agent_state(pair, turn_id, thought, thought_arousal))
