"""Directives db-validation: check the request against the stored rules, then ask.

First hit wins (docs/behaviour/agents.md#directives): a similar active rule asks "create
anyway?"; a matching deleted rule turns create into reactivate and asks
"restore?"; delete/update need an active rule, reactivate an inactive one
(several → a choice question, none → fault). Every write then passes the
mandatory gate — the similarity and restore questions are that gate.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents import rule_store
from novaberg.agents.base import AgentState
from novaberg.agents.gate import choice_question, gate_question
from novaberg.agents.workflow import fail
from novaberg.store.tables import DIRECTIVES

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

NODE = "db_validieren"


async def _resolve(
    deps: GraphDeps, user_id: str, parameter: dict[str, Any], want_active: bool
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """`(row, None)` for the one rule meant, or `(None, final update)` to stop."""
    state_word = "aktive" if want_active else "gelöschte"
    target_id = parameter.get("target_id")
    if target_id is not None:
        row = await rule_store.get(deps.pool, DIRECTIVES, user_id, int(target_id))
        if row is None or row["aktiv"] is not want_active:
            return None, fail(NODE, f"Es gibt keine {state_word} Direktive Nummer {target_id}.")
        return row, None
    if want_active:
        pool_rows = await rule_store.active(deps.pool, DIRECTIVES, user_id)
    else:
        pool_rows = await rule_store.recent_inactive(deps.pool, DIRECTIVES, user_id)
    probe = parameter.get("anweisung") or parameter.get("kontext") or ""
    hits = rule_store.matching(pool_rows, probe)
    if not hits and parameter.get("aktion") == "update":
        hits = pool_rows  # the new text rarely matches the old one; let the user choose
    if len(hits) == 1:
        return hits[0], None
    if not hits:
        return None, fail(NODE, f"Ich habe keine passende {state_word} Direktive gefunden.")
    return None, choice_question(parameter, hits, "Welche Direktive meinst du?", NODE)


async def db_validate_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    user_id = (state.get("context") or {}).get("user_id", "")
    action = parameter.get("aktion")
    anweisung = str(parameter.get("anweisung") or "").strip()

    if action == "create":
        if not anweisung:
            return fail(NODE, "Welche Regel soll ich mir merken?")
        similar = rule_store.matching(
            await rule_store.active(deps.pool, DIRECTIVES, user_id), anweisung
        )
        if similar:
            parameter["frage"] = (
                f"Es gibt schon eine ähnliche Direktive: '{similar[0]['anweisung']}'. "
                f"Soll ich '{anweisung}' trotzdem zusätzlich anlegen?"
            )
            return gate_question(parameter, f"Neue Direktive: '{anweisung}'", NODE)
        deleted = rule_store.matching(
            await rule_store.recent_inactive(deps.pool, DIRECTIVES, user_id), anweisung
        )
        if deleted:
            old = deleted[0]
            parameter.update(aktion="reactivate", target_id=old["id"], alt=old["anweisung"])
            parameter["frage"] = (
                f"Es gibt die gelöschte Direktive '{old['anweisung']}'. "
                "Soll ich sie wiederherstellen?"
            )
            return gate_question(
                parameter, f"Direktive wiederherstellen: '{old['anweisung']}'", NODE
            )
        return gate_question(parameter, f"Neue Direktive: '{anweisung}'", NODE)

    if action in {"delete", "update", "reactivate"}:
        row, stop = await _resolve(deps, user_id, parameter, want_active=action != "reactivate")
        if stop is not None:
            return stop
        assert row is not None
        parameter.update(target_id=row["id"], alt=row["anweisung"])
        if action == "delete":
            return gate_question(parameter, f"Direktive löschen: '{row['anweisung']}'", NODE)
        if action == "reactivate":
            return gate_question(
                parameter, f"Direktive wiederherstellen: '{row['anweisung']}'", NODE
            )
        if not anweisung:
            return fail(NODE, f"Wie soll die Direktive '{row['anweisung']}' künftig lauten?")
        return gate_question(
            parameter, f"Direktive '{row['anweisung']}' ändern in '{anweisung}'", NODE
        )
    return fail(NODE, f"Unbekannte Aktion '{action}'.")
