"""HumanGraph — path 1: the user's utterance is perceived and stored
(docs/behaviour/graphs.md#human-graph).

    perception ─────────┬─ enricher → ei_calc → session_turn ⇒ [message event] → salience → dispatcher → END
    situation_reader ───┘

No conditional edges; three model calls for a short utterance (perception, the situation's
reading, one salience score). The situation's reading runs in the same step as perception
(it needs nothing perception computes) and travels in the event, so the CharacterGraph can
put the situation before its router without a round of its own (nodes/situation_reader.py).
The user's session turn is stored by `session_turn` (`HUMAN_EVENT_NODE`): what the
CharacterGraph needs exists then, so the `message` event leaves right after it (graph/runner.py `GraphRuntime.run_human`) and the rest — salience
(segmentation, scoring), short-term condensing and the session summary in the dispatcher —
runs off the answer's path. The dispatcher fills the turn's late fields in, so what is
stored is the same as when the turn was written at the end. Runs with the role flags
`HUMAN_ROLES` (set by `GraphRuntime.human_state`).
"""

from __future__ import annotations

from typing import Any, Final

from langgraph.graph import END

from novaberg.agents.deps import GraphDeps
from novaberg.graph.base import Node, compile_graph, node_names
from novaberg.graph.contract import HUMAN_EVENT_NODE, HUMAN_TAIL_NODE
from novaberg.graph.nodes.dispatcher import dispatcher
from novaberg.graph.nodes.ei_calc import ei_calc
from novaberg.graph.nodes.enricher import enricher
from novaberg.graph.nodes.perception import perception
from novaberg.graph.nodes.salience import salience
from novaberg.graph.nodes.session_turn import session_turn
from novaberg.graph.nodes.situation_reader import situation_reader
from novaberg.graph.roles import HUMAN_ROLES
from novaberg.wire import GRAPH_HUMAN

__all__ = [
    "HUMAN_EVENT_NODE",
    "HUMAN_NODE_NAMES",
    "HUMAN_ROLES",
    "HUMAN_TABLE",
    "HUMAN_TAIL_NODE",
    "build_human_graph",
]

HUMAN_TABLE: Final = (
    Node("perception", perception, then="enricher"),
    Node("situation_reader", situation_reader, then="enricher", entry=True),
    Node("enricher", enricher, then="ei_calc"),
    Node("ei_calc", ei_calc, then=HUMAN_EVENT_NODE),
    Node(HUMAN_EVENT_NODE, session_turn, then="salience"),
    Node("salience", salience, then="dispatcher"),
    Node("dispatcher", dispatcher, then=END),
)
"""The HumanGraph's declaration: node names in stage order, and where each leads."""

HUMAN_NODE_NAMES: Final = node_names(HUMAN_TABLE)


def build_human_graph(deps: GraphDeps) -> Any:
    """The compiled HumanGraph."""
    return compile_graph(HUMAN_TABLE, deps, GRAPH_HUMAN)
