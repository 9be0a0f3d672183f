"""Timeline execute node: create, reschedule/update (bi-temporal), delete — each verified.

Times: the classifier's `zeitausdruck` (verbatim) is parsed here with the
injected clock and the configured zone. Precision is "minute" when a clock time
was said, else "day" (local midnight). Moving keeps what the user did not say:
a day keeps the old clock, a clock keeps the old day (docs/behaviour/agents.md#timeline).
Duplicate = same title on the same local day (a same-title entry on another day
is a new appointment).
"""

from __future__ import annotations

from datetime import datetime, time
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from novaberg.agents.base import AgentState
from novaberg.agents.quota import QuotaExceeded
from novaberg.agents.receipts import receipt
from novaberg.agents.timeline import display
from novaberg.agents.timeline import repository as repo
from novaberg.agents.workflow import fail, now_from, step
from novaberg.memory.time_expressions.parser import TimeVector, parse_time

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

NODE = "ausfuehren"


class VerificationFailed(Exception):
    """The re-read row does not show the write."""


async def _verify(deps: GraphDeps, user_id: str, entry_id: int, **expected: Any) -> None:
    row = await repo.get(deps.pool, user_id, entry_id)
    if row is None:
        raise VerificationFailed(f"entry {entry_id} missing after write")
    for key, value in expected.items():
        if row[key] != value:
            raise VerificationFailed(f"{key}={row[key]!r}, expected {value!r}")


def _done(message: str, parameter: dict[str, Any], what: str, **extra: Any) -> dict[str, Any]:
    return {
        "status": "abgeschlossen",
        "result": message,
        "parameter": parameter,
        "steps": step(NODE, what, verifiziert=True, **extra),
    }


def moved_time(vector: TimeVector, old: datetime, tz: ZoneInfo) -> tuple[datetime, str]:
    """New event time and precision when moving an entry that was at `old`."""
    old_local = old.astimezone(tz)
    new_local = vector.when.astimezone(tz)
    if vector.day_recognised and not vector.clock_recognised:
        when = datetime.combine(new_local.date(), old_local.time(), tzinfo=tz)
    elif vector.clock_recognised and not vector.day_recognised:
        when = datetime.combine(old_local.date(), new_local.time(), tzinfo=tz)
    else:
        when = new_local
    keeps_clock = old_local.time() != time(0, 0)
    precision = "minute" if vector.clock_recognised or keeps_clock else "day"
    return when, precision


async def _create(state: AgentState, deps: GraphDeps, user_id: str) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    title = str(parameter.get("target") or "").strip()
    if not title:
        return fail(NODE, "Mir fehlt, was eingetragen werden soll.")
    tz, now = deps.settings.tz, now_from(deps)
    said = parameter.get("zeitausdruck") or ""
    vector = parse_time(said, now=now, tz=tz) if said else None
    if vector is None:
        vector = parse_time(state.get("task") or "", now=now, tz=tz)
    if vector is None:
        return fail(NODE, f"Wann soll '{title}' stattfinden?")
    when = vector.when.astimezone(tz)
    precision = "minute" if vector.clock_recognised else "day"
    if precision == "day":
        when = display.local_midnight(when.date(), tz)
    # an entry of the same title on the same local day is taken as the same appointment:
    # the person hears when it is and can move it instead
    day_start, day_end = display.day_window(when.date(), tz)
    duplicate = await repo.same_title_on_day(deps.pool, user_id, title, day_start, day_end)
    if duplicate is not None:
        shown = display.datum(duplicate, tz)
        return _done(f"'{title}' ist am {shown} bereits eingetragen.", parameter, "duplikat")
    try:
        entry_id = await repo.insert(
            deps.pool,
            user_id,
            title=title,
            event_time=when,
            event_type=parameter.get("event_type") or "termin",
            details="",
            precision=precision,
            now=now,
            limit=deps.settings.max_appointments,
        )
    except QuotaExceeded as exc:
        return fail(NODE, f"Du hast schon {exc.limit} Einträge; lösche erst welche.")
    await _verify(deps, user_id, entry_id, aktiv=True, title=title, event_time=when)
    parameter["timeline_id"] = entry_id
    entry = {
        "event_time": when,
        "precision": precision,
        "title": title,
        "event_type": parameter.get("event_type") or "termin",
    }
    shown = display.datum(entry, tz)
    return _done(
        f"'{title}' eingetragen für {shown}.",
        parameter,
        "erstellt",
        id=entry_id,
        **receipt("create", display.receipt_label(entry, tz)),
    )


