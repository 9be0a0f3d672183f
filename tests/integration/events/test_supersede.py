"""Supersede before release (seed 000 §6.5): when the user writes on while a user turn's
answer has not left yet, that run is abandoned and its ids are answered by the next turn,
so three quick messages get one answer naming all three. Never for an impulse, a
continue, or a run in which an agent acted; carried ids still end in exactly one outcome,
also when the next turn fails or a worker dies."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from event_helpers import RESPONDER, post, script_answer

from novaberg.agents.registry import discover_agents
from novaberg.config import Settings
from novaberg.events.event_consumer import supersede_window_start
from novaberg.events.model import (
    MAX_SUPERSEDES,
    SUPERSEDED_STAGE,
    QueuedUtterance,
    StageMessage,
    build_event,
    impulse_event,
)
from novaberg.events.queues import Supersede, TurnQueues, push_event
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.wire import FIELD_SUPERSEDED as SUPERSEDED_FIELD
from novaberg.wire import MSG_FAILED, MSG_RESPONSE

PAIR = Pair("anna", "nova")

QUICK = ["Hey", "Achso, ich wollte sagen...", "...dass ich morgen nicht kann"]

NO_TASK = {"management_action": "", "management_target": ""}
"""Router decision without management (the hash-derived default could pick an agent)."""


@pytest.fixture
async def runtime(
    settings: Settings, redis: aioredis.Redis, db: Any, model: ModelLayer
) -> AsyncIterator[GraphRuntime]:
    """The real graphs with the real task agents (the agent test needs one to act)."""
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model)
    yield GraphRuntime(deps, registry=discover_agents())
    assert deps.log is not None
    await deps.log.close()


def responder_for(stimulus: str) -> str:
    """A rule regex matching only the responder's call for this stimulus."""
    return rf"{RESPONDER}.*\[AKTUELLER PROMPT\]\n{re.escape(stimulus)}$"


def script_turns(scripted: ScriptedLLM, first_stimulus: str, answer: str) -> None:
    """Every run answers `answer`; the run whose stimulus is `first_stimulus` takes a
    while at the responder, so the user can write on before its answer leaves."""
    scripted.add(".*", NO_TASK, schema="RouterDecision")
    script_answer(scripted, answer)
    scripted.add(responder_for(first_stimulus), answer + " (spät)", latency_ms=1500)


async def accepted(http: httpx.AsyncClient, token: str, text: str) -> str:
    response = await post(http, token, text)
    assert response.status_code == 202, response.text
    return str(response.json()["nachrichten_id"])


async def idle(redis: aioredis.Redis) -> None:
    """Wait until the pair has nothing queued, running or carried (a bound, not a timing)."""
    for _ in range(1000):
        busy = (
            await redis.llen(keys.prompt_queue(PAIR))
            or await redis.llen(keys.event_queue(PAIR))
            or await redis.exists(keys.turn_marker(PAIR))
            or await redis.exists(keys.carried_ids(PAIR))
        )
        if not busy:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the pair never became idle")


def outcomes_per_id(seen: list[dict[str, Any]]) -> Counter[str]:
    return Counter(
        i for m in seen if m.get("typ") in (MSG_RESPONSE, MSG_FAILED) for i in m["nachrichten_ids"]
    )


