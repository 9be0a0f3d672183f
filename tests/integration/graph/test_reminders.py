"""A due `remind` appointment becomes exactly one impulse event for its user."""

from __future__ import annotations

import asyncio
import contextlib
import json
from datetime import UTC, datetime, timedelta

import pytest

from novaberg.agents.pending import store_pending
from novaberg.events.reminders import deliver_due_reminders
from novaberg.graph.agent_graph import build_agent_graph
from novaberg.pair import Pair
from novaberg.store import keys

NOW = datetime.fromtimestamp(1_790_000_000.0, UTC)  # the graph conftest's FIXED_NOW


@pytest.fixture
def agent_graph(deps):  # type: ignore[no-untyped-def]
    return build_agent_graph(deps)


async def _appointment(db, title: str, minutes_ago: int, remind: bool = True) -> int:  # type: ignore[no-untyped-def]
    async with db.connection() as conn:
        cur = await conn.execute(
            "INSERT INTO timeline (user_id, event_time, title, precision, remind)"
            " VALUES ('anna', %s, %s, 'minute', %s) RETURNING id",
            (NOW - timedelta(minutes=minutes_ago), title, remind),
        )
        row = await cur.fetchone()
        return int(row["id"])


async def test_due_reminder_is_delivered_once_as_an_impulse(deps, agent_graph, redis, db) -> None:  # type: ignore[no-untyped-def]
    await _appointment(db, "Zahnarzt", minutes_ago=1)
    await _appointment(db, "Kein Alarm", minutes_ago=1, remind=False)
    await _appointment(db, "Später", minutes_ago=-60)
    assert await deliver_due_reminders(deps, agent_graph) == 1
    queued = await redis.lrange(keys.event_queue(Pair("anna", "nova")), 0, -1)
    assert len(queued) == 1
    event = json.loads(queued[0])
    payload = event["payload"]
    assert event["source"] == "character" and event["typ"] == "message"
    assert payload["reiz_herkunft"] == "eigener_impuls"
    assert "Zahnarzt" in payload["eigener_gedanke"]
    assert "user_prompt" not in payload
    assert payload["gedanke_arousal"] == 0.6 and payload["ausloeser_turn_id"] is None
    assert await deliver_due_reminders(deps, agent_graph) == 0  # claimed: never twice


async def test_open_question_holds_the_reminder_back(deps, agent_graph, redis, db) -> None:  # type: ignore[no-untyped-def]
    await _appointment(db, "Zahnarzt", minutes_ago=1)
    await store_pending(
        redis,
        "anna",
        agent_name="notizen",
        action="agent",
        target="Einkaufsliste",
        rueckfrage="Soll ich die Liste anlegen?",
        parameter={},
    )
    assert await deliver_due_reminders(deps, agent_graph) == 0
    await redis.delete(keys.pending_agent("anna"))
    assert await deliver_due_reminders(deps, agent_graph) == 1


async def _reminded_at(db, entry_id: int):  # type: ignore[no-untyped-def]
    async with db.connection() as conn:
        cur = await conn.execute("SELECT erinnert_am FROM timeline WHERE id = %s", (entry_id,))
        return (await cur.fetchone())["erinnert_am"]


async def test_a_worker_stopped_mid_delivery_loses_nothing(
    deps, agent_graph, redis, db, scripted
) -> None:  # type: ignore[no-untyped-def]
    entry_id = await _appointment(db, "Zahnarzt", minutes_ago=1)
    queue = keys.event_queue(Pair("anna", "nova"))
    scripted.default_latency_ms = 10_000  # the thought is still being formed ...
    delivery = asyncio.create_task(deliver_due_reminders(deps, agent_graph))
    for _ in range(200):
        if scripted.calls:
            break
        await asyncio.sleep(0.01)
    delivery.cancel()  # ... when the worker stops
    with contextlib.suppress(asyncio.CancelledError):
        await delivery
    assert await redis.llen(queue) == 0
    assert await _reminded_at(db, entry_id) is None  # not marked: still owed

    assert await deliver_due_reminders(deps, agent_graph) == 0  # the stopped worker's lease holds
    await redis.delete(keys.reminder_claim(entry_id))  # ... until it runs out
    scripted.default_latency_ms = 0.0
    assert await deliver_due_reminders(deps, agent_graph) == 1
    assert await redis.llen(queue) == 1
    assert await _reminded_at(db, entry_id) is not None


async def test_a_repeat_after_a_lost_mark_carries_the_same_event_id(
    deps, agent_graph, redis, db
) -> None:  # type: ignore[no-untyped-def]
    """A worker that died between queueing and marking: the next one queues the reminder
    again under the same event id, which the event consumer drops as a duplicate."""
    entry_id = await _appointment(db, "Zahnarzt", minutes_ago=1)
    assert await deliver_due_reminders(deps, agent_graph) == 1
    async with db.connection() as conn:
        await conn.execute("UPDATE timeline SET erinnert_am = NULL WHERE id = %s", (entry_id,))
    await redis.delete(keys.reminder_claim(entry_id))
    assert await deliver_due_reminders(deps, agent_graph) == 1
    queued = await redis.lrange(keys.event_queue(Pair("anna", "nova")), 0, -1)
    first, second = (json.loads(raw) for raw in queued)
    assert first["event_id"] == second["event_id"]
    assert first["payload"]["turn_id"] != second["payload"]["turn_id"]
