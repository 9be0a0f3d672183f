"""session_turn: the HumanGraph stores the user's turn as soon as the CharacterGraph can
use it (docs/behaviour/nodes.md#session-turn).

The turn is built exactly as the dispatcher builds it (`build_session_turn`) and appended
now, so the `message` event can leave before salience runs. Two fields are only known
later: `intentionen` (salience) and `kern` (short-term condensing). The dispatcher at the
end of the HumanGraph fills them into this same stored turn (`store.session.complete_turn`),
so the session ends up holding what it held when the whole turn was written at the end.
"""

from __future__ import annotations

from typing import Any

from novaberg.agents.deps import GraphDeps
from novaberg.graph.nodes.dispatcher import build_session_turn
from novaberg.graph.state import ConversationState
from novaberg.pair import Pair
from novaberg.store.session import append_open_turn


async def session_turn(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Append the user turn now; the dispatcher completes it after salience."""
    turn = build_session_turn(state, deps.clock())
    if turn is None:
        return {"_log": {"session_turn": None}}
    length = await append_open_turn(deps.redis, Pair(state["user_id"], state["character_id"]), turn)
    return {
        "session_turn_written": True,
        "session_turn_open": True,
        "session_turn_time": turn["zeit"],
        "_log": {"session_turn": {"rolle": turn["rolle"], "laenge": length}},
    }