async def test_three_quick_messages_on_an_idle_pair_get_one_answer_naming_all_three(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_turns(scripted, QUICK[0], "Schade! Dann ein andermal.")
    await workers()
    ids = [await accepted(http, anna, QUICK[0])]
    # the first message started a turn on its own (no waiting window) ...
    first = await ws.wait_for(lambda m: m.get("typ") == "character_stage")
    # ... and the user writes on before its answer left
    ids += [await accepted(http, anna, text) for text in QUICK[1:]]
    answer = await ws.wait_typ(MSG_RESPONSE)
    await idle(redis)
    await asyncio.sleep(0.2)

    assert answer["nachrichten_ids"] == ids, "one answer names all three, in order"
    assert answer["nachricht"] == "Schade! Dann ein andermal."
    assert len(ws.of(MSG_RESPONSE)) == 1 and not ws.of(MSG_FAILED)
    assert outcomes_per_id(ws.seen) == dict.fromkeys(ids, 1), "exactly one outcome per id"
    superseded = [m for m in ws.of("character_stage") if m["node"] == SUPERSEDED_STAGE]
    assert superseded and superseded[0]["turn_id"] == first["turn_id"]
    assert superseded[0]["label"] == "liest weiter"
    answer_stages = [
        m["seq"] for m in ws.of("character_stage") if m["turn_id"] == answer["turn_id"]
    ]
    assert superseded[0]["seq"] < min(answer_stages), "the client hears it before the next turn"
    responder = [c["prompt"] for c in scripted.calls if RESPONDER in c["prompt"]]
    assert all(text in responder[-1] for text in QUICK), "the answer sees the whole picture"
    turns = [json.loads(t) for t in await redis.lrange(keys.session_turns(PAIR), 0, -1)]
    assert [t["rolle"] for t in turns].count("assistant") == 1, "the abandoned run wrote nothing"


async def test_a_user_who_keeps_writing_still_gets_an_answer(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
) -> None:
    """At most MAX_SUPERSEDES runs in a row are given up: the user writes again during
    every run, yet the run after that many answers all it has, and the newest message gets
    a turn of its own."""
    anna = await token("anna")
    ws = await sockets(anna)
    scripted.add(".*", NO_TASK, schema="RouterDecision")
    script_answer(scripted, "Ich lese mit.", latency_ms=600)
    await workers()
    ids: list[str] = []
    runs: list[str] = []

    def new_run(message: dict[str, Any]) -> bool:
        return (
            message.get("typ") == "character_stage"
            and message.get("graph") == "character"
            and message["turn_id"] not in runs
        )

    for number in range(1, MAX_SUPERSEDES + 3):
        ids.append(await accepted(http, anna, f"Nachricht {number}"))
        if number <= MAX_SUPERSEDES + 1:  # the next message goes in while this run runs
            runs.append((await ws.wait_for(new_run))["turn_id"])
    await ws.wait_for(lambda m: m.get("typ") == MSG_RESPONSE and m["nachrichten_ids"] == ids[-1:])
    await idle(redis)

    answers = [m["nachrichten_ids"] for m in ws.of(MSG_RESPONSE)]
    assert answers == [ids[:-1], ids[-1:]], "the capped run answers the first four"
    superseded = [m["turn_id"] for m in ws.of("character_stage") if m["node"] == SUPERSEDED_STAGE]
    assert superseded == runs[:MAX_SUPERSEDES]
    assert outcomes_per_id(ws.seen) == dict.fromkeys(ids, 1), "exactly one outcome per id"


def test_the_supersede_count_decides_whether_a_run_may_still_be_given_up() -> None:
    def user_event(**extra: Any) -> Any:
        payload = {"turn_id": "t", "nachrichten_ids": ["m"], "user_prompt": "m"}
        return build_event(
            user_id="anna",
            character_id="nova",
            source="user",
            typ="message",
            payload={**payload, "letztes_empfangen_am": 1000.0, **extra},
        )

    assert supersede_window_start(user_event()) == 1000.0
    assert supersede_window_start(user_event(**{SUPERSEDED_FIELD: MAX_SUPERSEDES - 1})) == 1000.0
    assert supersede_window_start(user_event(**{SUPERSEDED_FIELD: MAX_SUPERSEDES})) is None
    assert supersede_window_start(user_event(**{SUPERSEDED_FIELD: True})) == 1000.0, "not a count"


async def test_an_agent_that_acted_is_never_thrown_away(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    db: Any,
) -> None:
    """The notes agent creates a list in turn 1 (no question asked); messages written
    afterwards wait for turn 1's answer instead of superseding it."""
    anna = await token("anna")
    ws = await sockets(anna)
    task = "Leg eine Einkaufsliste mit Milch an"
    script_turns(scripted, task, "Die Liste steht.")
    scripted.add(
        task,
        {"management_action": "agent", "management_target": "notizen"},
        schema="RouterDecision",
        times=1,
    )
    scripted.add(
        "Äußerung des Nutzers: Leg eine",
        {"action": "create", "target": "Einkaufsliste", "elemente": ["Milch"]},
        schema="NotesClassification",
    )
    scripted.add(
        ".*", {"name": "Einkaufsliste", "typ": "einkauf", "text": "Milch"}, schema="NoteDraft"
    )
    await workers()
    first = await accepted(http, anna, task)
    await ws.wait_for(lambda m: m.get("node") == "agent_dispatch")
    rest = [await accepted(http, anna, text) for text in QUICK[1:]]
    await ws.wait_for(lambda m: m.get("typ") == MSG_RESPONSE and m["nachrichten_ids"] == rest)
    await idle(redis)

    async with db.connection() as conn:
        notes = await (await conn.execute("SELECT name FROM notizen WHERE aktiv")).fetchall()
    assert [n["name"] for n in notes] == ["Einkaufsliste"], "the agent acted once"
    assert not await redis.exists(keys.pending_agent("anna")), "no open question held it back"
    answers = [m["nachrichten_ids"] for m in ws.of(MSG_RESPONSE)]
    assert answers == [[first], rest]
    assert not [m for m in ws.of("character_stage") if m["node"] == SUPERSEDED_STAGE]
    assert outcomes_per_id(ws.seen) == dict.fromkeys([first, *rest], 1)


def _impulse() -> Any:
    return impulse_event(
        "anna",
        "nova",
        "Ob Anna ihre Prüfung bestanden hat?",
        thought_arousal=0.4,
        trigger_turn_id=None,
    )


def _continue() -> Any:
    return build_event(
        user_id="anna",
        character_id="nova",
        source="character",
        typ="continue",
        payload={"turn_id": "t-weiter", "user_prompt": "Wann sehen wir uns?"},
        trigger_count=1,
    )


@pytest.mark.parametrize("make", [_impulse, _continue], ids=["impulse", "continue"])
async def test_impulse_and_continue_runs_are_never_superseded(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    make: Any,
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    scripted.add(".*", NO_TASK, schema="RouterDecision")
    script_answer(scripted, "Für dich.")
    script_answer(scripted, "Von mir aus.", latency_ms=1500, times=1)
    event = make()
    await push_event(redis, event)
    await workers()
    await ws.wait_for(lambda m: m.get("typ") == "character_stage")
    mid = await accepted(http, anna, "Hallo, da bin ich")
    await ws.wait_for(lambda m: m.get("typ") == MSG_RESPONSE and m["nachrichten_ids"] == [mid])
    await idle(redis)

    answers = ws.of(MSG_RESPONSE)
    assert [(a["turn_id"], a["nachrichten_ids"]) for a in answers] == [
        (event.turn_id, []),
        (answers[1]["turn_id"], [mid]),
    ]
    assert answers[0]["nachricht"] == "Von mir aus."
    assert not [m for m in ws.of("character_stage") if m["node"] == SUPERSEDED_STAGE]


async def test_carried_ids_are_named_when_the_next_turns_path_1_fails(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    caplog,
) -> None:
    """Turn 1 is superseded; the next block's HumanGraph fails (its session write breaks)
    and its CharacterGraph finds no answer: the one `turn_gescheitert` names turn 1's id
    too."""
    anna = await token("anna")
    ws = await sockets(anna)
    script_turns(scripted, "Erste Frage", "Nie gesendet.")
    # block 2's perception takes a moment, so its session write comes after the damage
    scripted.add("Nachtrag mit Folgen", {}, schema="PerceptionResult", latency_ms=1000)
    scripted.add(responder_for("Nachtrag mit Folgen"), fault="timeout")
    caplog.set_level(logging.WARNING, logger="novaberg.events")
    await workers()
    ids = [await accepted(http, anna, "Erste Frage")]
    await ws.wait_for(lambda m: m.get("typ") == "character_stage")
    ids.append(await accepted(http, anna, "Nachtrag mit Folgen"))
    await ws.wait_for(lambda m: m.get("node") == SUPERSEDED_STAGE)
    session = keys.session_turns(PAIR)
    await redis.delete(session)
    await redis.set(session, "kein Verlauf")  # WRONGTYPE for the dispatcher's RPUSH
    failed = await ws.wait_typ(MSG_FAILED)
    await idle(redis)
    await asyncio.sleep(0.2)
    await redis.delete(session)

    assert failed["nachrichten_ids"] == ids
    assert not ws.of(MSG_RESPONSE)
    assert outcomes_per_id(ws.seen) == dict.fromkeys(ids, 1)
    assert any(
        "path 1 of turn" in r.getMessage() and failed["turn_id"] in r.getMessage()
        for r in caplog.records
    ), "the next block's HumanGraph failed"


async def test_carried_ids_survive_a_worker_that_died_between_the_turns(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
) -> None:
    """A worker died after abandoning a run (the ids wait in the carried list) and a second
    one died after cutting the next block (they sit in its processing entry): the
    rescuer names them in the outcome, and the pair answers again afterwards."""
    anna = await token("anna")
    ws = await sockets(anna)
    scripted.add(".*", NO_TASK, schema="RouterDecision")
    script_answer(scripted, "Wieder da.")
    await redis.rpush(keys.carried_ids(PAIR), "m-alt-1", "m-alt-2")
    mid = await accepted(http, anna, "Noch da?")
    dead = TurnQueues(redis, "tot")
    entry = await dead.begin_turn(PAIR, "t-tot")
    assert entry is not None and entry.carried == ["m-alt-1", "m-alt-2"]
    assert not await redis.exists(keys.carried_ids(PAIR)), "moved, not copied"
    await redis.sadd(keys.worker_registry(), "tot")  # registered, heartbeat long gone

    await workers()
    failed = await ws.wait_typ(MSG_FAILED)
    assert failed["nachrichten_ids"] == ["m-alt-1", "m-alt-2", mid]
    assert failed["grund"] == "worker_ausgefallen"
    await idle(redis)

    await redis.rpush(keys.carried_ids(PAIR), "m-alt-3")  # abandoned, then the worker died
    again = await accepted(http, anna, "Und jetzt?")
    answer = await ws.wait_typ(MSG_RESPONSE)
    assert answer["nachrichten_ids"] == ["m-alt-3", again]
    await idle(redis)
    assert outcomes_per_id(ws.seen) == dict.fromkeys(
        ["m-alt-1", "m-alt-2", mid, "m-alt-3", again], 1
    )


def _queued(mid: str, at: float) -> str:
    return QueuedUtterance(nachrichten_id=mid, prompt=mid, empfangen_am=at).wire()


def _stage() -> StageMessage:
    return StageMessage(
        character_id="nova", turn_id="t-1", node=SUPERSEDED_STAGE, label="x", graph="character"
    )


async def test_supersede_step_is_all_or_nothing(redis: aioredis.Redis) -> None:
    """The atomic step: only within the block window, only while the run still owns its
    marker and entry, never with an open agent question; then the ids move, the marker
    and entry go, and the stage is delivered — together."""
    queues = TurnQueues(redis, "w-1")
    event = build_event(
        user_id="anna",
        character_id="nova",
        source="user",
        typ="message",
        payload={"turn_id": "t-1", "nachrichten_ids": ["m1"], "user_prompt": "m1"},
    )
    await push_event(redis, event)
    entry = await queues.claim_event(PAIR)
    assert entry is not None

    assert not await queues.supersede(PAIR, entry, 1000.0, ["m1"], _stage()), "nothing queued"
    await redis.rpush(keys.prompt_queue(PAIR), _queued("m2", 1030.5))
    await redis.expire(keys.turn_marker(PAIR), 5)
    assert not await queues.supersede(PAIR, entry, 1000.0, ["m1"], _stage()), "gap > 30 s"
    assert await redis.ttl(keys.turn_marker(PAIR)) > 5, "the check keeps a moving run's marker"
    await redis.set(keys.pending_agent("anna"), json.dumps({"agent_name": "notizen"}))
    assert not await queues.supersede(PAIR, entry, 1001.0, ["m1"], _stage()), "open question"
    await redis.delete(keys.pending_agent("anna"))
    marker = await redis.get(keys.turn_marker(PAIR))
    await redis.set(keys.turn_marker(PAIR), "fremd")
    assert not await queues.supersede(PAIR, entry, 1001.0, ["m1"], _stage()), "not our marker"
    await redis.set(keys.turn_marker(PAIR), marker)
    assert await redis.exists(keys.processing_list(PAIR, "w-1"))
    assert not await redis.exists(keys.carried_ids(PAIR))
    assert not await redis.exists(keys.delivery_log("anna"))

    assert await queues.supersede(PAIR, entry, 1001.0, ["m1"], _stage())
    assert await redis.lrange(keys.carried_ids(PAIR), 0, -1) == ["m1"]
    assert not await redis.exists(keys.turn_marker(PAIR))
    assert not await redis.exists(keys.processing_list(PAIR, "w-1"))
    logged = await redis.zrange(keys.delivery_log("anna"), 0, -1)
    assert [json.loads(m)["node"] for m in logged] == [SUPERSEDED_STAGE]
    assert await redis.llen(keys.prompt_queue(PAIR)) == 1, "the queued utterance stays"
    # run again (its first reply lost in a Redis outage): nothing more happens, and the
    # caller learns that its entry is gone, so the run stops
    again = await queues.supersede(PAIR, entry, 1001.0, ["m1"], _stage())
    assert again is Supersede.GONE, "only once"
    assert await redis.lrange(keys.carried_ids(PAIR), 0, -1) == ["m1"]
    assert await redis.zcard(keys.delivery_log("anna")) == 1

    assert await redis.get(keys.carried_rounds(PAIR)) == "1", "one run given up in a row"

    block = await queues.begin_turn(PAIR, "t-2")
    assert block is not None and block.carried == ["m1"]
    assert block.carried_rounds == 1, "the count rides along with the ids"
    assert not await redis.exists(keys.carried_ids(PAIR))
    assert not await redis.exists(keys.carried_rounds(PAIR))
