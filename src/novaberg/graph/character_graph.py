"""CharacterGraph — path 2: the character reads, decides, acts and answers
(docs/behaviour/graphs.md#character-graph).

    db_access → ei_calc → enricher → reducer → situation_node → memory_anchor → router
    → appointments ─┬─ management → planner ⇄ agent_dispatch
                    └──────────────────────┐      │ (no agent)
         conversation_vector ←─────────────┴──────┘
    → stance_space → composer → responder → thinker → tribunal → evaluate ─┬─ ok | fallback
        → perception_assistant → ei_calc_persist → salience → imprint → uptake → dispatcher → END
                                                                           └─ correct → corrector → tribunal (≤ 2)

A node may not share its name with a state channel, so the nodes whose result has a
channel of the same name are named for what they do: `situation_node` writes `situation`,
`stance_space` (the stance space) writes `stance`, `appointments` writes
`appointment_reading`.

The answer is released when `perception_assistant` has run (`contract.RELEASE_NODE`), on
both the ok and the fallback edge; the post-run (persist, salience, dispatcher) continues
and cannot cost the answer.

Every node runs with the CharacterGraph's role flags (`graph/roles.py`) laid over the state
it reads, so the shared nodes (ei_calc, enricher, perception, salience, dispatcher) pick
their character variant even for a state built without the runtime.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Final

from langgraph.graph import END

from novaberg.agents.deps import GraphDeps
from novaberg.agents.registry import AgentRegistry
from novaberg.graph.base import Node, compile_graph, node_names
from novaberg.graph.contract import AGENT_NODE, RELEASE_NODE
from novaberg.graph.nodes.agent_dispatch import agent_dispatch
from novaberg.graph.nodes.appointment_reading import appointment_reading
from novaberg.graph.nodes.composer import composer
from novaberg.graph.nodes.conversation_vector import conversation_vector
from novaberg.graph.nodes.corrector import corrector
from novaberg.graph.nodes.db_access import db_access
from novaberg.graph.nodes.dispatcher import dispatcher
from novaberg.graph.nodes.ei_calc import ei_calc
from novaberg.graph.nodes.ei_calc_persist import ei_calc_persist
from novaberg.graph.nodes.enricher import enricher
from novaberg.graph.nodes.evaluate import MAX_CORRECTIONS, evaluate, route_after_evaluate
from novaberg.graph.nodes.imprint import imprint
from novaberg.graph.nodes.memory_anchor import memory_anchor
from novaberg.graph.nodes.perception import perception
from novaberg.graph.nodes.planner import planner, route_after_planner
from novaberg.graph.nodes.reducer import reducer
from novaberg.graph.nodes.responder import responder
from novaberg.graph.nodes.router import route_after_router, router
from novaberg.graph.nodes.salience import salience
from novaberg.graph.nodes.situation import situation_node
from novaberg.graph.nodes.stance import stance_node
from novaberg.graph.nodes.thinker import thinker
from novaberg.graph.nodes.tribunal import tribunal
from novaberg.graph.nodes.uptake import uptake
from novaberg.graph.roles import CHARACTER_ROLES
from novaberg.wire import GRAPH_CHARACTER

__all__ = [
    "CHARACTER_NODE_NAMES",
    "CHARACTER_ROLES",
    "MAX_CORRECTIONS",
    "RECURSION_LIMIT",
    "build_character_graph",
    "character_table",
]

RECURSION_LIMIT: Final = 80
"""LangGraph's default of 25 steps is below the longest legal path: 24 nodes, two
correction rounds (+6) and a planner ⇄ agent loop per agent (+2 each)."""


def character_table(agents: AgentRegistry) -> tuple[Node, ...]:
    """The CharacterGraph's declaration: every node, in stage order, and where it leads.

    The routed nodes (router, planner, evaluate) name their successor themselves (see
    `graph.base.wrap_node`); `routes` lists the nodes they can name."""
    return (
        Node("db_access", db_access, then="ei_calc"),
        Node("ei_calc", ei_calc, then="enricher"),
        Node("enricher", partial(enricher, registry=agents), then="reducer"),
        Node("reducer", reducer, then="situation_node"),
        Node("situation_node", situation_node, then="memory_anchor"),
        Node("memory_anchor", memory_anchor, then="router"),
        Node("router", partial(router, registry=agents), then="appointments"),
        Node(
            "appointments",
            appointment_reading,
            route=route_after_router,
            routes=("planner", "conversation_vector"),
        ),
        Node(
            "planner",
            partial(planner, registry=agents),
            route=route_after_planner,
            routes=(AGENT_NODE, "conversation_vector"),
        ),
        Node(AGENT_NODE, partial(agent_dispatch, registry=agents), then="planner"),
        Node("conversation_vector", conversation_vector, then="stance_space"),
        Node("stance_space", stance_node, then="composer"),
        Node("composer", composer, then="responder"),
        Node("responder", responder, then="thinker"),
        Node("thinker", thinker, then="tribunal"),
        Node("tribunal", tribunal, then="evaluate"),
        Node(
            "evaluate",
            partial(evaluate, max_corrections=MAX_CORRECTIONS),
            route=route_after_evaluate,
            routes=(RELEASE_NODE, "corrector"),
        ),
        Node("corrector", corrector, then="tribunal"),
        Node(RELEASE_NODE, perception, then="ei_calc_persist"),
        Node("ei_calc_persist", ei_calc_persist, then="salience"),
        Node("salience", salience, then="imprint"),
        Node("imprint", imprint, then="uptake"),
        Node("uptake", uptake, then="dispatcher"),
        Node("dispatcher", dispatcher, then=END),
    )


CHARACTER_NODE_NAMES: Final = node_names(character_table(AgentRegistry()))
"""Node names (the stage names the clients see)."""


def build_character_graph(deps: GraphDeps, registry: AgentRegistry | None = None) -> Any:
    """The compiled CharacterGraph (with a recursion limit that fits the correction loop).

    Every node reads the state with `CHARACTER_ROLES` laid over it."""
    agents = registry if registry is not None else AgentRegistry()
    compiled = compile_graph(character_table(agents), deps, GRAPH_CHARACTER, roles=CHARACTER_ROLES)
    return compiled.with_config(recursion_limit=RECURSION_LIMIT)
