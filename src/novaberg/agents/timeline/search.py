"""Timeline search node: find the entries a read, change or delete is about.

By title (ILIKE, any date) when the classifier named one; otherwise by the time
expression's local day (its week for "Woche", its month for "Monat"; "diese Woche",
"diesen Monat" and "Wochenende" name the current or coming period), else the
default window now − 3 d … now + 14 d (docs/behaviour/agents.md#timeline). Several hits for a
change: exactly one in the future is taken, else the user chooses.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from novaberg.agents.base import AgentState
from novaberg.agents.timeline import NAME, display
from novaberg.agents.timeline import repository as repo
from novaberg.agents.workflow import ask, fail, now_from, step
from novaberg.memory.time_expressions.parser import parse_time

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps


NEXT_WORDS = ("nächst", "naechst", "kommend", "next", "coming")


def time_window(text: str, now: datetime, tz: ZoneInfo) -> tuple[datetime, datetime] | None:
    lowered = text.lower()
    if "wochenende" in lowered or "weekend" in lowered:
        return _weekend(now, tz, following=any(word in lowered for word in NEXT_WORDS))
    vector = parse_time(text, now=now, tz=tz)
    if vector is None:
        return _current_period(lowered, now, tz)
    day = vector.when.astimezone(tz).date()
    if "woche" in lowered or "week" in lowered:
        return display.week_window(day, tz)
    if "monat" in lowered or "month" in lowered:
        return display.month_window(day, tz)
    return display.day_window(day, tz)


def _current_period(lowered: str, now: datetime, tz: ZoneInfo) -> tuple[datetime, datetime] | None:
    """ "diese Woche", "this month": the week or month we are in (the parser names days,
    not periods)."""
    today = now.astimezone(tz).date()
    if "woche" in lowered or "week" in lowered:
        return display.week_window(today, tz)
    if "monat" in lowered or "month" in lowered:
        return display.month_window(today, tz)
    return None


def _weekend(now: datetime, tz: ZoneInfo, *, following: bool) -> tuple[datetime, datetime]:
    """Saturday and Sunday: this one (the one we are in, or the coming one), or the next."""
    today = now.astimezone(tz).date()
    saturday = today + timedelta(days=(5 - today.weekday()) % 7)
    if today.weekday() == 6:  # Sunday: this weekend began yesterday
        saturday = today - timedelta(days=1)
    if following:
        saturday += timedelta(days=7)
    return display.local_midnight(saturday, tz), display.local_midnight(
        saturday + timedelta(days=2), tz
    )


def _done(message: str, **extra: Any) -> dict[str, Any]:
    return {"status": "abgeschlossen", "result": message, "steps": step("suchen", **extra)}


async def search_node(state: AgentState, deps: GraphDeps) -> dict[str, Any]:
    parameter = dict(state.get("parameter") or {})
    user_id = (state.get("context") or {}).get("user_id", "")
    action = parameter.get("aktion", "read")
    target = parameter.get("target", "")
    zeit = parameter.get("zeitausdruck", "")
    tz = deps.settings.tz
    now = now_from(deps)

    if target:
        rows = await repo.by_title(deps.pool, user_id, target)
        label = f"zu '{target}'"
    elif action == "reschedule":
        return fail("suchen", "Welchen Termin soll ich verschieben?")
    elif zeit:
        window = time_window(zeit, now, tz)
        if window is None:
            return fail("suchen", f"Die Zeitangabe '{zeit}' habe ich nicht verstanden.")
        rows = await repo.in_range(deps.pool, user_id, *window)
        label = f"für '{zeit}'"
    elif action == "read":
        start, end = now - display.DEFAULT_WINDOW[0], now + display.DEFAULT_WINDOW[1]
        rows = await repo.in_range(deps.pool, user_id, start, end)
        label = "in den nächsten zwei Wochen"
    else:
        return fail("suchen", "Welchen Termin meinst du?")

    if not rows:
        if action == "read":
            return _done(f"Keine Termine {label} gefunden.", ergebnis="leer")
        return fail("suchen", f"Kein Termin {label} gefunden.")
    if action == "read":
        lines = [display.line(r, tz) for r in rows]
        return _done("\n".join(lines), ergebnis="gelesen", anzahl=len(rows))

    chosen = rows[0]
    if len(rows) > 1:
        future = [r for r in rows if r["event_time"] >= now]
        if len(future) == 1:
            chosen = future[0]
        else:
            kandidaten = [display.candidate(r, tz) for r in rows]
            question = {
                "typ": "disambiguierung",
                "agent": NAME,
                "aktion": action,
                "kandidaten": kandidaten,
                "frage": "Welchen Termin meinst du?",
            }
            parameter.update(frage_typ="disambiguierung", kandidaten=kandidaten)
            return ask("suchen", json.dumps(question, ensure_ascii=False), parameter)
    parameter["entry_id"] = chosen["id"]
    return {"parameter": parameter, "steps": step("suchen", "gefunden", id=chosen["id"])}
