"""HumanGraph — path 1: the user's utterance is perceived and stored
(docs/behaviour/graphs.md#human-graph).

    perception → enricher → ei_calc → salience → dispatcher → END

A straight line without conditional edges; two model calls for a short utterance
(perception + one salience score). Runs with graph_rolle="human", ei_calc_rolle="user",
perzeption_rolle="user" (set by `GraphRuntime.human_state`).
"""

from __future__ import annotations

from typing import Any, Final

from langgraph.graph import END, START, StateGraph

from novaberg.agents.deps import GraphDeps
from novaberg.graph.base import add_node
from novaberg.graph.nodes.dispatcher import dispatcher
from novaberg.graph.nodes.ei_calc import ei_calc
from novaberg.graph.nodes.enricher import enricher
from novaberg.graph.nodes.perception import perception
from novaberg.graph.nodes.salience import salience
from novaberg.graph.state import ConversationState

GRAPH: Final = "human"

HUMAN_NODES: Final = (
    ("perception", perception),
    ("enricher", enricher),
    ("ei_calc", ei_calc),
    ("salience", salience),
    ("dispatcher", dispatcher),
)
"""Node names in order (stage names the clients see) and their functions."""

HUMAN_ROLES: Final = {"graph_rolle": "human", "ei_calc_rolle": "user", "perzeption_rolle": "user"}
"""The role flags a HumanGraph state carries (docs/behaviour/graphs.md#role-flags)."""


def build_human_graph(deps: GraphDeps) -> Any:
    """The compiled HumanGraph."""
    builder = StateGraph(ConversationState)
    previous = START
    for name, fn in HUMAN_NODES:
        add_node(builder, name, fn, deps, GRAPH)
        builder.add_edge(previous, name)
        previous = name
    builder.add_edge(previous, END)
    return builder.compile()
