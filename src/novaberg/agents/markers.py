"""Session markers `[ERLEDIGT]` / `[FEHLGESCHLAGEN]` for the user turn line.

Why: without them the next turn's history shows a request but not whether it was carried
out, and the model re-does or denies finished work
(docs/behaviour/agents.md#session-markers). The dispatcher puts the marker on the turn it
writes. Questions, refusals and declined gates stay unmarked. With several tasks in one
message, one failure marks the turn failed (the person must learn of it); otherwise one done
task marks it done, whatever order the others ended in.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from novaberg.agents.base import AgentResult

DONE_MARKER = "[ERLEDIGT]"
FAILED_MARKER = "[FEHLGESCHLAGEN]"


def session_marker(agent_results: Iterable[AgentResult | dict[str, Any]] | None) -> str | None:
    """`[FEHLGESCHLAGEN]` if any agent failed this turn, else `[ERLEDIGT]` if any agent
    result is done, else None (no agent, or only questions/refusals/declines)."""
    results = [AgentResult.coerce(r) for r in (agent_results or [])]
    if not results:
        return None
    if any(r.status == "fehler" for r in results):
        return FAILED_MARKER
    if any(r.status == "abgeschlossen" for r in results):
        return DONE_MARKER
    return None
