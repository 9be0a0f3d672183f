"""The local model's one thread serves the answer's calls before later ones
(llm/local_lane.py), in arrival order within one urgency, and a cancelled waiter neither
blocks the lane nor keeps a turn."""

from __future__ import annotations

import asyncio
import threading

import pytest

from novaberg.config import load_settings
from novaberg.llm.accounting import track_calls
from novaberg.llm.local import LocalLLM
from novaberg.llm.local_lane import ModelLane, Urgency, urgency_of


def test_urgency_follows_the_node() -> None:
    assert urgency_of("character/router") is Urgency.ANSWER
    assert urgency_of("human/salience") is Urgency.ANSWER  # the character's enricher waits
    assert urgency_of("human/dispatcher") is Urgency.LATER
    assert urgency_of("character/salience") is Urgency.LATER
    assert urgency_of("") is Urgency.LATER
    assert urgency_of("character/tribunal") is Urgency.FINISH
    assert urgency_of("character/perception_assistant") is Urgency.FINISH


async def test_a_released_turn_goes_to_the_most_urgent_then_the_earliest() -> None:
    lane = ModelLane(grace=0.01)
    order: list[str] = []
    release = asyncio.Event()

    async def call(name: str, urgency: Urgency, hold: asyncio.Event | None = None) -> None:
        async with lane.turn(urgency):
            order.append(name)
            if hold is not None:
                await hold.wait()

    first = asyncio.create_task(call("late-1", Urgency.LATER, release))
    await asyncio.sleep(0)
    waiting = [
        asyncio.create_task(call("late-2", Urgency.LATER)),
        asyncio.create_task(call("answer-1", Urgency.ANSWER)),
        asyncio.create_task(call("answer-2", Urgency.ANSWER)),
    ]
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(first, *waiting)
    assert order == ["late-1", "answer-1", "answer-2", "late-2"]


async def _call(lane: ModelLane, urgency: Urgency, name: str, ran: list[str]) -> None:
    async with lane.turn(urgency):
        ran.append(name)


async def test_a_late_call_waits_out_the_gap_between_two_answer_calls() -> None:
    """The next answer call comes a moment after the last (graph work between them): a late
    call that arrived in that moment does not take the thread first."""
    lane = ModelLane(grace=60)
    ran: list[str] = []
    await _call(lane, Urgency.ANSWER, "answer-1", ran)
    late = asyncio.create_task(_call(lane, Urgency.LATER, "late", ran))
    await asyncio.sleep(0.05)
    async with asyncio.timeout(5):  # granted at once, the late call still waiting
        await _call(lane, Urgency.ANSWER, "answer-2", ran)
    assert ran == ["answer-1", "answer-2"]
    late.cancel()
    with pytest.raises(asyncio.CancelledError):
        await late
    async with asyncio.timeout(5):  # the cancelled waiter keeps nothing
        await _call(lane, Urgency.FINISH, "finish", ran)
    assert ran[-1] == "finish"


async def test_a_late_call_runs_once_the_gap_has_passed() -> None:
    lane = ModelLane(grace=0.05)
    ran: list[str] = []
    await _call(lane, Urgency.ANSWER, "answer", ran)
    async with asyncio.timeout(5):
        await _call(lane, Urgency.LATER, "late", ran)
    assert ran == ["answer", "late"]


async def test_after_the_last_round_a_late_call_does_not_wait() -> None:
    """Nothing of the turn follows its judges and the perception of its answer: the calls
    after the release (salience, dispatcher) start at once."""
    lane = ModelLane(grace=60)
    ran: list[str] = []
    await _call(lane, Urgency.FINISH, "judge", ran)
    async with asyncio.timeout(5):
        await _call(lane, Urgency.LATER, "salience", ran)
    assert ran == ["judge", "salience"]


async def test_a_cancelled_waiter_gives_its_place_to_the_next() -> None:
    lane = ModelLane()
    release = asyncio.Event()
    done: list[str] = []

    async def call(name: str, hold: asyncio.Event | None = None) -> None:
        async with lane.turn(Urgency.ANSWER):
            if hold is not None:
                await hold.wait()
            done.append(name)

    holder = asyncio.create_task(call("holder", release))
    await asyncio.sleep(0)
    gone = asyncio.create_task(call("gone"))
    after = asyncio.create_task(call("after"))
    await asyncio.sleep(0)
    gone.cancel()
    release.set()
    await asyncio.gather(holder, after)
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert done == ["holder", "after"]
    async with asyncio.timeout(1):  # the lane is free again
        await call("last")
    assert done[-1] == "last"


async def test_the_backend_runs_a_waiting_answer_call_before_a_waiting_late_one() -> None:
    backend = LocalLLM(load_settings())
    started = threading.Event()
    go_on = threading.Event()
    order: list[str] = []

    def work(name: str) -> None:
        if name == "holder":
            started.set()
            go_on.wait(5)
        order.append(name)

    async def call(label: str, name: str) -> None:
        with track_calls(label):
            await backend._run(work, name)

    holder = asyncio.create_task(call("human/dispatcher", "holder"))
    await asyncio.to_thread(started.wait, 5)
    late = asyncio.create_task(call("character/salience", "late"))
    await asyncio.sleep(0.01)
    answer = asyncio.create_task(call("character/router", "answer"))
    await asyncio.sleep(0.01)
    go_on.set()
    await asyncio.gather(holder, late, answer)
    assert order == ["holder", "answer", "late"]
