"""TimelineAgent: the `timeline` subgraph (docs/behaviour/agents.md#timeline).

validate → (resume | classify) → (create → execute | search → execute) → confirm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents.base import BaseAgent, EnrichQuery
from novaberg.agents.hooks import HOOK_ENTRIES_MAX, HOOK_WEIGHT, like_patterns
from novaberg.agents.timeline import NAME, display
from novaberg.agents.timeline import repository as repo
from novaberg.agents.timeline.classify import DOMAIN_LANGUAGE, classify_node
from novaberg.agents.timeline.crud import execute_node
from novaberg.agents.timeline.resume import resume_node
from novaberg.agents.timeline.search import search_node
from novaberg.agents.workflow import Workflow, now_from, search_workflow

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


class TimelineAgent(BaseAgent):
    name = NAME
    router_intents = ("timeline_management",)
    aliases = ("termin", "termine", "kalender", "calendar", "appointments")
    rejection_hint = "Sag zum Beispiel: 'Trag mir Zahnarzt am Donnerstag um 14 Uhr ein'."
    offer_notice = "einen Termin, Geburtstag oder eine Frist mit Zeitpunkt eintragen"
    domain_language = DOMAIN_LANGUAGE
    workflow = Workflow(
        search_workflow,
        classify=classify_node,
        search=search_node,
        execute=execute_node,
        resume=resume_node,
    )

    def enrich_query(self, deps: GraphDeps, user_id: str, text: str) -> EnrichQuery | None:
        """Coming active entries whose title contains a word of the utterance, earliest
        first (docs/behaviour/agents.md#enrich-hooks); None without a keyword."""
        patterns = like_patterns(text)
        if not patterns:
            return None
        return (
            "SELECT id, event_time, event_type, title, details, precision FROM timeline"
            f" WHERE user_id = %s AND aktiv{repo.APPOINTMENTS_ONLY} AND event_time >= %s"
            " AND title ILIKE ANY(%s)"
            " ORDER BY event_time LIMIT %s",
            (user_id, now_from(deps), patterns, HOOK_ENTRIES_MAX),
        )

    def enrich_rows(self, deps: GraphDeps, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                "quelle": NAME,
                "subtyp": row["event_type"],
                "inhalt": f"Termin: {display.line(row, deps.settings.tz)}",
                "gewicht": HOOK_WEIGHT,
                "meta": {"timeline_id": row["id"]},
            }
            for row in rows
        ]
