"""Workers without polling (events/ready.py): a pair reaches a worker through the ready
list — no sweep over the active pairs is needed for a message, for the turn queued
behind a running one, or for a dead worker's taken hints."""

from __future__ import annotations

import httpx
import redis.asyncio as aioredis
from event_helpers import post, script_answer

from novaberg.events.ready import give_back
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store import keys

NO_SWEEP = {"poll_interval": 3600.0}
"""One sweep at the start, then none for the test's length."""


async def _accepted(http: httpx.AsyncClient, token: str, text: str) -> str:
    response = await post(http, token, text)
    assert response.status_code == 202, response.text
    return str(response.json()["nachrichten_id"])


async def test_a_message_sent_to_an_idle_worker_is_answered_without_a_sweep(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Hallo Anna.")
    await workers(**NO_SWEEP)  # its one sweep found nothing
    mid = await _accepted(http, anna, "Hallo")
    answer = await ws.wait_typ("character_response")
    assert answer["nachrichten_ids"] == [mid]


async def test_the_turn_behind_a_running_one_starts_when_that_one_ends(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Hallo Anna.")
    await workers(**NO_SWEEP)
    first = await _accepted(http, anna, "Hallo")
    await ws.wait_typ("character_response")
    second = await _accepted(http, anna, "Und noch was")
    third = await _accepted(http, anna, "Und noch mehr")
    answered: list[str] = []
    while len(answered) < 3:

        def new_answer(m: dict, seen: tuple[str, ...] = tuple(answered)) -> bool:  # type: ignore[type-arg]
            return m.get("typ") == "character_response" and m["nachrichten_ids"][0] not in seen

        answered += (await ws.wait_for(new_answer))["nachrichten_ids"]
    assert answered[0] == first and sorted(answered[1:]) == sorted([second, third])
    assert not ws.of("turn_gescheitert")


async def test_a_dead_workers_taken_hints_go_back_to_the_ready_list(
    redis: aioredis.Redis,
) -> None:
    await redis.rpush(keys.ready_taken("dead-worker"), "anna:nova", "bob:nova")
    assert await give_back(redis, "dead-worker") == 2
    assert await redis.lrange(keys.ready_pairs(), 0, -1) == ["anna:nova", "bob:nova"]
    assert not await redis.exists(keys.ready_taken("dead-worker"))
