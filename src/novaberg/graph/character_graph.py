"""CharacterGraph — path 2: the character reads, decides, acts and answers
(docs/behaviour/graphs.md#character-graph). Concurrent where nothing depends on each other;
`R` marks a model round on the critical path of a plain message (bench/critical_path.py):

    db_access ─┬─ ei_calc → enricher (R2: query rewrite ‖ Path 1's salience) ─┬─ emotional_gravitation → reducer ─┐
               │                                                             ├─ landscape → stance_space ─────────┤
               │                                                             └─ conversation_vector (deferred) ─┐ │
               └─ situation_node (Path 1's reading) ─┬─ memory_anchor (after reducer too) ─────────────────┤ │
                                                     └─ router (R2, [LAGE]) → appointments ─┬──────────────┤ │
                                                                                            └─ planner ⇄ agent_dispatch ┤ │
                                                                           composer (R3, deferred join) ────┤ │
                                                        conversation_vector's call (R3, same step) ─────────┼─┘
                                                                       responder (R4, after both) ──────────┘
    → thinker (fact indicators only) ─┬─ tribunal (R5, 3 judges at once) ─┬─ evaluate
                                       └─ perception_assistant (R5) ───────┘
    evaluate ─┬─ ok → [answer released] → ei_calc_persist ─┬─ salience → imprint ─┬─ dispatcher → END
              │                                                └─ uptake ─────────────┘
              ├─ correct → corrector → tribunal ‖ perception_assistant → evaluate (≤ 2 rounds)
              └─ fallback → perception_assistant (of the fallback text) → [released] → …

The situation comes before the router, so both of the router's branches see the same
understanding; it runs next to ei_calc and makes no call on a user turn (Path 1 made it,
`nodes/situation_reader.py`), so the router still shares the enricher's step and round
(LangGraph runs in steps: a node one step later waits for the whole step before it).
The composer and the conversation vector are deferred (`Node.defer`): LangGraph holds them
back until every other pre-answer branch — including a planner ⇄ agent_dispatch loop of any
length — has finished, then runs both in the same step, so the vector's free-text call and
the composer's call are one round. memory_anchor and the responder are barriers
(`Node.barrier`): each runs once all its plain-edge predecessors have. The landscape (no
model) gives the stance its cluster before the vector's call.
perception_assistant runs speculatively on the same text as the tribunal, so an accepted
answer needs no extra round; the answer leaves at the first node after which
`contract.release_ready` holds (it compares the perceived text with the text that leaves, so
a corrected draft's perception never leaves). Everything after the release continues and
cannot cost the answer; there, too, what does not depend on each other runs at once (the
uptake next to salience and imprint; the dispatcher, a barrier, after both).

Every node runs with the CharacterGraph's role flags (`graph/roles.py`) laid over the state
it reads, so the shared nodes (ei_calc, enricher, perception, salience, dispatcher) pick
their character variant even for a state built without the runtime. Concurrent nodes never
write the same plain channel (LangGraph would refuse the step).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Final

from langgraph.graph import END

from novaberg.agents.deps import GraphDeps
from novaberg.agents.registry import AgentRegistry
from novaberg.config import Profile
from novaberg.graph.base import Node, compile_graph, node_names
from novaberg.graph.contract import AGENT_NODE, ANSWER_JOIN, POST_RELEASE_NODE, RELEASE_NODE
from novaberg.graph.knowledge_gaps import close_taken_up
from novaberg.graph.nodes.agent_dispatch import agent_dispatch
from novaberg.graph.nodes.appointment_reading import appointment_reading
from novaberg.graph.nodes.composer import composer
from novaberg.graph.nodes.conversation_vector import conversation_vector
from novaberg.graph.nodes.corrector import corrector
from novaberg.graph.nodes.db_access import db_access
from novaberg.graph.nodes.dispatcher import dispatcher
from novaberg.graph.nodes.ei_calc import ei_calc
from novaberg.graph.nodes.ei_calc_persist import ei_calc_persist
from novaberg.graph.nodes.emotional_gravitation import emotional_gravitation
from novaberg.graph.nodes.enricher import enricher
from novaberg.graph.nodes.evaluate import (
    MAX_CORRECTIONS,
    evaluate,
    route_after_evaluate,
    route_after_perception_assistant,
)
from novaberg.graph.nodes.imprint import imprint
from novaberg.graph.nodes.landscape import landscape
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
from novaberg.graph.nodes.tribunal_panel import tribunal_panel
from novaberg.graph.nodes.uptake import register_uptake_hook, uptake
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

SPECULATIVE_ROUND: Final = ("tribunal", RELEASE_NODE)
"""The judges and the speculative perception of the same answer text run at once."""

RECURSION_LIMIT: Final = 80
"""LangGraph counts steps (concurrent nodes share one). Its default of 25 is too close to
the longest legal path: about fifteen steps, two correction rounds (+6), a fallback re-read
(+1) and a planner ⇄ agent loop per task (+2 each, at most `agents.task_plan.MAX_TASKS`)."""


def character_table(agents: AgentRegistry, profile: Profile = Profile.FULL) -> tuple[Node, ...]:
    """The CharacterGraph's declaration: every node, in stage order, and where it leads.

    The profile (docs/behaviour/llm.md#profiles) chooses how the `tribunal` stage judges:
    three calls (full) or one call returning the three verdicts (compact). The stages,
    their names and edges are the same in both.

    The routed nodes (router, planner, evaluate, perception_assistant) name their successor
    themselves (see `graph.base.wrap_node`); `routes` lists the nodes they can name. A
    tuple `then` fans out; `defer` and `barrier` mark the joins (graph/base.py `Node`)."""
    return (
        Node("db_access", partial(db_access, registry=agents), then=("ei_calc", "situation_node")),
        Node("ei_calc", ei_calc, then="enricher"),
        Node(
            "enricher",
            partial(enricher, registry=agents),
            then=("emotional_gravitation", "landscape", "conversation_vector"),
        ),
        Node("emotional_gravitation", emotional_gravitation, then="reducer"),
        Node("reducer", reducer, then="memory_anchor"),
        Node("situation_node", situation_node, then=("router", "memory_anchor")),
        Node("memory_anchor", memory_anchor, then=ANSWER_JOIN, barrier=True),
        Node("landscape", landscape, then="stance_space"),
        Node("stance_space", stance_node, then=ANSWER_JOIN),
        Node("router", partial(router, registry=agents), then="appointments"),
        Node(
            "appointments",
            appointment_reading,
            route=route_after_router,
            routes=("planner", ANSWER_JOIN),
        ),
        Node(
            "planner",
            partial(planner, registry=agents),
            route=route_after_planner,
            routes=(AGENT_NODE, ANSWER_JOIN),
        ),
        Node(AGENT_NODE, partial(agent_dispatch, registry=agents), then="planner"),
        Node(ANSWER_JOIN, partial(composer, registry=agents), then="responder", defer=True),
        Node("conversation_vector", conversation_vector, then="responder", defer=True),
        Node("responder", responder, then="thinker", barrier=True),
        Node("thinker", thinker, then=SPECULATIVE_ROUND),
        Node(
            "tribunal",
            tribunal_panel if profile is Profile.COMPACT else tribunal,
            then="evaluate",
        ),
        Node(
            "evaluate",
            partial(evaluate, max_corrections=MAX_CORRECTIONS),
            route=route_after_evaluate,
            routes=(POST_RELEASE_NODE, "corrector", RELEASE_NODE),
        ),
        Node("corrector", corrector, then=SPECULATIVE_ROUND),
        Node(
            RELEASE_NODE,
            perception,
            route=route_after_perception_assistant,
            routes=("evaluate", POST_RELEASE_NODE),
        ),
        Node(POST_RELEASE_NODE, ei_calc_persist, then=("salience", "uptake")),
        Node("salience", salience, then="imprint"),
        Node("imprint", imprint, then="dispatcher"),
        Node("uptake", uptake, then="dispatcher"),
        Node("dispatcher", dispatcher, then=END, barrier=True),
    )


CHARACTER_NODE_NAMES: Final = node_names(character_table(AgentRegistry()))
"""Node names (the stage names the clients see)."""


def build_character_graph(deps: GraphDeps, registry: AgentRegistry | None = None) -> Any:
    """The compiled CharacterGraph (with a recursion limit that fits the correction loop),
    built for the settings' profile.

    Every node reads the state with `CHARACTER_ROLES` laid over it."""
    agents = registry if registry is not None else AgentRegistry()
    register_uptake_hook(close_taken_up)
    table = character_table(agents, deps.settings.turn_profile)
    compiled = compile_graph(table, deps, GRAPH_CHARACTER, roles=CHARACTER_ROLES)
    return compiled.with_config(recursion_limit=RECURSION_LIMIT)
