"""session_turn: the HumanGraph stores the user's turn as soon as the CharacterGraph can
use it (docs/behaviour/nodes.md#session-turn).

The turn is built exactly as the dispatcher builds it (`build_session_turn`) and appended
now, so the `message` event can leave before salience runs. Two fields are only known
later: `intentionen` (salience) and `kern` (short-term condensing). The dispatcher at the
end of the HumanGraph fills them into this same stored turn (`memory/session_turns.complete`),
so the session ends up holding what it held when the whole turn was written at the end.
"""

from __future__ import annotations

from typing import Any

from novaberg.agents.deps import GraphDeps
from novaberg.graph.nodes.dispatcher import build_session_turn
from novaberg.graph.state import ConversationState
from novaberg.memory import session_turns
from novaberg.pair import Pair


async def session_turn(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Append the user turn now; the dispatcher completes it after salience."""
    turn = build_session_turn(state, deps.clock())
    if turn is None:
        return {"_log": {"session_turn": None}}
    pair = Pair(state["user_id"], state["character_id"])
    length = await session_turns.append_open(deps.redis, pair, turn)
    return {
        "session_turn_written": True,
        "session_turn_open": True,
        "session_turn_time": turn["zeit"],
        "_log": {"session_turn": {"rolle": turn["rolle"], "laenge": length}},
    }
