"""Every key a node returns is a declared ConversationState channel (seed 002 §4).

LangGraph silently drops undeclared keys at node borders. The node wrapper already raises
`UndeclaredChannelError`; this test checks independently: it builds each graph, runs it
with scripted answers, walks the stream of per-node updates and checks every returned key
against `STATE_CHANNELS`, and that every node of the graph is a wrapped node.

Add a graph by appending a `GraphCase` to `CASES` (the CharacterGraph goes here too).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from graph_helpers import script_human

from novaberg.graph.contract import HumanTurn
from novaberg.graph.runner import GraphRuntime
from novaberg.graph.state import STATE_CHANNELS
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair

PAIR = Pair("meister", "nova")


@dataclass(frozen=True)
class GraphCase:
    """A graph under test: how to get it compiled and how to build its initial state."""

    name: str
    compiled: Callable[[GraphRuntime], Any]
    initial_state: Callable[[GraphRuntime, ScriptedLLM], Awaitable[dict[str, Any]]]


async def _human_state(runtime: GraphRuntime, scripted: ScriptedLLM) -> dict[str, Any]:
    script_human(scripted)
    turn = HumanTurn(PAIR, uuid.uuid4().hex, "Ich ziehe nach Köln!", ["m1"], 1_790_000_000.0)
    return runtime.human_state(turn)


async def _character_state(runtime: GraphRuntime, scripted: ScriptedLLM) -> dict[str, Any]:
    """A user event that takes most branches: management (→ planner), a fact check that
    fails twice (→ self-trigger channels), judges that reject (→ corrector, fallback)."""
    script_human(scripted)
    scripted.add(
        ".*",
        {"momentum": "low", "management_action": "agent", "management_target": "notizen"},
        schema="RouterDecision",
    )
    scripted.add(".*", fault="malformed", schema="ThinkerCheck")
    for schema in ("PsychologistVerdict", "EthicistVerdict"):
        scripted.add(".*", {"score": 0.95, "begruendung": "nein"}, schema=schema)
    scripted.add(".*", {"score": 0.95, "direktiven_score": 0.9}, schema="JuristVerdict")
    from novaberg.graph.contract import CharacterTurn

    turn_id = uuid.uuid4().hex
    payload = {
        "turn_id": turn_id,
        "user_prompt": "Ist mein Termin am Montag um 14 Uhr?",
        "reiz_herkunft": "nutzer_turn",
        "nachrichten_ids": ["m1"],
        "empfangen_am": 1_790_000_000.0,
        "current_emotion": "stress",
        "current_arousal": 0.6,
    }
    return runtime.character_state(CharacterTurn(PAIR, turn_id, "user", payload))


CASES = [
    GraphCase("human", lambda runtime: runtime.human_graph, _human_state),
    GraphCase("character", lambda runtime: runtime.character_graph, _character_state),
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
async def test_every_returned_key_is_a_declared_channel(
    case: GraphCase, runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    compiled = case.compiled(runtime)
    graph_nodes = {name for name in compiled.get_graph().nodes if not name.startswith("__")}
    state = await case.initial_state(runtime, scripted)

    ran: set[str] = set()
    async for update in compiled.astream(state, stream_mode="updates"):
        for node, returned in update.items():
            if node.startswith("__"):
                continue
            ran.add(node)
            undeclared = set(returned or {}) - STATE_CHANNELS
            assert not undeclared, f"{case.name}/{node} returned undeclared {undeclared}"
            assert "node_timings" in (returned or {}), f"{node} is not a wrapped node"
    assert ran, "the graph ran no node"
    assert ran <= graph_nodes
    # node names must not collide with channel names (LangGraph rejects that)
    assert not graph_nodes & STATE_CHANNELS
