"""Directives execute node: the approved write, verified by re-reading
(docs/behaviour/agents.md#directives)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents import rule_store
from novaberg.agents.base import AgentState
from novaberg.agents.quota import QuotaExceeded
from novaberg.agents.receipts import receipt
from novaberg.agents.workflow import fail, now_from, step
from novaberg.store.tables import DIRECTIVES

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

NODE = "ausfuehren"
VERIFY_FAILED = "Die Änderung ließ sich nach dem Speichern nicht bestätigen."


def _full(exc: QuotaExceeded) -> dict[str, Any]:
    """A create, restore or update that would pass the limit of active directives."""
    return fail(NODE, f"Es gibt schon {exc.limit} Direktiven; lösche erst welche.")


def _done(message: str, what: str, **extra: Any) -> dict[str, Any]:
    return {
        "status": "abgeschlossen",
        "result": message,
        "steps": step(NODE, what, **extra),
    }


async def execute_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    user_id = (state.get("context") or {}).get("user_id", "")
    action = parameter.get("aktion")
    anweisung = str(parameter.get("anweisung") or "").strip()
    kontext = str(parameter.get("kontext") or "").strip() or None
    target_id = parameter.get("target_id")
    now = now_from(deps)
    pool = deps.pool
    try:
        if action == "read":
            rows = await rule_store.active(pool, DIRECTIVES, user_id)
            text = "\n".join(rule_store.render_rule(r) for r in rows)
            return _done(text or "Es gibt keine aktiven Direktiven.", "gelesen")
        if action == "create":
            try:
                new_id = await rule_store.insert(
                    pool,
                    DIRECTIVES,
                    user_id,
                    anweisung,
                    now,
                    kontext,
                    limit=deps.settings.max_directives,
                )
            except QuotaExceeded as exc:
                return _full(exc)
            await rule_store.verify(
                pool, DIRECTIVES, user_id, new_id, aktiv=True, anweisung=anweisung
            )
            return _done(
                f"Neue Direktive: '{anweisung}'.",
                "erstellt",
                id=new_id,
                verifiziert=True,
                **receipt("create", f"Direktive: + {anweisung}"),
            )
        if target_id is None:
            return fail(NODE, "Ich weiß nicht, welche Direktive gemeint ist.")
        row = await rule_store.get(pool, DIRECTIVES, user_id, int(target_id))
        if row is None:
            return fail(NODE, "Die Direktive gibt es nicht.")
        if action == "delete":
            await rule_store.set_active(pool, DIRECTIVES, user_id, [row["id"]], False, now)
            await rule_store.verify(pool, DIRECTIVES, user_id, row["id"], aktiv=False)
            return _done(
                f"Direktive '{row['anweisung']}' gelöscht.",
                "geloescht",
                id=row["id"],
                **receipt("delete", f"Direktive: − {row['anweisung']}"),
            )
        if action == "reactivate":
            try:
                await rule_store.reactivate(
                    pool, DIRECTIVES, user_id, row["id"], now, limit=deps.settings.max_directives
                )
            except QuotaExceeded as exc:
                return _full(exc)
            await rule_store.verify(
                pool, DIRECTIVES, user_id, row["id"], aktiv=True, geaendert_am=now
            )
            return _done(
                f"Direktive '{row['anweisung']}' wiederhergestellt.",
                "reaktiviert",
                id=row["id"],
                **receipt("reactivate", f"Direktive: + {row['anweisung']}"),
            )
        if action == "update":
            try:
                new_id = await rule_store.replace(
                    pool,
                    DIRECTIVES,
                    user_id,
                    [row["id"]],
                    anweisung,
                    now,
                    kontext or row.get("kontext"),
                    limit=deps.settings.max_directives,
                )
            except QuotaExceeded as exc:
                return _full(exc)
            await rule_store.verify(pool, DIRECTIVES, user_id, row["id"], aktiv=False)
            await rule_store.verify(
                pool, DIRECTIVES, user_id, new_id, aktiv=True, anweisung=anweisung
            )
            return _done(
                f"Direktive '{row['anweisung']}' geändert in '{anweisung}'.",
                "geaendert",
                id=row["id"],
                neuer_id=new_id,
                **receipt("update", f"Direktive: {row['anweisung']} → {anweisung}"),
            )
        return fail(NODE, f"Unbekannte Aktion '{action}'.")
    except rule_store.VerificationFailed as exc:
        return fail(NODE, VERIFY_FAILED, verifiziert=False, grund=str(exc))
