"""dispatch_timeline: ConversationState ⇄ AgentState for the timeline agent
(docs/behaviour/agents.md#dispatch).

On success the id of the row this turn *wrote* (created or the new row of a
move) goes to `timeline_id`, so the turn's short-term memories are linked to it (looking
it up in the last step would find the confirm node's step, which carries no id).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents.base import BaseAgent
from novaberg.agents.dispatch_common import run_dispatch

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


async def dispatch_timeline(
    state: dict[str, Any], deps: GraphDeps, agent: BaseAgent
) -> dict[str, Any]:
    update, result, final = await run_dispatch(state, deps, agent)
    written = (final.get("parameter") or {}).get("timeline_id")
    if result.status == "abgeschlossen" and written:
        update["timeline_id"] = int(written)
    return update
