"""HumanGraph — path 1: the user's utterance is perceived and stored
(docs/behaviour/graphs.md#human-graph).

    perception → enricher → ei_calc → salience → dispatcher → END

A straight line without conditional edges; two model calls for a short utterance
(perception + one salience score). Runs with the role flags `HUMAN_ROLES` (set by
`GraphRuntime.human_state`).
"""

from __future__ import annotations

from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.graph.base import compile_graph, linear, node_names
from novaberg.graph.nodes.dispatcher import dispatcher
from novaberg.graph.nodes.ei_calc import ei_calc
from novaberg.graph.nodes.enricher import enricher
from novaberg.graph.nodes.perception import perception
from novaberg.graph.nodes.salience import salience
from novaberg.graph.roles import HUMAN_ROLES
from novaberg.wire import GRAPH_HUMAN

__all__ = ["HUMAN_NODE_NAMES", "HUMAN_ROLES", "HUMAN_TABLE", "build_human_graph"]

HUMAN_TABLE: Final = linear(
    [
        ("perception", perception),
        ("enricher", enricher),
        ("ei_calc", ei_calc),
        ("salience", salience),
        ("dispatcher", dispatcher),
    ]
)
"""The HumanGraph's declaration: node names in order and their functions."""

HUMAN_NODE_NAMES: Final = node_names(HUMAN_TABLE)


def build_human_graph(deps: GraphDeps) -> Any:
    """The compiled HumanGraph."""
    return compile_graph(HUMAN_TABLE, deps, GRAPH_HUMAN)
