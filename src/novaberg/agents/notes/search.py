"""Notes search node: resolve the classifier's target to one note, or ask.

Fuzzy search weights title, content and topics by `target_typ`; a score gap at
least the average score cuts weaker hits; an exact name wins outright. Not
found: read reports it, add_content asks "create it?", others fail. Several
left for a destructive action: a disambiguation question (docs/behaviour/agents.md#notes).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from novaberg.agents.base import AgentState
from novaberg.agents.notes import NAME
from novaberg.agents.notes import repository as repo
from novaberg.agents.workflow import ask, fail, step

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


DISAMBIGUATE = frozenset({"update", "delete", "append", "clear_content", "rename"})
"""Actions that never guess between several notes: update, delete and append, and also
clear_content and rename, because they destroy or hide content too."""

ASK_TO_CREATE = frozenset({"add_content", "append"})
"""A missing note for these actions leads to the question whether to create it."""


def cut_by_gap(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Keep hits up to the first consecutive score gap ≥ the average score."""
    if len(rows) < 2:
        return rows
    scores = [float(r["score"]) for r in rows]
    average = sum(scores) / len(scores)
    for index in range(1, len(scores)):
        if scores[index - 1] - scores[index] >= average:
            return rows[:index]
    return rows


async def find_notes(
    deps: GraphDeps, user_id: str, target: str, target_typ: str
) -> list[dict[str, Any]]:
    if not target:
        return []
    hits = cut_by_gap(await repo.fuzzy(deps.pool, user_id, target, target_typ))
    exact = [h for h in hits if h["name"].strip().lower() == target.strip().lower()]
    if len(exact) == 1:
        return exact
    if hits:
        return hits
    exact_rows = await repo.find_exact(deps.pool, user_id, target)
    if exact_rows:
        return exact_rows
    return await repo.fulltext(deps.pool, user_id, target)


def render_note(row: dict[str, Any]) -> str:
    return f"[{row['name']} ({row['typ']})]\n{row['text'] or '(leer)'}"


def candidate(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "zusammenfassung": row["zusammenfassung"],
        "erstellt": row["created_at"].strftime("%d.%m.%Y"),
    }


async def search_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    user_id = (state.get("context") or {}).get("user_id", "")
    action = parameter.get("aktion", "read")
    target = parameter.get("target", "")

    if action == "read" and not target:
        rows = await repo.list_active(deps.pool, user_id)
        lines = [f"- {r['name']} ({r['typ']}): {r['zusammenfassung']}" for r in rows]
        return {
            "status": "abgeschlossen",
            "result": "\n".join(lines) if lines else "Es gibt keine Notizen.",
            "steps": step("suchen", "liste", anzahl=len(rows)),
        }

    hits = await find_notes(deps, user_id, target, parameter.get("target_typ", "titel"))
    if not hits:
        if action == "read":
            return {
                "status": "abgeschlossen",
                "result": f"Es gibt keine Notiz '{target}'.",
                "steps": step("suchen", "nicht_gefunden"),
            }
        if action in ASK_TO_CREATE and target:
            question = {
                "typ": "nicht_gefunden",
                "agent": NAME,
                "aktion": action,
                "target": target,
                "original_aufgabe": state.get("task", ""),
                "frage": f"Es gibt noch keine Notiz '{target}'. Soll ich sie anlegen?",
            }
            parameter.update(frage_typ="nicht_gefunden", original_aufgabe=state.get("task", ""))
            return ask("suchen", json.dumps(question, ensure_ascii=False), parameter)
        label = f"'{target}'" if target else "dazu"
        return fail("suchen", f"Ich habe keine Notiz {label} gefunden.")

    if len(hits) > 1 and action in DISAMBIGUATE:
        kandidaten = [candidate(h) for h in hits]
        question = {
            "typ": "disambiguierung",
            "agent": NAME,
            "aktion": action,
            "kandidaten": kandidaten,
            "frage": "Welche Notiz meinst du?",
        }
        # the utterance is kept: the answer ("die zweite") is not what to append
        parameter.update(
            frage_typ="disambiguierung",
            kandidaten=kandidaten,
            original_aufgabe=state.get("task", ""),
        )
        return ask("suchen", json.dumps(question, ensure_ascii=False, default=str), parameter)

    hit = hits[0]
    parameter["note_id"] = hit["id"]
    if action == "read":
        return {
            "status": "abgeschlossen",
            "result": render_note(hit),
            "parameter": parameter,
            "steps": step("suchen", "gelesen", id=hit["id"]),
        }
    return {"parameter": parameter, "steps": step("suchen", "gefunden", id=hit["id"])}
