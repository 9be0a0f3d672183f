"""landscape: the turn's conversation landscape before any model call
(docs/behaviour/nodes.md#landscape).

The conversation vector computes the landscape (six axes → 64 sectors → 14 clusters,
initiative; `ei/landscape.py`) first and without a model, from the counterpart's
perception, Nova's register and the user's intentions. The stance needs only that, and the
composer needs the stance — so this node computes the same landscape right after the
enricher (which brings the current intentions) and writes it into `hypothesis_detail`,
letting the stance and the composer go ahead while the vector's free-text call runs next to
the composer. The conversation vector later writes the full `hypothesis_detail`, with the
same landscape (its inputs have not changed by then).
"""

from __future__ import annotations

from typing import Any

from novaberg.agents.deps import GraphDeps
from novaberg.graph.nodes.conversation_vector import landscape_of
from novaberg.graph.state import ConversationState


async def landscape(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Write the landscape keys of `hypothesis_detail` (cluster, axes, sector, initiative)."""
    land = landscape_of(state)
    detail = {**(state.get("hypothesis_detail") or {}), **land.as_detail()}
    return {
        "hypothesis_detail": detail,
        "_log": {"cluster": land.cluster, "sektor": land.sector, "initiative": land.initiative},
    }
