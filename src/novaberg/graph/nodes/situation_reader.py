"""Situation reading (HumanGraph, docs/behaviour/nodes.md#situation): the situation's one
model call, made in Path 1 next to perception.

Why here: the CharacterGraph's router must see the situation (`[LAGE]`), so the situation
comes before it — but a call of its own in front of the router would add a round the person
waits for. The call needs nothing perception computes (the stored understanding, the
session, the utterance), so it runs in the same step as perception and costs no round. Its
answer travels in the `message` event (`sachlage_lesung`); the CharacterGraph's situation
node writes it forward, derives the acute objects and stores it — as before, only the call
moved. A failed call travels as `{"ausfall": reason}` (the node then keeps the stored
understanding, as when its own call failed). A model that cannot be used hands on no
reading at all: the situation node then makes the call itself and meets the dead model
there, where it ends the turn before any answer (Path 1's perception still travels).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from novaberg.agents.deps import GraphDeps
from novaberg.graph.nodes.situation import READING_FAILED, READING_KEY, _decode, read_situation
from novaberg.graph.nodes.situation_memory import offered_values
from novaberg.graph.state import ConversationState
from novaberg.graph.turn_head import head_of
from novaberg.llm.errors import ModelUnavailable
from novaberg.memory import session_turns
from novaberg.memory.pair_state import load_situation
from novaberg.pair import Pair

log = logging.getLogger(__name__)


async def situation_reader(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """The channel `situation_reading`: the form-checked reading, or why the call failed."""
    pair = Pair(state.get("user_id", ""), state.get("character_id", ""))
    stored_raw, turns = await asyncio.gather(
        load_situation(deps.redis, pair), session_turns.read(deps.redis, pair)
    )
    stored = _decode(stored_raw)
    # the bubble is gone: the model is offered the pair's stored object values instead
    offered, offered_log = await offered_values(deps, pair) if stored is None else ("", {})
    try:
        reading, failure = await read_situation(deps, stored, head_of(state, deps, turns), offered)
    except ModelUnavailable as exc:
        log.warning("situation reading: model unusable (%s); the CharacterGraph calls", exc)
        return {"_log": {"ausfall": f"{type(exc).__name__}: {exc}"[:300], "uebergeben": False}}
    if reading is None:
        return {
            "situation_reading": {READING_FAILED: failure},
            "_log": {"ausfall": failure, **offered_log},
        }
    return {
        "situation_reading": {READING_KEY: reading},
        "_log": {
            "objekte": [obj["name"] for obj in reading["objekte"]],
            "bezug": reading["objekt_bezug"],
            "stand_vorher": stored_raw is not None,
            **offered_log,
        },
    }
