"""dispatch_timeline: ConversationState ⇄ AgentState for the timeline agent (spec §1.5).

On success the id of the row this turn *wrote* (created or the new row of a
move) goes to `timeline_id` for the memory magnet (seed 002 §4.8a; the seed's
lookup in the last step never fired).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents.base import BaseAgent
from novaberg.agents.dispatch_common import run_dispatch

if TYPE_CHECKING:
    from novaberg.graph.contract import GraphDeps


async def dispatch_timeline(
    state: dict[str, Any], deps: GraphDeps, agent: BaseAgent
) -> dict[str, Any]:
    update, result, final = await run_dispatch(state, deps, agent)
    written = (final.get("parameter") or {}).get("timeline_id")
    if result.status == "abgeschlossen" and written:
        update["timeline_id"] = int(written)
    return update
