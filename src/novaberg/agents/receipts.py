"""Receipts: what a run's agents stored, as short lines the person can check.

Nova's answer says in words what was done; a receipt under it says it exactly
("Einkaufsliste: + Brot", "Termin: Meeting, Mo 12.05. 10:00") and links to the stored item
(docs/behaviour/web.md#the-page). An agent records a receipt on the audit step of a write
it has verified by re-reading the row (docs/behaviour/agents.md#verification), so a receipt
never claims a write the store does not show; `stored_changes` collects them from the run's
agent results, in the order they were written, and the answer payload carries them
(`aenderungen`, graph/runner.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from novaberg.agents.base import AgentResult

RECEIPT: Final = "beleg"
"""Audit-step key of a verified write's receipt: `{"aktion", "text"}`."""

LABEL_MAX: Final = 120
"""A receipt is one short line; a longer label is cut with an ellipsis."""


@dataclass(frozen=True, slots=True)
class StoredChange:
    """One stored change: which agent, which action (the agent's own action name), and the
    line shown to the person."""

    agent: str
    action: str
    label: str

    def wire(self) -> dict[str, str]:
        """One entry of a `character_response`'s `aenderungen`."""
        return {"agent": self.agent, "aktion": self.action, "text": self.label}


def shorten(text: str, limit: int = LABEL_MAX) -> str:
    """`text` on one line, at most `limit` characters (cut with "…")."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def receipt(action: str, label: str) -> dict[str, Any]:
    """The audit-step fields that record a verified write (`step(..., **receipt(...))`)."""
    return {RECEIPT: {"aktion": action, "text": shorten(label)}}


def stored_changes(
    agent_results: Iterable[AgentResult | dict[str, Any]] | None,
) -> list[StoredChange]:
    """Every receipt of the run's agent results, in the order the writes happened."""
    changes: list[StoredChange] = []
    for result in (AgentResult.coerce(r) for r in agent_results or []):
        for step in result.steps:
            found = step.get(RECEIPT)
            if isinstance(found, dict) and found.get("text"):
                changes.append(
                    StoredChange(result.agent_name, str(found.get("aktion") or ""), found["text"])
                )
    return changes
