"""Message controls through the real queues, workers and WebSocket (scripted model only):
regenerate and choose among the answers, take the last message back before and after its
answer, change it, stop a running turn (docs/behaviour/events.md#message-controls)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import redis.asyncio as aioredis
from event_helpers import RESPONDER, WAIT, Socket, post, script_answer
from psycopg_pool import AsyncConnectionPool

from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.failed_turns import FailedTurnLog
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_fields import OBSERVER_ASSISTANT, OBSERVER_USER

ANNA = Pair("anna", "nova")
QUESTION = "Was hast du heute vor?"
FIRST = "Ich lese ein Buch über Wale."
SECOND = "Ich gehe am Fluss spazieren."
SLOW = "Das dauert, ich denke lange nach."


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def until(check: Callable[[], Awaitable[Any]], what: str) -> Any:
    """The first truthy result of `check` (a bounded wait: a guard, not a measurement)."""
    deadline = asyncio.get_running_loop().time() + WAIT
    while True:
        found = await check()
        if found:
            return found
        assert asyncio.get_running_loop().time() < deadline, f"never: {what}"
        await asyncio.sleep(0.05)


async def session(http: httpx.AsyncClient, token: str) -> list[tuple[str, str]]:
    response = await http.get("/memory/nova/session", headers=auth(token))
    assert response.status_code == 200, response.text
    return [(str(t["rolle"]), str(t.get("inhalt", ""))) for t in response.json()["turns"]]


async def history(http: httpx.AsyncClient, token: str) -> list[dict[str, Any]]:
    response = await http.get("/history/nova", headers=auth(token))
    assert response.status_code == 200, response.text
    return list(response.json()["eintraege"])


async def answered(http: httpx.AsyncClient, token: str, ws: Socket, text: str) -> dict[str, Any]:
    """Send `text`, wait for its answer and until the run has stored it (session and
    history); the answer."""
    sent = await post(http, token, text)
    assert sent.status_code == 202, sent.text
    message_id = sent.json()["nachrichten_id"]
    response = await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and message_id in m["nachrichten_ids"]
    )
    turn = response["turn_id"]
    await until(lambda: _stored(http, token, turn), "the turn stored")
    return response


async def _stored(http: httpx.AsyncClient, token: str, turn: str) -> bool:
    turns = await session(http, token)
    rows = await history(http, token)
    return bool(turns and turns[-1][0] == "assistant" and any(r["turn_id"] == turn for r in rows))


async def archived(db: AsyncConnectionPool, turn: str) -> list[str]:
    async with db.connection() as conn:
        cur = await conn.execute(
            "SELECT sprecher FROM gespraechsarchiv WHERE turn_id = %s ORDER BY sprecher", (turn,)
        )
        return [row["sprecher"] for row in await cur.fetchall()]


async def short_term_of(redis: aioredis.Redis, turn: str) -> list[str]:
    store = ShortTermStore(redis, cache_vectors=False)
    found: list[str] = []
    for observer in (OBSERVER_USER, OBSERVER_ASSISTANT):
        found += await store.keys_of_turn(ANNA, turn, observer)
    return found


async def test_regenerate_keeps_alternatives_and_the_chosen_one_is_remembered(
    http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, sockets, db
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    other_device = await sockets(anna)
    script_answer(scripted, SECOND)
    script_answer(scripted, FIRST, times=1)
    await workers()
    first = await answered(http, anna, ws, QUESTION)
    assert first["nachricht"] == FIRST
    turn = first["turn_id"]

    started = await http.post("/turns/nova/regenerate", json={"turn_id": turn}, headers=auth(anna))
    assert started.status_code == 202, started.text
    assert started.json()["texte"] == [FIRST]
    again = await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and m["nachricht"] == SECOND
    )
    assert again["turn_id"] == turn and again["nachrichten_ids"] == first["nachrichten_ids"]
    told = await other_device.wait_typ("antwort_varianten")
    assert told == {**told, "turn_id": turn, "texte": [FIRST], "gewaehlt": None}
    await until(lambda: _stored(http, anna, turn), "the new answer stored")
    assert await session(http, anna) == [("user", QUESTION), ("assistant", SECOND)]
    shown = (await http.get("/turns/nova/variants", headers=auth(anna))).json()
    assert shown == {"turn_id": turn, "texte": [FIRST, SECOND], "gewaehlt": 1}

    chosen = await http.post("/turns/nova/variants/0", json={"turn_id": turn}, headers=auth(anna))
    assert chosen.status_code == 200, chosen.text
    assert chosen.json()["gewaehlt"] == 0
    await other_device.wait_for(
        lambda m: m.get("typ") == "antwort_varianten" and m["gewaehlt"] == 0
    )
    assert await session(http, anna) == [("user", QUESTION), ("assistant", FIRST)]
    rows = await history(http, anna)
    assert [(r["eingabe"], r["nachricht"]) for r in rows] == [(QUESTION, FIRST)]
    assert await archived(db, turn) == ["user"], "the other answer's archive row went"


async def test_another_users_turn_is_not_found(
    http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, sockets
) -> None:
    anna = await token("anna")
    bert = await token("bert")
    ws = await sockets(anna)
    script_answer(scripted, FIRST)
    await workers()
    first = await answered(http, anna, ws, QUESTION)
    message_id = first["nachrichten_ids"][0]
    gone = await http.delete(f"/turns/nova/messages/{message_id}", headers=auth(bert))
    assert gone.status_code == 404
    assert gone.json()["detail"]["meldung"].endswith(".")
    assert (await http.get("/turns/nova/variants", headers=auth(bert))).status_code == 404
    refused = await http.post("/turns/nova/regenerate", headers=auth(bert))
    assert refused.status_code == 409
    assert refused.json()["detail"]["fehler"] == "nichts_zu_erneuern"
    assert await session(http, anna) == [("user", QUESTION), ("assistant", FIRST)]


async def test_delete_after_the_answer_removes_the_turn_and_its_memories(
    http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, sockets, db, redis
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, FIRST)
    await workers()
    await answered(http, anna, ws, "Mein Hund heißt Bello und ist krank.")
    second = await answered(http, anna, ws, QUESTION)
    turn = second["turn_id"]
    assert await archived(db, turn) == ["character", "user"]

    gone = await http.delete(
        f"/turns/nova/messages/{second['nachrichten_ids'][0]}", headers=auth(anna)
    )
    assert gone.status_code == 200, gone.text
    assert gone.json() == {
        "art": "geloescht",
        "turn_id": turn,
        "nachrichten_ids": [second["nachrichten_ids"][0]],
    }
    removed = await ws.wait_typ("turn_entfernt")
    assert removed["art"] == "geloescht" and removed["turn_id"] == turn
    turns = await session(http, anna)
    assert QUESTION not in [text for _, text in turns]
    assert len(turns) == 2, "the earlier exchange stays"
    assert [r["eingabe"] for r in await history(http, anna)] == [
        "Mein Hund heißt Bello und ist krank."
    ]
    assert await archived(db, turn) == []
    assert await short_term_of(redis, turn) == []
    older = await http.delete(
        f"/turns/nova/messages/{second['nachrichten_ids'][0]}", headers=auth(anna)
    )
    assert older.status_code == 404


async def test_edit_after_the_answer_is_answered_anew(
    http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, sockets
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, SECOND)
    script_answer(scripted, FIRST, times=1)
    await workers()
    first = await answered(http, anna, ws, "Was hast du heute vr?")
    edited = await http.put(
        f"/turns/nova/messages/{first['nachrichten_ids'][0]}",
        json={"text": QUESTION},
        headers=auth(anna),
    )
    assert edited.status_code == 200, edited.text
    assert edited.json()["art"] == "geloescht"
    new_id = edited.json()["neu"]["nachrichten_id"]
    response = await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and new_id in m["nachrichten_ids"]
    )
    await until(lambda: _stored(http, anna, response["turn_id"]), "the new turn stored")
    assert await session(http, anna) == [("user", QUESTION), ("assistant", SECOND)]
    assert [(r["eingabe"], r["nachricht"]) for r in await history(http, anna)] == [
        (QUESTION, SECOND)
    ]


async def test_withdraw_before_the_answer_no_answer_comes(
    http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, sockets, redis
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, SLOW, latency_ms=1500)
    await workers()
    sent = await post(http, anna, QUESTION)
    message_id = sent.json()["nachrichten_id"]
    stage = await ws.wait_for(
        lambda m: m.get("typ") == "character_stage" and m["graph"] == "character"
    )
    taken = await http.delete(f"/turns/nova/messages/{message_id}", headers=auth(anna))
    assert taken.status_code == 200, taken.text
    assert taken.json()["art"] == "wird_zurueckgezogen"
    removed = await ws.wait_typ("turn_entfernt")
    assert removed["nachrichten_ids"] == [message_id] and removed["art"] == "zurueckgezogen"
    failed = await ws.wait_typ("turn_gescheitert")
    assert failed["grund"] == "zurueckgezogen"
    assert ws.of("character_response") == []
    assert await session(http, anna) == []
    assert await short_term_of(redis, stage["turn_id"]) == []
    assert await until(lambda: _idle(redis), "the pair free again"), "the marker was freed"
    assert await history(http, anna) == []


async def _idle(redis: aioredis.Redis) -> bool:
    return not await redis.exists(keys.turn_marker(ANNA))


async def test_withdraw_a_queued_message(http: httpx.AsyncClient, token, sockets, redis) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    sent = await post(http, anna, QUESTION)  # no worker: it waits in the queue
    message_id = sent.json()["nachrichten_id"]
    taken = await http.delete(f"/turns/nova/messages/{message_id}", headers=auth(anna))
    assert taken.json() == {
        "art": "zurueckgezogen",
        "turn_id": None,
        "nachrichten_ids": [message_id],
    }
    assert (await ws.wait_typ("turn_entfernt"))["nachrichten_ids"] == [message_id]
    assert await redis.llen(keys.prompt_queue(ANNA)) == 0


async def test_stop_a_running_turn(
    http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, sockets, db
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, SLOW, latency_ms=1500)
    await workers(failures=FailedTurnLog(db))
    sent = await post(http, anna, QUESTION)
    message_id = sent.json()["nachrichten_id"]
    stage = await ws.wait_for(
        lambda m: m.get("typ") == "character_stage" and m["graph"] == "character"
    )
    stopped = await http.post("/turns/nova/stop", headers=auth(anna))
    assert stopped.status_code == 200, stopped.text
    assert stopped.json() == {"gestoppt": stage["turn_id"]}
    failed = await ws.wait_typ("turn_gescheitert")
    assert failed["grund"] == "gestoppt" and failed["nachrichten_ids"] == [message_id]
    assert ws.of("character_response") == []
    assert await session(http, anna) == [("user", QUESTION)], "the message was said"
    rows = await until(lambda: history(http, anna), "the stopped turn in the history")
    assert [(r["gescheitert"], r["grund"], r["eingaben"]) for r in rows] == [
        (True, "gestoppt", [QUESTION])
    ]
    nothing = await http.post("/turns/nova/stop", headers=auth(anna))
    assert nothing.status_code == 409
    assert nothing.json()["detail"]["fehler"] == "kein_turn"


async def test_edit_before_the_answer_the_old_text_never_reaches_memory(
    http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, sockets, redis
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, SECOND)
    script_answer(scripted, SLOW, latency_ms=1500, times=1)
    await workers()
    sent = await post(http, anna, "Was hast du heute vr?")
    old_id = sent.json()["nachrichten_id"]
    stage = await ws.wait_for(
        lambda m: m.get("typ") == "character_stage" and m["graph"] == "character"
    )
    edited = await http.put(
        f"/turns/nova/messages/{old_id}", json={"text": QUESTION}, headers=auth(anna)
    )
    assert edited.status_code == 200, edited.text
    assert edited.json()["art"] == "wird_zurueckgezogen"
    new_id = edited.json()["neu"]["nachrichten_id"]
    response = await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and new_id in m["nachrichten_ids"]
    )
    assert old_id not in response["nachrichten_ids"], "the old message is not answered"
    answer = response["nachricht"]
    assert (await ws.wait_typ("turn_entfernt"))["nachrichten_ids"] == [old_id]
    await until(lambda: _stored(http, anna, response["turn_id"]), "the new turn stored")
    assert await session(http, anna) == [("user", QUESTION), ("assistant", answer)]
    assert await short_term_of(redis, stage["turn_id"]) == []


async def test_a_failed_new_answer_leaves_the_turn_as_it_was(
    http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, sockets, db
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, FIRST)
    await workers(failures=FailedTurnLog(db))
    first = await answered(http, anna, ws, QUESTION)
    turn = first["turn_id"]
    scripted.add(RESPONDER, fault="error")  # every answer from now on fails
    started = await http.post("/turns/nova/regenerate", headers=auth(anna))
    assert started.status_code == 202, started.text
    failed = await ws.wait_for(
        lambda m: m.get("typ") == "turn_gescheitert" and m["turn_id"] == turn
    )
    assert failed["nachrichten_ids"] == first["nachrichten_ids"]
    restored = await ws.wait_for(
        lambda m: m.get("typ") == "antwort_varianten" and m["gewaehlt"] is not None
    )
    assert restored["texte"] == [FIRST] and restored["gewaehlt"] == 0
    await until(lambda: _idle_pair(http, anna), "the failed run ended")
    assert await session(http, anna) == [("user", QUESTION), ("assistant", FIRST)]
    rows = await history(http, anna)
    assert [(r["eingabe"], r["nachricht"], r["gescheitert"]) for r in rows] == [
        (QUESTION, FIRST, False)
    ]


async def _idle_pair(http: httpx.AsyncClient, token: str) -> bool:
    turns = await session(http, token)
    return bool(turns) and turns[-1][0] == "assistant"
