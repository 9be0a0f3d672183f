"""A simulated day after an emotional conversation (controllable clock, scripted model):
impulses fire only inside the gates and limits, and every check is in the gate log.

Run with `-s` to see the day's log, condensed to one line per stretch of equal decisions.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
import redis.asyncio as aioredis
from impulse_helpers import BERLIN, DIM, PAIR, Clock, at, entry, present, stance, user_turn

from novaberg.graph.agent_graph import build_agent_graph
from novaberg.graph.contract import GraphDeps
from novaberg.impulses import stack as impulse_stack
from novaberg.impulses.delivery import ImpulseDelivery
from novaberg.impulses.gates import FIRED
from novaberg.store import keys

STEP = 300.0
"""The simulated delivery looks every five minutes (the real loop: every 5 s)."""


def blend(axis: int, closeness: float = 0.7) -> list[float]:
    """cos = `closeness` to the user's direction (axis 0), closeness² to any other blend."""
    vector = [0.0] * DIM
    vector[0] = closeness
    vector[axis] = math.sqrt(1 - closeness**2)
    return vector


@pytest.fixture
def clock() -> Clock:
    return Clock(at("2026-12-03 20:50"))


@pytest.fixture
async def delivery(settings, redis, db, model, clock) -> AsyncIterator[ImpulseDelivery]:  # type: ignore[no-untyped-def]
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model, clock=clock)
    yield ImpulseDelivery(deps, build_agent_graph(deps), clock=clock)
    assert deps.log is not None
    await deps.log.close()


def local(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).astimezone(BERLIN).strftime("%d.%m. %H:%M")


async def _user_writes(redis: aioredis.Redis, now: float, **turn: object) -> None:
    await user_turn(redis, now, **turn)  # type: ignore[arg-type]
    await stance(redis, now)  # the stance is computed again in every character turn


async def test_a_simulated_day_fires_only_inside_the_gates_and_limits(
    delivery: ImpulseDelivery, redis: aioredis.Redis, db, clock: Clock
) -> None:  # type: ignore[no-untyped-def]
    start = clock.now
    await _user_writes(redis, start, text="Mein Vater ist krank, mir geht es schlecht.")
    await entry(redis, start, task="nachfragen", embedding=blend(1), text="Nachfragen: der Vater")
    for axis in range(2, 7):
        await entry(redis, start, task="recherche", embedding=blend(axis), text=f"Idee {axis}")
    fired: list[float] = []
    while clock.now < start + 86_400:
        clock.advance(STEP)
        stamp = local(clock.now)
        if stamp.endswith("09:00") or stamp.endswith("12:00"):
            await _user_writes(
                redis, clock.now, emotion="freude", vector="erholung", text="Es geht etwas besser."
            )
        await present(redis)
        decision = await delivery.check(PAIR)
        if decision.fired:
            fired.append(clock.now)
            await redis.delete(keys.event_queue(PAIR))  # the event consumer took it

    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT erstellt_am, ergebnis, grund FROM impuls_protokoll ORDER BY id"
        )
        rows = await cur.fetchall()
    _print_condensed(rows)

    assert [local(t) for t in fired] == [
        "03.12. 20:55",  # sad and silent: only the follow-up may go out
        "04.12. 09:05",  # the user wrote at 09:00 and fell silent again
        "04.12. 09:10",  # burst 2 of 2
        "04.12. 12:05",  # the 12:00 message reset the burst; the third of the day
    ]
    reasons = [r["grund"].split(":")[0] for r in rows if r["ergebnis"] != FIRED]
    assert {"auswahl", "ruhezeit", "burst", "tageslimit", "ausloeser"} <= set(reasons)
    quiet = [r for r in rows if r["ergebnis"] == FIRED and not 8 <= _hour(r) < 22]
    assert quiet == [], "nothing is delivered in the quiet hours"
    assert len(rows) == 288, "every check is logged"
    assert await impulse_stack.size(redis, PAIR) == 2, "undelivered ideas wait on the stack"


def _hour(row: dict[str, object]) -> int:
    stamp = row["erstellt_am"]
    assert isinstance(stamp, datetime)
    return stamp.astimezone(BERLIN).hour


def _print_condensed(rows: list[dict[str, object]]) -> None:
    stretch: list[dict[str, object]] = []

    def flush() -> None:
        if stretch:
            first, last = stretch[0], stretch[-1]
            span = local(first["erstellt_am"].timestamp())  # type: ignore[attr-defined]
            if len(stretch) > 1:
                span += " – " + local(last["erstellt_am"].timestamp())[-5:]  # type: ignore[attr-defined]
            print(f"{span:<22} {first['ergebnis']:<9} ×{len(stretch):<3} {first['grund']}")

    for row in rows:
        gate = (row["ergebnis"], str(row["grund"]).split(":")[0])
        if stretch and gate != (stretch[0]["ergebnis"], str(stretch[0]["grund"]).split(":")[0]):
            flush()
            stretch = []
        stretch.append(row)
    flush()
