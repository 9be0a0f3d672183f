"""Notes execute node: one write per action, each verified by re-reading the row.

Container vs content (docs/behaviour/agents.md#notes): delete archives the note, clear
empties its text; add/remove work on the list items the classifier named
(deterministic list edit) and fall back to a model rewrite only when no items
were named. A write whose re-read does not show the expected row is reported
as a failure, never as done (docs/behaviour/agents.md#verification).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from novaberg.agents.base import AgentState
from novaberg.agents.notes import repository as repo
from novaberg.agents.notes.classify import draft_note, rewrite_text
from novaberg.agents.quota import QuotaExceeded
from novaberg.agents.receipts import receipt
from novaberg.agents.workflow import ask, fail, now_from, step

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

NODE = "ausfuehren"


def split_items(text: str) -> tuple[list[str], str]:
    """List items of a note and the separator it uses (newline or comma)."""
    if not text.strip():
        return [], ", "
    if "\n" in text.strip():
        items = [line.strip().lstrip("-*• ").strip() for line in text.splitlines()]
        return [i for i in items if i], "\n"
    return [i.strip() for i in text.split(",") if i.strip()], ", "


def _matches(item: str, element: str) -> bool:
    item_l, element_l = item.lower(), element.lower()
    return item_l == element_l or element_l in item_l.split() or element_l in item_l


def add_items(text: str, elements: list[str]) -> str:
    items, sep = split_items(text)
    for element in elements:
        if not any(i.lower() == element.lower() for i in items):
            items.append(element)
    return sep.join(items)


def remove_items(text: str, elements: list[str]) -> tuple[str, list[str]]:
    """New text and the elements that were actually found and removed."""
    items, sep = split_items(text)
    removed = [e for e in elements if any(_matches(i, e) for i in items)]
    kept = [i for i in items if not any(_matches(i, e) for e in removed)]
    return sep.join(kept), removed


class VerificationFailed(Exception):
    """The re-read row does not show the write."""


async def _verify(deps: GraphDeps, user_id: str, note_id: int, **expected: Any) -> dict[str, Any]:
    row = await repo.get(deps.pool, user_id, note_id)
    if row is None:
        raise VerificationFailed(f"note {note_id} missing after write")
    for key, value in expected.items():
        if row[key] != value:
            raise VerificationFailed(f"{key}={row[key]!r}, expected {value!r}")
    return row


def _named_list(parameter: dict[str, Any]) -> dict[str, Any] | None:
    """The new note when the classification already named it and its items: nothing is left
    for a draft call to find, and one model round less is one round less the answer waits
    for (a message with several tasks runs its agents one after the other)."""
    name = str(parameter.get("target") or "").strip()
    items = [str(item) for item in parameter.get("elemente") or [] if str(item).strip()]
    if not name or not items:
        return None
    return {
        "name": name,
        "typ": repo.normalise_type("", name),
        "text": ", ".join(items),
        "themen": [],
    }


async def _create(state: AgentState, deps: GraphDeps, user_id: str) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    entwurf = parameter.get("entwurf") or _named_list(parameter)
    if not entwurf:
        draft = await draft_note(deps, parameter.get("normalisiert", ""), state.get("task", ""))
        if draft is None:
            return fail(NODE, "Ich konnte die Notiz nicht formulieren.")
        entwurf = draft.model_dump()
        if parameter.get("target"):
            entwurf["name"] = parameter["target"]
        if not entwurf.get("text") and parameter.get("elemente"):
            entwurf["text"] = ", ".join(parameter["elemente"])
    name = str(entwurf.get("name") or "").strip()
    if not name:
        return fail(NODE, "Mir fehlt ein Name für die Notiz.")
    parameter["entwurf"] = entwurf
    if not parameter.get("ohne_duplikatpruefung"):
        existing = await repo.find_exact(deps.pool, user_id, name)
        if existing:
            parameter.update(frage_typ="duplikat", note_id=existing[0]["id"])
            return ask(
                NODE,
                f"Es gibt bereits eine Notiz '{name}'. Soll ich sie aktualisieren "
                "oder eine neue anlegen?",
                parameter,
            )
    text = str(entwurf.get("text") or "").strip()
    try:
        note_id = await repo.insert(
            deps.pool,
            user_id,
            name=name,
            typ=str(entwurf.get("typ") or ""),
            text=text,
            themen=[str(t) for t in entwurf.get("themen") or []],
            now=now_from(deps),
            limit=deps.settings.max_notes,
        )
    except QuotaExceeded as exc:
        return fail(NODE, f"Du hast schon {exc.limit} Notizen; archiviere erst welche.")
    await _verify(deps, user_id, note_id, name=name, text=text, aktiv=True)
    shown = f": {text}" if text else ""
    items = [str(item) for item in parameter.get("elemente") or []]
    label = f"{name}: + {', '.join(items)}" if items else f"Neue Notiz: {name}"
    return _done(f"Notiz '{name}' angelegt{shown}.", parameter, note_id, "erstellt", label)


def _done(
    message: str, parameter: dict[str, Any], note_id: int, what: str, label: str
) -> dict[str, Any]:
    """A verified write: its result, and its receipt `label` for the person."""
    action = str(parameter.get("aktion") or what)
    return {
        "status": "abgeschlossen",
        "result": message,
        "parameter": {**parameter, "note_id": note_id},
        "steps": step(NODE, what, id=note_id, verifiziert=True, **receipt(action, label)),
    }


async def _change_text(
    state: AgentState, deps: GraphDeps, user_id: str, row: dict[str, Any]
) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    action = parameter.get("aktion")
    elements = list(parameter.get("elemente") or [])
    name, old = row["name"], row["text"]
    instruction = parameter.get("normalisiert") or state.get("task", "")
    if action == "clear_content":
        new, message, label = "", f"Notiz '{name}' geleert.", f"{name}: geleert"
    elif action == "append":
        addition = parameter.get("original_aufgabe") or state.get("task", "")
        new = f"{old}\n{addition}" if old else addition
        message, label = f"An '{name}' angehängt.", f"{name}: + {addition}"
    elif action == "add_content" and elements:
        new = add_items(old, elements)
        message = f"{', '.join(elements)} zu '{name}' hinzugefügt."
        label = f"{name}: + {', '.join(elements)}"
    elif action == "remove_content" and elements:
        new, removed = remove_items(old, elements)
        if not removed:
            return fail(NODE, f"{', '.join(elements)} steht nicht auf '{name}'.")
        message = f"{', '.join(removed)} von '{name}' gestrichen."
        label = f"{name}: − {', '.join(removed)}"
    else:
        rewritten = await rewrite_text(deps, name, old, instruction)
        if rewritten is None:
            return fail(NODE, f"Ich konnte '{name}' nicht ändern.")
        new, message, label = rewritten, f"Notiz '{name}' geändert.", f"{name}: geändert"
    await repo.set_text(deps.pool, user_id, row["id"], new, now_from(deps))
    await _verify(deps, user_id, row["id"], text=new, aktiv=True)
    shown = f" Jetzt: {new}" if new else ""
    return _done(message + shown, parameter, row["id"], str(action), label)


async def execute_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    user_id = (state.get("context") or {}).get("user_id", "")
    action = parameter.get("aktion")
    try:
        if action == "create":
            return await _create(state, deps, user_id)
        row = await repo.get(deps.pool, user_id, int(parameter.get("note_id") or 0))
        if row is None or not row["aktiv"]:
            return fail(NODE, "Die Notiz gibt es nicht mehr.")
        now = now_from(deps)
        if action == "delete":
            await repo.archive(deps.pool, user_id, row["id"], now)
            await _verify(deps, user_id, row["id"], aktiv=False, status="archiviert")
            return _done(
                f"Notiz '{row['name']}' gelöscht (archiviert).",
                parameter,
                row["id"],
                "geloescht",
                f"{row['name']}: gelöscht",
            )
        if action == "rename":
            new_name = str(parameter.get("neuer_name") or "").strip()
            if not new_name:
                return fail(NODE, f"Wie soll '{row['name']}' heißen?")
            await repo.set_fields(deps.pool, user_id, row["id"], now, name=new_name)
            await _verify(deps, user_id, row["id"], name=new_name)
            return _done(
                f"'{row['name']}' heißt jetzt '{new_name}'.",
                parameter,
                row["id"],
                "umbenannt",
                f"{row['name']} → {new_name}",
            )
        return await _change_text(state, deps, user_id, row)
    except VerificationFailed as exc:
        return fail(
            NODE,
            "Die Änderung ließ sich nach dem Speichern nicht bestätigen; bitte prüf die Notiz.",
            verifiziert=False,
            grund=str(exc),
        )
