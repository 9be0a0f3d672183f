"""Appointment reading after the router (docs/behaviour/nodes.md#appointment-reading).
No model call.

Only the router knows whether the turn asks about appointments (`needs_timeline`,
`timeline_query`), so the reading sits right behind it. It reads the asked window or
search (`graph/appointments.py`), else the proactive window (today and tomorrow), and
writes `appointment_reading` for the content stage, which shows it as `[TERMINE]` — so
Nova knows tomorrow's appointment without the timeline agent being routed. A read error
sets `failed` and is logged at ERROR; an unreadable router question is logged and read
as the proactive window. Routing after this node is the router's (`route_after_router`).
The proactive window is what most turns read: it comes with the turn context db_access
read, so this node only goes to the timeline for another window.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
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
from novaberg.graph.state import ConversationState, turn_context

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
    proactive = turn_context(state).appointments
    rows: Sequence[dict[str, Any]] | None
    try:
        if window.kind == KIND_SEARCH or window.start is None or window.end is None:
            rows = await repository.by_title(deps.pool, user_id, window.search)
        elif (window.start, window.end) == (proactive.start, proactive.end):
            rows = proactive.rows  # None: the turn context could not read it (logged there)
        else:
            rows = await repository.in_range(deps.pool, user_id, window.start, window.end)
    except psycopg.Error as exc:
        log.error("appointment_reading: timeline unreadable: %s", exc)
        rows = None
    if rows is None:
        reading.failed = True
    else:
        reading.appointments, reading.dropped = appointments_from_rows(list(rows), tz)
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
