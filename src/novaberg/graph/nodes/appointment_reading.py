"""Appointment reading after the router (docs/behaviour/nodes.md#appointment-reading).
No model call.

Only the router knows whether the turn asks about appointments (`needs_timeline`,
`timeline_query`), so the reading sits right behind it. It reads the asked window or
search (`graph/appointments.py`), else the proactive window (today and tomorrow), and
writes `appointment_reading` for the content stage, which shows it as `[TERMINE]` — so
Nova knows tomorrow's appointment without the timeline agent being routed. A read error
sets `failed` and is logged at ERROR; an unreadable router question is logged and read
as the proactive window. Routing after this node is the router's (`route_after_router`).
The proactive window is what most turns read: db_access reads it with its own reads
(`loaded_appointments`), so this node only goes to the database for another window.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

import psycopg

from novaberg.agents.deps import GraphDeps
from novaberg.agents.timeline import repository
from novaberg.graph.appointments import (
    KIND_SEARCH,
    Reading,
    appointment_window,
    appointments_from_rows,
)
from novaberg.graph.state import ConversationState

log = logging.getLogger(__name__)


async def appointment_reading(state: ConversationState, deps: GraphDeps) -> dict[str, Any]:
    """Write `appointment_reading` (see the module docstring)."""
    tz = deps.settings.tz
    now = datetime.fromtimestamp(deps.clock(), tz=tz)
    window = appointment_window(
        bool(state.get("needs_timeline")), state.get("timeline_query") or {}, now, tz
    )
    if window.unreadable:
        log.error(
            "appointment_reading: router question unreadable (%s); proactive window read",
            window.unreadable,
        )
    user_id = state.get("user_id", "")
    reading = Reading(window)
    loaded = state.get("loaded_appointments")
    try:
        if window.kind == KIND_SEARCH or window.start is None or window.end is None:
            rows = await repository.by_title(deps.pool, user_id, window.search)
        elif loaded is not None and (loaded["von"], loaded["bis"]) == (window.start, window.end):
            rows = list(loaded["rows"])  # db_access read this very window with its reads
        else:
            rows = await repository.in_range(deps.pool, user_id, window.start, window.end)
    except psycopg.Error as exc:
        log.error("appointment_reading: timeline unreadable: %s", exc)
        reading.failed = True
    else:
        reading.appointments, reading.dropped = appointments_from_rows(rows, tz)
    return {
        "appointment_reading": reading.as_dict(),
        "_log": {
            "fenster": window.kind,
            "termine": len(reading.appointments),
            "failed": reading.failed,
            "verworfen": reading.dropped,
            "unlesbar": window.unreadable,
        },
    }
