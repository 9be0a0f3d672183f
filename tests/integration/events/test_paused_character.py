"""A paused character, through the real intake, queues, workers, graphs and WebSocket
(scripted model only): a message to it is accepted and stored by Path 1 (session turn,
short-term memory) but not answered; activation answers what waited in one answer naming
every id; a message that waits longer than the hold time ends in `turn_gescheitert`
(`charakter_pausiert`). The pause is the person's alone."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from event_helpers import WAIT, post, script_answer

from novaberg.config import Settings
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import character_activation, keys
from novaberg.wire import GRAPH_CHARACTER, GRAPH_HUMAN, MSG_FAILED, MSG_RESPONSE, MSG_STAGE

ANNA = Pair("anna", "nova")
BACK = "Da bin ich wieder. Schön, dass du gewartet hast."
HOLD = 3.0
"""The hold time of the expiry test's workers (seconds)."""

PLAIN = {"management_action": "", "management_target": ""}
SEGMENT = {
    "segmente": [{"segment": "Ich habe heute die Prüfung bestanden.", "thema_kurz": "Prüfung"}]
}
SCORE = {"salienz": 0.95, "themen": ["Prüfung"], "gedaechtnistyp": "kurz"}


@pytest.fixture
def hold_seconds(settings: Settings) -> float:
    """How long the workers hold a message (the expiry test parametrizes it short)."""
    return settings.pause_hold


@pytest.fixture
async def runtime(
    settings: Settings, redis: aioredis.Redis, db: Any, model: ModelLayer, hold_seconds: float
) -> AsyncIterator[GraphRuntime]:
    """The real graphs, with the workers' hold time."""
    deps = GraphDeps(
        settings=settings.model_copy(update={"pause_hold": hold_seconds}),
        redis=redis,
        pool=db,
        model=model,
    )
    yield GraphRuntime(deps)
    assert deps.log is not None
    await deps.log.close()


def script_turns(scripted: ScriptedLLM) -> None:
    """Plain conversation; what the person says is worth remembering (a short-term entry)."""
    script_answer(scripted, BACK)
    scripted.add(".*", PLAIN, schema="RouterDecision")
    scripted.add("Prüfung", SEGMENT, schema="Segmentation")
    scripted.add("Prüfung", SCORE, schema="SalienceScore")


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def accepted(http: httpx.AsyncClient, token: str, text: str) -> str:
    response = await post(http, token, text)
    assert response.status_code == 202, response.text
    return str(response.json()["nachrichten_id"])


async def until(check: Any, what: str) -> None:
    """Wait (bounded by WAIT) until `await check()` is true."""
    deadline = asyncio.get_running_loop().time() + WAIT
    while not await check():
        assert asyncio.get_running_loop().time() < deadline, f"never happened: {what}"
        await asyncio.sleep(0.05)


async def held(redis: aioredis.Redis, pair: Pair = ANNA) -> int:
    return int(await redis.llen(keys.parked_events(pair)))


async def session_texts(redis: aioredis.Redis, pair: Pair = ANNA) -> list[str]:
    turns = [json.loads(t) for t in await redis.lrange(keys.session_turns(pair), 0, -1)]
    return [str(t["inhalt"]) for t in turns if t.get("rolle") == "user"]


def outcomes_per_id(seen: list[dict[str, Any]]) -> Counter[str]:
    return Counter(
        i for m in seen if m.get("typ") in (MSG_RESPONSE, MSG_FAILED) for i in m["nachrichten_ids"]
    )


def transcript(seen: list[dict[str, Any]]) -> str:
    lines = []
    for m in seen:
        if m.get("typ") == MSG_STAGE:
            lines.append(f"  character_stage {m['graph']}/{m['node']}")
        elif m.get("typ") in (MSG_RESPONSE, MSG_FAILED):
            what = m.get("nachricht") or m.get("grund")
            lines.append(f"  {m['typ']} ids={m['nachrichten_ids']} {what!r}")
        elif m.get("typ"):
            lines.append(f"  {m['typ']}")
    return "\n".join(lines)


