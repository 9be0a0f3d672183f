"""CharacterGraph — path 2: the character reads, decides, acts and answers
(docs/behaviour/graphs.md#character-graph).

    db_access → ei_calc → enricher → reducer → router ─┬─ management → planner ⇄ agent_dispatch
                                                        └──────────────────────┐      │ (no agent)
                                    conversation_vector ←──────────────────────┴──────┘
    → responder → thinker → tribunal → evaluate ─┬─ ok | fallback → perception_assistant
                                                  │     → ei_calc_persist → salience → dispatcher → END
                                                  └─ correct → corrector → tribunal (≤ 2 rounds)

The answer is released when `perception_assistant` has run (`contract.RELEASE_NODE`), on
both the ok and the fallback edge; the post-run (persist, salience, dispatcher) continues
and cannot cost the answer.

Every node runs with the CharacterGraph's role flags (graph_rolle "character", ei_calc_rolle
"character", perzeption_rolle "assistant") laid over the state it reads, so the shared
nodes (ei_calc, enricher, perception, salience, dispatcher) pick their character variant
even for a state built without the runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any, Final

from langgraph.graph import END, START, StateGraph

from novaberg.agents.registry import AgentRegistry
from novaberg.graph.base import NodeFn, Route, add_node
from novaberg.graph.contract import AGENT_NODE, RELEASE_NODE, GraphDeps
from novaberg.graph.nodes.agent_dispatch import agent_dispatch
from novaberg.graph.nodes.conversation_vector import conversation_vector
from novaberg.graph.nodes.corrector import corrector
from novaberg.graph.nodes.db_access import db_access
from novaberg.graph.nodes.dispatcher import dispatcher
from novaberg.graph.nodes.ei_calc import ei_calc
from novaberg.graph.nodes.ei_calc_persist import ei_calc_persist
from novaberg.graph.nodes.enricher import enricher
from novaberg.graph.nodes.evaluate import MAX_CORRECTIONS, evaluate, route_after_evaluate
from novaberg.graph.nodes.perception import perception
from novaberg.graph.nodes.planner import planner, route_after_planner
from novaberg.graph.nodes.reducer import reducer
from novaberg.graph.nodes.responder import responder
from novaberg.graph.nodes.router import route_after_router, router
from novaberg.graph.nodes.salience import salience
from novaberg.graph.nodes.thinker import thinker
from novaberg.graph.nodes.tribunal import tribunal
from novaberg.graph.state import ConversationState

__all__ = [
    "CHARACTER_NODE_NAMES",
    "CHARACTER_ROLES",
    "MAX_CORRECTIONS",
    "RECURSION_LIMIT",
    "build_character_graph",
]

GRAPH: Final = "character"

CHARACTER_ROLES: Final[Mapping[str, str]] = {
    "graph_rolle": "character",
    "ei_calc_rolle": "character",
    "perzeption_rolle": "assistant",
}
"""The role flags of a CharacterGraph run (docs/behaviour/graphs.md#role-flags)."""

RECURSION_LIMIT: Final = 80
"""LangGraph's default of 25 steps is below the longest legal path: 17 nodes, two
correction rounds (+6) and a planner ⇄ agent loop per agent (+2 each)."""

CHARACTER_NODE_NAMES: Final = (
    "db_access",
    "ei_calc",
    "enricher",
    "reducer",
    "router",
    "planner",
    AGENT_NODE,
    "conversation_vector",
    "responder",
    "thinker",
    "tribunal",
    "evaluate",
    "corrector",
    RELEASE_NODE,
    "ei_calc_persist",
    "salience",
    "dispatcher",
)
"""Node names (the stage names the clients see)."""


def with_character_roles(fn: NodeFn) -> NodeFn:
    """`fn` reading the state with the CharacterGraph's role flags laid over it."""

    async def run(state: ConversationState, deps: GraphDeps) -> dict[str, Any] | None:
        return await fn({**state, **CHARACTER_ROLES}, deps)  # type: ignore[typeddict-item]

    run.__name__ = getattr(fn, "__name__", "node")
    return run


def build_character_graph(deps: GraphDeps, registry: AgentRegistry | None = None) -> Any:
    """The compiled CharacterGraph (with a recursion limit that fits the correction loop)."""
    agents = registry if registry is not None else AgentRegistry()
    nodes: dict[str, NodeFn] = {
        "db_access": db_access,
        "ei_calc": ei_calc,
        "enricher": enricher,
        "reducer": reducer,
        "router": partial(router, registry=agents),
        "planner": partial(planner, registry=agents),
        AGENT_NODE: partial(agent_dispatch, registry=agents),
        "conversation_vector": conversation_vector,
        "responder": responder,
        "thinker": thinker,
        "tribunal": tribunal,
        "evaluate": partial(evaluate, max_corrections=MAX_CORRECTIONS),
        "corrector": corrector,
        RELEASE_NODE: perception,
        "ei_calc_persist": ei_calc_persist,
        "salience": salience,
        "dispatcher": dispatcher,
    }
    assert tuple(nodes) == CHARACTER_NODE_NAMES
    # the branching nodes name their successor themselves (see graph.base.wrap_node)
    routes: dict[str, tuple[Route, tuple[str, ...]]] = {
        "router": (route_after_router, ("planner", "conversation_vector")),
        "planner": (route_after_planner, (AGENT_NODE, "conversation_vector")),
        "evaluate": (route_after_evaluate, (RELEASE_NODE, "corrector")),
    }
    builder = StateGraph(ConversationState)
    for name, fn in nodes.items():
        route, destinations = routes.get(name, (None, ()))
        add_node(
            builder,
            name,
            with_character_roles(fn),
            deps,
            GRAPH,
            route=route,
            destinations=destinations,
        )

    for a, b in (
        (START, "db_access"),
        ("db_access", "ei_calc"),
        ("ei_calc", "enricher"),
        ("enricher", "reducer"),
        ("reducer", "router"),
        (AGENT_NODE, "planner"),
        ("conversation_vector", "responder"),
        ("responder", "thinker"),
        ("thinker", "tribunal"),
        ("tribunal", "evaluate"),
        ("corrector", "tribunal"),
        (RELEASE_NODE, "ei_calc_persist"),
        ("ei_calc_persist", "salience"),
        ("salience", "dispatcher"),
        ("dispatcher", END),
    ):
        builder.add_edge(a, b)
    return builder.compile().with_config(recursion_limit=RECURSION_LIMIT)
