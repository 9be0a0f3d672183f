"""Due reminders become impulses (issue 6: "an entry with `remind` produces an
impulse to the user at its time").

Every `REMINDER_POLL` seconds the due `timeline` rows are claimed (`erinnert_am`
set first, so two workers never deliver one reminder twice), the thought is
formed in the AgentGraph (seed 002 §5: the thought *arises* there, then the
CharacterGraph thinks it) and the impulse event is queued with
`reiz_herkunft="eigener_impuls"`. While a task agent's question is open for the
user, no reminder is delivered (the question must not be consumed by an
impulse); it is retried on the next poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime
from typing import Any, Final

from novaberg.agents.pending import has_pending
from novaberg.agents.timeline.repository import (
    due_reminders,
    mark_reminded,
    skip_stale_reminders,
)
from novaberg.events.model import impulse_event
from novaberg.events.queues import push_event
from novaberg.graph.agent_graph import run_agent_graph
from novaberg.graph.contract import GraphDeps
from novaberg.store.keys import Pair

log = logging.getLogger(__name__)

REMINDER_POLL: Final = 30.0
"""Seconds between looks for due reminders."""

REMINDER_AROUSAL: Final = 0.6
"""The state a reminder thought is formed in: alert, not alarmed."""


def reminder_thought(row: dict[str, Any], deps: GraphDeps) -> str:
    when = row["event_time"].astimezone(deps.settings.tz)
    clock = "" if row.get("precision") == "day" else f" um {when:%H:%M}"
    details = f" ({row['details']})" if row.get("details") else ""
    return f"Erinnerung: '{row['title']}'{details} ist am {when:%d.%m.%Y}{clock}."


async def deliver_due_reminders(deps: GraphDeps) -> int:
    """Deliver every reminder due now; return how many impulses were queued."""
    now = datetime.fromtimestamp(deps.clock(), UTC)
    await skip_stale_reminders(deps.pool, now)
    delivered = 0
    for row in await due_reminders(deps.pool, now):
        user_id = row["user_id"]
        if await has_pending(deps.redis, user_id):
            log.info("reminder %s waits: a question is open for %s", row["id"], user_id)
            continue
        if await mark_reminded(deps.pool, [row["id"]], now) != 1:
            continue  # another worker took it
        thought = reminder_thought(row, deps)
        event = impulse_event(
            user_id,
            deps.settings.character,
            thought,
            thought_arousal=REMINDER_AROUSAL,
            trigger_turn_id=None,
            extra={"impuls_aufgabe": "erinnerung", "timeline_id": row["id"]},
        )
        pair = Pair(user_id, deps.settings.character)
        try:
            await run_agent_graph(deps, pair, event.turn_id, thought, REMINDER_AROUSAL)
        except Exception:
            log.exception("AgentGraph failed for reminder %s; delivering it anyway", row["id"])
        await push_event(deps.redis, event)
        delivered += 1
        log.info("reminder %s queued as impulse %s for %s", row["id"], event.turn_id, pair)
    return delivered


async def reminder_loop(deps: GraphDeps, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            await deliver_due_reminders(deps)
        except Exception:
            log.exception("reminder delivery failed; retrying at the next poll")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), REMINDER_POLL)
