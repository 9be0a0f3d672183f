"""NotesAgent: the `notizen` subgraph (docs/behaviour/agents.md#notes).

validate → (resume | classify) → (create → execute | search → execute) → confirm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents.base import BaseAgent, EnrichQuery
from novaberg.agents.hooks import HOOK_ENTRIES_MAX, HOOK_WEIGHT, like_patterns
from novaberg.agents.notes import NAME
from novaberg.agents.notes.classify import DOMAIN_LANGUAGE, classify_node
from novaberg.agents.notes.crud import execute_node
from novaberg.agents.notes.resume import resume_node
from novaberg.agents.notes.search import search_node
from novaberg.agents.workflow import Workflow, search_workflow

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


class NotesAgent(BaseAgent):
    name = NAME
    router_intents = ("notizen_management",)
    aliases = ("notes", "notiz", "liste", "listen", "einkaufsliste")
    rejection_hint = "Sag zum Beispiel: 'Schreib Milch auf die Einkaufsliste'."
    offer_notice = "etwas auf eine Liste setzen oder notieren (Einkaufsliste, To-dos, Merkliste)"
    domain_language = DOMAIN_LANGUAGE
    workflow = Workflow(
        search_workflow,
        classify=classify_node,
        search=search_node,
        execute=execute_node,
        resume=resume_node,
    )

    def enrich_query(self, deps: GraphDeps, user_id: str, text: str) -> EnrichQuery | None:
        """Active notes whose name the utterance says, newest first
        (docs/behaviour/agents.md#enrich-hooks); None without a keyword."""
        patterns = like_patterns(text)
        if not patterns:
            return None
        return (
            "SELECT name, typ, text FROM notizen WHERE user_id = %s AND aktiv"
            " AND name ILIKE ANY(%s) ORDER BY updated_at DESC LIMIT %s",
            (user_id, patterns, HOOK_ENTRIES_MAX),
        )

    def enrich_rows(self, deps: GraphDeps, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [
            {
                "quelle": NAME,
                "subtyp": row["typ"] or "notiz",
                "inhalt": f"Notiz „{row['name']}“: {' '.join(str(row['text'] or '').split())[:200]}",
                "gewicht": HOOK_WEIGHT,
                "meta": {},
            }
            for row in rows
        ]