async def _replace(
    state: AgentState, deps: GraphDeps, user_id: str, row: dict[str, Any]
) -> dict[str, Any]:
    """reschedule/update: the old row is replaced by the changed one (one transaction)."""
    parameter = dict(state.get("parameter") or {})
    action = parameter.get("aktion")
    tz, now = deps.settings.tz, now_from(deps)
    said = parameter.get("zeitausdruck") or ""
    when, precision = row["event_time"], row["precision"]
    if said:
        vector = parse_time(said, now=now, tz=tz, reference=row["event_time"])
        if vector is None:
            return fail(NODE, f"Die Zeitangabe '{said}' habe ich nicht verstanden.")
        when, precision = moved_time(vector, row["event_time"], tz)
    elif action == "reschedule":
        return fail(NODE, f"Auf wann soll ich '{row['title']}' verschieben?")
    details = parameter.get("details") or row["details"]
    if when == row["event_time"] and details == row["details"]:
        return fail(NODE, f"Was soll ich an '{row['title']}' ändern?")
    new_id = await repo.replace(
        deps.pool,
        user_id,
        row["id"],
        title=row["title"],
        event_time=when,
        event_type=row["event_type"],
        details=details,
        precision=precision,
        now=now,
    )
    if new_id is None:
        return fail(NODE, f"'{row['title']}' wurde inzwischen geändert oder gelöscht.")
    await _verify(deps, user_id, row["id"], aktiv=False)
    await _verify(deps, user_id, new_id, aktiv=True, event_time=when, details=details)
    parameter["timeline_id"] = new_id
    moved = {**row, "event_time": when, "precision": precision}
    shown = display.datum(moved, tz)
    verb = "verschoben auf" if action == "reschedule" else "geändert, jetzt"
    change = "verschoben" if action == "reschedule" else "geändert"
    return _done(
        f"'{row['title']}' {verb} {shown}.",
        parameter,
        "verschoben",
        id=row["id"],
        neuer_id=new_id,
        **receipt(str(action), display.receipt_label(moved, tz, change)),
    )


async def execute_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    user_id = (state.get("context") or {}).get("user_id", "")
    action = parameter.get("aktion")
    try:
        if action == "create":
            return await _create(state, deps, user_id)
        row = await repo.get(deps.pool, user_id, int(parameter.get("entry_id") or 0))
        if row is None or not row["aktiv"]:
            return fail(NODE, "Den Termin gibt es nicht mehr.")
        if action == "delete":
            await repo.deactivate(deps.pool, user_id, row["id"], now_from(deps))
            await _verify(deps, user_id, row["id"], aktiv=False)
            shown = display.datum(row, deps.settings.tz)
            return _done(
                f"'{row['title']}' am {shown} gelöscht.",
                parameter,
                "geloescht",
                id=row["id"],
                **receipt("delete", display.receipt_label(row, deps.settings.tz, "gelöscht")),
            )
        if action in {"reschedule", "update"}:
            return await _replace(state, deps, user_id, row)
        return fail(NODE, f"Unbekannte Aktion '{action}'.")
    except VerificationFailed as exc:
        return fail(
            NODE,
            "Die Änderung ließ sich nach dem Speichern nicht bestätigen; bitte prüf den Kalender.",
            verifiziert=False,
            grund=str(exc),
        )
