"""Identity db-validation: resolve which instructions a request touches, then ask.

A create that matches a deleted instruction turns into a restore question; a
create beyond three active instructions asks how to consolidate; every write
passes the mandatory gate (docs/behaviour/agents.md#identity).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents import rule_store
from novaberg.agents.base import AgentState
from novaberg.agents.gate import choice_question, gate_question
from novaberg.agents.rule_agent import CONSOLIDATE
from novaberg.agents.workflow import ask, fail
from novaberg.store.tables import IDENTITIES

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

NODE = "db_validieren"


def _quote(rows: list[dict[str, Any]]) -> str:
    return ", ".join(f"'{r['anweisung']}'" for r in rows)


def consolidation_question(
    parameter: dict[str, Any], active: list[dict[str, Any]]
) -> dict[str, Any]:
    new = parameter.get("anweisung", "")
    kandidaten = [{"id": r["id"], "anweisung": r["anweisung"]} for r in active]
    lines = "\n".join(f"{i}. {c['anweisung']}" for i, c in enumerate(kandidaten, 1))
    question = (
        f"Ich habe schon {len(active)} Anweisungen, wer ich sein soll:\n{lines}\n"
        f"Soll ich eine davon durch '{new}' ersetzen (welche?), alle zu einer "
        f"zusammenführen oder '{new}' trotzdem zusätzlich übernehmen?"
    )
    return ask(NODE, question, {**parameter, "frage_typ": CONSOLIDATE, "kandidaten": kandidaten})


async def _pick(
    parameter: dict[str, Any], rows: list[dict[str, Any]], probe: str, lead: str
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    target_id = parameter.get("target_id")
    if target_id is not None:
        hit = [r for r in rows if r["id"] == int(target_id)]
        if not hit:
            return None, fail(NODE, f"Die Anweisung Nummer {target_id} passt hier nicht.")
        return hit[0], None
    hits = rule_store.matching(rows, probe) if probe else []
    if not hits and len(rows) == 1:
        hits = rows
    if len(hits) == 1:
        return hits[0], None
    if not rows:
        return None, fail(NODE, "Dazu gibt es keine passende Anweisung.")
    return None, choice_question(parameter, hits or rows, lead, NODE)


async def db_validate_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    user_id = (state.get("context") or {}).get("user_id", "")
    action = parameter.get("aktion")
    anweisung = str(parameter.get("anweisung") or "").strip()
    active = await rule_store.active(deps.pool, IDENTITIES, user_id)
    inactive = await rule_store.recent_inactive(deps.pool, IDENTITIES, user_id)

    if action in {"create", "replace", "update", CONSOLIDATE} and not anweisung:
        return fail(NODE, "Wer genau soll ich sein?")
    if action == "create":
        deleted = rule_store.matching(inactive, anweisung)
        if deleted:
            old = deleted[0]
            parameter.update(aktion="reactivate", target_id=old["id"])
            parameter["frage"] = (
                f"Früher war ich schon mal '{old['anweisung']}'. Soll ich das wiederherstellen?"
            )
            return gate_question(
                parameter, f"Anweisung wiederherstellen: '{old['anweisung']}'", NODE
            )
        return gate_question(parameter, f"Neue Charakter-Anweisung: '{anweisung}'", NODE)
    if action == CONSOLIDATE:
        return consolidation_question(parameter, active)
    if action == "replace":
        return gate_question(
            parameter, f"Alle bisherigen Anweisungen durch '{anweisung}' ersetzen", NODE
        )
    if action in {"delete", "delete_alle"}:
        if action == "delete" and parameter.get("target_id") is not None:
            row, stop = await _pick(parameter, active, "", "Welche Anweisung meinst du?")
            if stop is not None:
                return stop
            targets = [row] if row else []
        else:
            targets = active
        if not targets:
            return fail(NODE, "Es gibt keine aktiven Charakter-Anweisungen.")
        parameter["target_ids"] = [r["id"] for r in targets]
        return gate_question(parameter, f"Charakter-Anweisung löschen: {_quote(targets)}", NODE)
    if action == "update":
        row, stop = await _pick(parameter, active, anweisung, "Welche Anweisung soll ich ändern?")
        if stop is not None:
            return stop
        assert row is not None
        parameter["target_id"] = row["id"]
        return gate_question(parameter, f"'{row['anweisung']}' ändern in '{anweisung}'", NODE)
    if action == "reactivate":
        if not inactive:
            return fail(NODE, "Es gibt keine gelöschte Anweisung zum Wiederherstellen.")
        row, stop = await _pick(parameter, inactive, anweisung, "Welche soll ich zurückholen?")
        if stop is not None:
            return stop
        assert row is not None
        parameter["target_id"] = row["id"]
        return gate_question(parameter, f"Anweisung wiederherstellen: '{row['anweisung']}'", NODE)
    return fail(NODE, f"Unbekannte Aktion '{action}'.")
