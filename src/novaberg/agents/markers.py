"""Session markers `[ERLEDIGT]` / `[FEHLGESCHLAGEN]` for the user turn line.

Why: without them the next turn's history shows a request but not whether it was carried
out, and the model re-does or denies finished work
(docs/behaviour/agents.md#session-markers). The dispatcher puts the marker on the turn it
writes. Questions, refusals and declined gates stay unmarked.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from novaberg.agents.base import AgentResult

DONE_MARKER = "[ERLEDIGT]"
FAILED_MARKER = "[FEHLGESCHLAGEN]"


def session_marker(agent_results: Iterable[AgentResult | dict[str, Any]] | None) -> str | None:
    """`[FEHLGESCHLAGEN]` if any agent failed this turn, else `[ERLEDIGT]` if the
    turn's last agent result is done, else None (no agent, or a question/refusal)."""
    results = [AgentResult.coerce(r) for r in (agent_results or [])]
    if not results:
        return None
    if any(r.status == "fehler" for r in results):
        return FAILED_MARKER
    if results[-1].status == "abgeschlossen":
        return DONE_MARKER
    return None