async def test_messages_to_a_paused_character_are_stored_then_answered_on_activation(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_turns(scripted)
    await workers()

    paused = await http.post("/characters/nova/pause", headers=auth(anna))
    assert paused.status_code == 200, paused.text
    assert paused.json() == {"character_id": "nova", "aktiv": False, "aufgegriffen": 0}
    listed = (await http.get("/characters", headers=auth(anna))).json()["characters"]
    assert [c["aktiv"] for c in listed if c["character_id"] == "nova"] == [False]

    first = await accepted(http, anna, "Ich habe heute die Prüfung bestanden!")
    await until(lambda: held(redis), "the first message's event is held")
    second = await accepted(http, anna, "Bist du da?")
    await until(lambda: _is(held(redis), 2), "the second message's event is held")

    # Path 1 ran for both: session turns and a short-term memory are stored ...
    assert await session_texts(redis) == ["Ich habe heute die Prüfung bestanden!", "Bist du da?"]
    await until(lambda: redis.scard(keys.short_term_index(ANNA)), "a short-term entry")
    human = {m["node"] for m in ws.of(MSG_STAGE) if m["graph"] == GRAPH_HUMAN}
    assert {"perception", "session_turn"} <= human
    said = [u["prompt"] for m in ws.of("user_utterance") for u in m["aeusserungen"]]
    assert said == ["Ich habe heute die Prüfung bestanden!", "Bist du da?"], "other clients hear it"
    # ... the CharacterGraph did not run, nothing was answered, the input stays open
    assert not [m for m in ws.of(MSG_STAGE) if m["graph"] == GRAPH_CHARACTER]
    assert not ws.of(MSG_RESPONSE) and not ws.of(MSG_FAILED)
    assert not await redis.exists(keys.turn_marker(ANNA))
    assert not await redis.llen(keys.event_queue(ANNA))

    activated = await http.post("/characters/nova/activate", headers=auth(anna))
    assert activated.status_code == 200, activated.text
    assert activated.json() == {"character_id": "nova", "aktiv": True, "aufgegriffen": 2}
    answer = await ws.wait_typ(MSG_RESPONSE)
    assert answer["nachrichten_ids"] == [first, second], "one answer names both, in order"
    assert answer["nachricht"] == BACK
    await until(lambda: _not(redis.exists(keys.turn_marker(ANNA))), "the run ended")
    assert outcomes_per_id(ws.seen) == {first: 1, second: 1}
    assert not await held(redis) and not await redis.sismember(keys.paused_pairs(), str(ANNA))
    print("\nWebSocket, in order:\n" + transcript(ws.seen))


@pytest.mark.parametrize("hold_seconds", [HOLD])
async def test_a_message_held_past_the_hold_time_fails_naming_why(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    hold_seconds: float,
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_turns(scripted)
    await workers()
    assert (await http.post("/characters/nova/pause", headers=auth(anna))).status_code == 200

    message_id = await accepted(http, anna, "Hallo?")
    failed = await ws.wait_typ(MSG_FAILED)
    assert failed["nachrichten_ids"] == [message_id]
    assert failed["grund"] == f"charakter_pausiert (nach {int(HOLD)} s nicht aktiviert)"
    assert not ws.of(MSG_RESPONSE)
    assert not await held(redis)
    assert await session_texts(redis) == ["Hallo?"], "what was said stays stored"

    activated = await http.post("/characters/nova/activate", headers=auth(anna))
    assert activated.json()["aufgegriffen"] == 0, "nothing left to answer"
    await asyncio.sleep(0.5)
    assert outcomes_per_id(ws.seen) == {message_id: 1}
    print("\nWebSocket, in order:\n" + transcript(ws.seen))


async def test_pausing_is_the_persons_own(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM, redis: aioredis.Redis
) -> None:
    """Anna pauses the shared Nova; Bert still talks to her."""
    anna, bert = await token("anna"), await token("bert")
    ws_bert = await sockets(bert)
    script_turns(scripted)
    await workers()
    assert (await http.post("/characters/nova/pause", headers=auth(anna))).status_code == 200
    listed = (await http.get("/characters", headers=auth(bert))).json()["characters"]
    assert [c["aktiv"] for c in listed if c["character_id"] == "nova"] == [True]
    one = (await http.get("/characters/nova", headers=auth(bert))).json()
    assert one["aktiv"] is True

    message_id = await accepted(http, bert, "Hallo Nova")
    answer = await ws_bert.wait_typ(MSG_RESPONSE)
    assert answer["nachrichten_ids"] == [message_id]
    assert not await held(redis, Pair("bert", "nova"))


async def test_the_sweep_takes_up_what_an_activation_left_held(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    db: Any,
) -> None:
    """The flag alone turned back on (as if the activation's second step never ran): the
    workers' sweep takes the held message up."""
    anna = await token("anna")
    ws = await sockets(anna)
    script_turns(scripted)
    await workers()
    assert (await http.post("/characters/nova/pause", headers=auth(anna))).status_code == 200
    message_id = await accepted(http, anna, "Hallo?")
    await until(lambda: held(redis), "the message's event is held")

    await character_activation.set_active(db, ANNA, True, datetime.now(UTC))
    answer = await ws.wait_typ(MSG_RESPONSE)
    assert answer["nachrichten_ids"] == [message_id]


async def test_pause_and_activate_only_characters_one_can_talk_to(
    http: httpx.AsyncClient, token, db: Any
) -> None:
    anna = await token("anna")
    for action in ("pause", "activate"):
        missing = await http.post(f"/characters/niemand/{action}", headers=auth(anna))
        assert missing.status_code == 404
        assert missing.json()["detail"]["fehler"] == "unbekannter_character"
    twice = [await http.post("/characters/nova/pause", headers=auth(anna)) for _ in range(2)]
    assert [r.json()["aktiv"] for r in twice] == [False, False]
    assert await character_activation.is_paused(db, ANNA)


async def _is(value: Any, wanted: int) -> bool:
    return int(await value) == wanted


async def _not(value: Any) -> bool:
    return not await value
