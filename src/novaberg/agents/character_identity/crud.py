"""Identity execute node: the approved write, verified by re-reading
(docs/behaviour/agents.md#identity)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents import rule_store
from novaberg.agents.base import AgentState
from novaberg.agents.character_identity.classify import merge_instructions
from novaberg.agents.receipts import receipt
from novaberg.agents.workflow import fail, now_from, step
from novaberg.store.tables import IDENTITIES

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

NODE = "ausfuehren"
VERIFY_FAILED = "Die Änderung ließ sich nach dem Speichern nicht bestätigen."


def _done(message: str, what: str, **extra: Any) -> dict[str, Any]:
    return {"status": "abgeschlossen", "result": message, "steps": step(NODE, what, **extra)}


async def _insert(deps: GraphDeps, user_id: str, anweisung: str) -> int:
    new_id = await rule_store.insert(deps.pool, IDENTITIES, user_id, anweisung, now_from(deps))
    await rule_store.verify(deps.pool, IDENTITIES, user_id, new_id, aktiv=True, anweisung=anweisung)
    return new_id


async def _deactivate(deps: GraphDeps, user_id: str, ids: list[int]) -> None:
    await rule_store.set_active(deps.pool, IDENTITIES, user_id, ids, False, now_from(deps))
    for rule_id in ids:
        await rule_store.verify(deps.pool, IDENTITIES, user_id, rule_id, aktiv=False)


async def _replace(deps: GraphDeps, user_id: str, old_ids: list[int], anweisung: str) -> int:
    """Deactivate `old_ids` and insert `anweisung` atomically, then verify both."""
    new_id = await rule_store.replace(
        deps.pool, IDENTITIES, user_id, old_ids, anweisung, now_from(deps)
    )
    for rule_id in old_ids:
        await rule_store.verify(deps.pool, IDENTITIES, user_id, rule_id, aktiv=False)
    await rule_store.verify(deps.pool, IDENTITIES, user_id, new_id, aktiv=True, anweisung=anweisung)
    return new_id


async def execute_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    user_id = (state.get("context") or {}).get("user_id", "")
    action = parameter.get("aktion")
    anweisung = str(parameter.get("anweisung") or "").strip()
    target_id = parameter.get("target_id")
    pool = deps.pool
    try:
        active = await rule_store.active(pool, IDENTITIES, user_id)
        if action == "read":
            text = "\n".join(rule_store.render_rule(r) for r in active)
            return _done(text or "Es gibt keine Charakter-Anweisungen.", "gelesen")
        if action == "create":
            new_id = await _insert(deps, user_id, anweisung)
            return _done(
                f"Ich bin ab jetzt: {anweisung}.",
                "erstellt",
                id=new_id,
                verifiziert=True,
                **receipt("create", f"Identität: + {anweisung}"),
            )
        if action in {"delete", "delete_alle"}:
            ids = [int(i) for i in parameter.get("target_ids") or []]
            if not ids:
                return fail(NODE, "Es gibt nichts zu löschen.")
            await _deactivate(deps, user_id, ids)
            return _done(
                "Charakter-Anweisung gelöscht; ich bin wieder ich selbst.",
                "geloescht",
                **receipt(str(action), f"Identität: − {len(ids)} Anweisung(en)"),
            )
        if action == "replace":
            new_id = await _replace(deps, user_id, [r["id"] for r in active], anweisung)
            return _done(
                f"Alles Bisherige ersetzt; ich bin jetzt: {anweisung}.",
                "ersetzt",
                id=new_id,
                **receipt("replace", f"Identität: {anweisung}"),
            )
        if action == "merge":
            merged = await merge_instructions(deps, [r["anweisung"] for r in active], anweisung)
            if merged is None:
                return fail(NODE, "Ich konnte die Anweisungen nicht zusammenführen.")
            new_id = await _replace(deps, user_id, [r["id"] for r in active], merged)
            return _done(
                f"Zusammengeführt zu: {merged}.",
                "zusammengefuehrt",
                id=new_id,
                **receipt("merge", f"Identität: {merged}"),
            )
        if target_id is None:
            return fail(NODE, "Ich weiß nicht, welche Anweisung gemeint ist.")
        row = await rule_store.get(pool, IDENTITIES, user_id, int(target_id))
        if row is None:
            return fail(NODE, "Die Anweisung gibt es nicht.")
        if action == "reactivate":
            now = now_from(deps)
            await rule_store.set_active(pool, IDENTITIES, user_id, [row["id"]], True, now)
            await rule_store.verify(
                pool, IDENTITIES, user_id, row["id"], aktiv=True, geaendert_am=now
            )
            return _done(
                f"Ich bin wieder: {row['anweisung']}.",
                "reaktiviert",
                id=row["id"],
                **receipt("reactivate", f"Identität: + {row['anweisung']}"),
            )
        if action == "update":
            new_id = await _replace(deps, user_id, [row["id"]], anweisung)
            return _done(
                f"'{row['anweisung']}' geändert in '{anweisung}'.",
                "geaendert",
                id=row["id"],
                neuer_id=new_id,
                **receipt("update", f"Identität: {row['anweisung']} → {anweisung}"),
            )
        return fail(NODE, f"Unbekannte Aktion '{action}'.")
    except rule_store.VerificationFailed as exc:
        return fail(NODE, VERIFY_FAILED, verifiziert=False, grund=str(exc))
