"""Due reminders become impulses: an entry with `remind` reaches the user as Nova's own
thought at its time (docs/behaviour/events.md#reminders).

Every `REMINDER_POLL` seconds each due `timeline` row is claimed with a lease
(`erinnerung_laeuft:{id}`, so two workers never work on one reminder at once), the thought
is formed in the AgentGraph (the thought *arises* there, then the CharacterGraph thinks it),
the impulse event is queued with `reiz_herkunft="eigener_impuls"`, and only then is
`erinnert_am` set. Nothing is lost: a worker that dies or is stopped before the event is
queued leaves the row unmarked, and it is delivered once the lease runs out. A worker that
dies between queueing and marking makes the next one queue the reminder again under the same
event id, which the event consumer drops as a duplicate. While a task agent's question is
open for the user, no reminder is delivered (the question must not be consumed by an
impulse); it is retried on the next poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime
from typing import Any, Final

from novaberg.agents.deps import GraphDeps
from novaberg.agents.pending import has_pending
from novaberg.agents.timeline.repository import (
    due_reminders,
    mark_reminded,
    skip_stale_reminders,
)
from novaberg.events.model import impulse_event, new_id
from novaberg.events.queues import push_event
from novaberg.graph.agent_graph import run_agent_graph
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.lease import Leases

log = logging.getLogger(__name__)

REMINDER_POLL: Final = 30.0
"""Seconds between looks for due reminders."""

REMINDER_AROUSAL: Final = 0.6
"""The state a reminder thought is formed in: alert, not alarmed."""

REMINDER_LEASE: Final = 300
"""Seconds a claim on one reminder lives after its worker died (the longest a reminder
then waits); while its thought is formed, however long, the worker keeps extending it."""


REMINDER_ID_PREFIX: Final = "erinnerung-"
"""Event and turn ids of reminders start with it (the turn id is new on every attempt): a
reminder's answer is told from other own thoughts by its `turn_id` (reach/routing.py)."""


def reminder_event_id(row: dict[str, Any]) -> str:
    """The same id for every attempt at one reminder, so a repeat is a duplicate."""
    return f"{REMINDER_ID_PREFIX}{row['id']}-{int(row['event_time'].timestamp())}"


def is_reminder_turn(turn_id: str) -> bool:
    return turn_id.startswith(REMINDER_ID_PREFIX)


def reminder_thought(row: dict[str, Any], deps: GraphDeps) -> str:
    when = row["event_time"].astimezone(deps.settings.tz)
    clock = "" if row.get("precision") == "day" else f" um {when:%H:%M}"
    details = f" ({row['details']})" if row.get("details") else ""
    return f"Erinnerung: '{row['title']}'{details} ist am {when:%d.%m.%Y}{clock}."


async def deliver_due_reminders(deps: GraphDeps, agent_graph: Any) -> int:
    """Deliver every reminder due now; return how many impulses were queued and marked.

    `agent_graph` is the compiled AgentGraph (`GraphRuntime.agent_graph`)."""
    now = datetime.fromtimestamp(deps.clock(), UTC)
    await skip_stale_reminders(deps.pool, now)
    delivered = 0
    leases = Leases(deps.redis)
    for row in await due_reminders(deps.pool, now):
        user_id = row["user_id"]
        if await has_pending(deps.redis, user_id):
            log.info("reminder %s waits: a question is open for %s", row["id"], user_id)
            continue
        claim = keys.reminder_claim(row["id"])
        token = await leases.take(claim, REMINDER_LEASE)
        if token is None:
            continue  # another worker has it
        try:
            async with leases.held(claim, token, REMINDER_LEASE):
                await _deliver(deps, agent_graph, row)
        except Exception:
            log.exception("reminder %s not queued; retried at the next poll", row["id"])
            await leases.release(claim, token)
            continue
        if await mark_reminded(deps.pool, [row["id"]], now) == 1:
            delivered += 1
    return delivered


async def _deliver(deps: GraphDeps, agent_graph: Any, row: dict[str, Any]) -> None:
    """Form the reminder's thought and queue it as an impulse event."""
    user_id = row["user_id"]
    thought = reminder_thought(row, deps)
    event = impulse_event(
        user_id,
        deps.settings.character,
        thought,
        thought_arousal=REMINDER_AROUSAL,
        trigger_turn_id=None,
        extra={"impuls_aufgabe": "erinnerung", "timeline_id": row["id"]},
        event_id=reminder_event_id(row),
        turn_id=f"{REMINDER_ID_PREFIX}{new_id()}",
    )
    pair = Pair(user_id, deps.settings.character)
    try:
        await run_agent_graph(agent_graph, pair, event.turn_id, thought, REMINDER_AROUSAL)
    except Exception:
        log.exception("AgentGraph failed for reminder %s; delivering it anyway", row["id"])
    await push_event(deps.redis, event)
    log.info("reminder %s queued as impulse %s for %s", row["id"], event.turn_id, pair)


async def reminder_loop(deps: GraphDeps, agent_graph: Any, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            await deliver_due_reminders(deps, agent_graph)
        except Exception:
            log.exception("reminder delivery failed; retrying at the next poll")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), REMINDER_POLL)
