"""End to end through the real app, queues, consumers and graphs (scripted model only):
blocks, the turn marker, delivery to all of a user's clients and to no one else,
failures that name every id, duplicates that stay single."""

from __future__ import annotations

import asyncio
import logging

import httpx
import pytest
import redis.asyncio as aioredis
from event_helpers import post, script_answer

from novaberg.events.model import QueuedUtterance, build_event
from novaberg.events.queues import TurnQueues, push_event
from novaberg.llm.gate import ModelGate
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys

PAIR = Pair("anna", "nova")


async def _accepted(http: httpx.AsyncClient, token: str, text: str, **kw: object) -> str:
    response = await post(http, token, text, **kw)
    assert response.status_code == 202, response.text
    return str(response.json()["nachrichten_id"])


async def test_three_quick_messages_become_one_block_and_one_answer(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    texts = ["Hey", "Achso, ich wollte sagen...", "...dass ich morgen nicht kann"]
    ids = [await _accepted(http, anna, text) for text in texts]
    script_answer(scripted, "Schade! Dann ein andermal.")
    await workers()
    answer = await ws.wait_typ("character_response")
    assert answer["nachrichten_ids"] == ids
    assert answer["nachricht"] == "Schade! Dann ein andermal."
    assert answer["turn_id"]
    perception = [c["prompt"] for c in scripted.calls if c["schema"] == "PerceptionResult"]
    assert any("\n".join(texts) in p for p in perception), "the block is perceived as one"
    await ws.wait_for(lambda m: m.get("node") == "dispatcher" and m.get("graph") == "character")
    await asyncio.sleep(0.2)
    assert len(ws.of("character_response")) == 1
    assert not ws.of("turn_gescheitert")
    assert await redis.llen(keys.prompt_queue(PAIR)) == 0
    for _ in range(100):
        if not await redis.exists(keys.turn_marker(PAIR)):
            break
        await asyncio.sleep(0.02)
    assert not await redis.exists(keys.turn_marker(PAIR)), "marker deleted after the run"


async def test_block_cut_respects_the_30s_window(redis: aioredis.Redis) -> None:
    """Gaps to the *previous* utterance: 0, 12, 4 s join; a 40 s gap starts the next block."""
    stamps = [1000.0, 1012.0, 1016.0, 1056.0]
    for i, stamp in enumerate(stamps):
        entry = QueuedUtterance(nachrichten_id=f"m{i}", prompt=f"t{i}", empfangen_am=stamp)
        await redis.rpush(keys.prompt_queue(PAIR), entry.wire())
    queues = TurnQueues(redis, "w-test")
    first = await queues.begin_turn(PAIR, "turn-1")
    assert first is not None
    assert [QueuedUtterance.model_validate_json(r).message_id for r in first.data["items"]] == [
        "m0",
        "m1",
        "m2",
    ]
    assert await redis.get(keys.turn_marker(PAIR)) == "turn-1"
    assert await queues.begin_turn(PAIR, "turn-2") is None, "marker blocks a second turn"
    await redis.expire(keys.turn_marker(PAIR), 5)
    assert not await queues.refresh_marker(PAIR, "someone-else")
    assert await redis.ttl(keys.turn_marker(PAIR)) <= 5
    assert await queues.refresh_marker(PAIR, "turn-1"), "a moving turn keeps its marker"
    assert await redis.ttl(keys.turn_marker(PAIR)) > 5
    await queues.finish(PAIR, first, release_marker=True)
    await push_event(
        redis,
        build_event(
            user_id="anna",
            character_id="nova",
            source="user",
            typ="message",
            payload={"turn_id": "x", "nachrichten_ids": ["q"], "user_prompt": "q"},
        ),
    )
    assert await queues.begin_turn(PAIR, "turn-2") is None, "a waiting event blocks too"
    await redis.delete(keys.event_queue(PAIR))
    second = await queues.begin_turn(PAIR, "turn-2")
    assert second is not None and len(second.data["items"]) == 1


async def test_message_during_a_running_turn_waits_and_is_taken_after_it(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM
) -> None:
    """Written after turn 1's answer left, while its post-run still runs: the utterance
    waits for the marker and becomes turn 2 (before the answer left it would have
    superseded turn 1, test_supersede.py)."""
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Zweite Antwort.")
    script_answer(scripted, "Erste Antwort.", times=1)
    scripted.add(".*", SCORE_OK, schema="SalienceScore", latency_ms=600)  # a slow post-run
    await workers()
    first = await _accepted(http, anna, "Erste Frage")
    await ws.wait_typ("character_response")  # turn 1's answer left; its post-run runs
    second = await _accepted(http, anna, "Zweite Frage")
    answers = []
    for _ in range(2):
        answers.append(
            await ws.wait_for(lambda m: m.get("typ") == "character_response" and m not in answers)
        )
    assert [a["nachrichten_ids"] for a in answers] == [[first], [second]]
    assert [a["nachricht"] for a in answers] == ["Erste Antwort.", "Zweite Antwort."]
    second_turn = answers[1]["turn_id"]
    second_stages = [m["seq"] for m in ws.of("character_stage") if m["turn_id"] == second_turn]
    assert min(second_stages) > answers[0]["seq"], "turn 2 starts only after turn 1's answer"
    first_end = max(
        m["seq"] for m in ws.of("character_stage") if m["turn_id"] == answers[0]["turn_id"]
    )
    assert min(second_stages) > first_end, "…and after turn 1's post-run (marker)"


async def test_all_clients_of_a_user_receive_and_other_users_nothing(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM
) -> None:
    anna, bob = await token("anna"), await token("bob")
    laptop = await sockets(anna, client_id="laptop")
    phone = await sockets(anna, client_id="phone")
    bob_ws = await sockets(bob)
    script_answer(scripted, "Hallo Anna.")
    await workers()
    mid = await _accepted(http, anna, "Hallo", client_id="laptop")
    on_laptop = await laptop.wait_typ("character_response")
    on_phone = await phone.wait_typ("character_response")
    assert on_laptop["nachrichten_ids"] == on_phone["nachrichten_ids"] == [mid]
    assert on_laptop["seq"] == on_phone["seq"]
    utterance = await phone.wait_typ("user_utterance")
    assert utterance["nachrichten_ids"] == [mid]
    assert [(u["nachrichten_id"], u["prompt"]) for u in utterance["aeusserungen"]] == [
        (mid, "Hallo")
    ]
    assert "nachricht" not in utterance, "the block's text travels once, in aeusserungen"
    assert not laptop.of("user_utterance"), "the sending client does not get its own echo"
    await asyncio.sleep(0.3)
    assert [m["typ"] for m in bob_ws.seen] == ["verbindung"], "bob receives nothing of anna's"
    bob_me = await http.get("/chat/me", headers={"Authorization": f"Bearer {bob}"})
    me = bob_me.json()
    assert (me["user_id"], me["seq_aktuell"], me["name"]) == ("bob", 0, "bob")


def _user_event(user: str, turn_id: str, mid: str, text: str = "Hallo"):
    """The `message` event Path 1 hands on (built here to test Path 2 on its own)."""
    return build_event(
        user_id=user,
        character_id="nova",
        source="user",
        typ="message",
        payload={"turn_id": turn_id, "nachrichten_ids": [mid], "user_prompt": text},
    )


async def test_utterances_wait_for_a_free_gate_and_join_one_block(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    gate: ModelGate,
    redis: aioredis.Redis,
) -> None:
    """While every gate slot is busy (e.g. background work), Path 1 does not start: the
    utterances stay queued, no turn fails, and everything written meanwhile becomes one
    block once a slot frees (spec pipeline §10 step 1)."""
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Alles auf einmal beantwortet.")
    held = [await gate.acquire(wait_seconds=1) for _ in range(gate.slots)]
    await workers()
    ids = []
    for text in ("Hey", "Achso, ich wollte sagen...", "...dass ich morgen nicht kann"):
        ids.append(await _accepted(http, anna, text))
        await asyncio.sleep(0.2)  # several consumer polls between the messages
    assert await redis.llen(keys.prompt_queue(PAIR)) == 3
    assert not await redis.exists(keys.turn_marker(PAIR)), "no turn started without a slot"
    for slot in held:
        await gate.release(slot)
    answer = await ws.wait_typ("character_response")
    assert answer["nachrichten_ids"] == ids
    assert not ws.of("turn_gescheitert")


async def test_gate_wait_does_not_stall_other_pairs(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    gate: ModelGate,
    redis: aioredis.Redis,
) -> None:
    """Two pairs' CharacterGraph runs wait for the gate side by side: waiting for one never
    holds up claiming the other (seed 000 §7.2), and the intake keeps answering."""
    anna, bob = await token("anna"), await token("bob")
    anna_ws, bob_ws = await sockets(anna), await sockets(bob)
    script_answer(scripted, "Da bin ich.")
    held = [await gate.acquire(wait_seconds=1) for _ in range(gate.slots)]
    await push_event(redis, _user_event("anna", "t-anna", "m-anna"))
    await push_event(redis, _user_event("bob", "t-bob", "m-bob"))
    await workers()
    for user in ("anna", "bob"):
        pair = Pair(user, "nova")
        for _ in range(500):
            if "@" in (await redis.get(keys.turn_marker(pair)) or ""):
                break
            await asyncio.sleep(0.01)
        assert "@" in (await redis.get(keys.turn_marker(pair)) or ""), f"{user} not claimed"
    assert (await post(http, anna, "noch eine")).status_code == 202, "intake still answers"
    assert not anna_ws.of("character_stage"), "nothing ran while the gate was full"
    for slot in held:
        await gate.release(slot)
    assert (await anna_ws.wait_typ("character_response"))["nachrichten_ids"] == ["m-anna"]
    assert (await bob_ws.wait_typ("character_response"))["nachrichten_ids"] == ["m-bob"]


async def test_gate_timeout_fails_the_turn_naming_its_ids(
    token, sockets, workers, redis: aioredis.Redis
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    short = ModelGate(redis, "scripted-events", 1, wait_seconds=0.3)
    holder = await short.acquire()
    event = _user_event("anna", "t-wait", "m-1")
    event.payload["nachrichten_ids"] = ["m-1", "m-2"]
    await push_event(redis, event)
    worker = await workers()
    worker.events.gate = short
    failed = await ws.wait_typ("turn_gescheitert")
    await short.release(holder)
    assert failed["nachrichten_ids"] == ["m-1", "m-2"]
    assert failed["turn_id"] == "t-wait"
    assert failed["grund"].startswith("gate_timeout")
    for _ in range(200):
        if not await redis.exists(keys.turn_marker(PAIR)):
            break
        await asyncio.sleep(0.02)
    assert not await redis.exists(keys.turn_marker(PAIR))


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("timeout", "modell_timeout"),
        ("malformed", "modell_ausgabe_unlesbar"),
        ("error", "modell_nicht_erreichbar"),
    ],
)
async def test_model_failure_fails_the_turn_naming_all_ids(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    fault: str,
    reason: str,
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "", fault=fault)
    ids = [await _accepted(http, anna, t) for t in ("eins", "zwei", "drei")]
    await workers()
    failed = await ws.wait_typ("turn_gescheitert")
    assert failed["nachrichten_ids"] == ids
    assert failed["grund"].startswith(reason), failed["grund"]
    # names the last node that ran: one of the two the responder waits for
    last = failed["grund"].rsplit("(nach ", 1)[-1].rstrip(")")
    assert last in {"composer", "conversation_vector"}, failed["grund"]
    await asyncio.sleep(0.3)
    assert not ws.of("character_response")
    assert len(ws.of("turn_gescheitert")) == 1
    assert not await redis.exists(keys.turn_marker(PAIR))


async def test_a_model_that_refuses_every_call_fails_the_turn_at_once(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
) -> None:
    """Path 1 cannot perceive (its event still goes out, marked), Path 2's first model
    calls (router and conversation vector, concurrently) fail too: turn_gescheitert, and no
    node after them asks the model again."""
    anna = await token("anna")
    ws = await sockets(anna)
    scripted.add(".*", fault="error")
    mid = await _accepted(http, anna, "Hallo?")
    await workers()
    failed = await ws.wait_typ("turn_gescheitert")
    assert failed["nachrichten_ids"] == [mid]
    assert failed["grund"] == "modell_nicht_erreichbar (nach ei_calc)"
    schemas = [call["schema"] for call in scripted.calls]
    assert schemas[0] == "PerceptionResult"
    # the concurrent first round only: situation and router (the enricher's rewrite needs
    # two turns); nothing after it asks the model
    assert 1 <= len(schemas[1:]) <= 2
    assert set(schemas[1:]) <= {"SituationReading", "RouterDecision"}
    await asyncio.sleep(0.3)
    assert not ws.of("character_response")
    assert not await redis.exists(keys.turn_marker(PAIR))


SCORE_OK = {
    "themen": ["alltag"],
    "emotionen": {"explizit": [], "implizit": [], "valenz": "neutral"},
    "salienz": 0.5,
    "gedaechtnistyp": "kurz",
    "dimension": "kontext",
    "begruendung": "Alltag.",
    "intentionen": ["information_teilen"],
    "entitaeten_roh": [],
    "zeitausdruck_roh": "",
}


async def test_post_run_failure_never_costs_the_released_answer(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    caplog,
) -> None:
    """The dispatcher (after the release) cannot write the session turn: the answer that
    already left stays the turn's only outcome, and the pair is free again."""
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Das bleibt.")
    scripted.add(".*", SCORE_OK, schema="SalienceScore", latency_ms=600)  # a slow post-run
    caplog.set_level(logging.ERROR, logger="novaberg.events")
    mid = await _accepted(http, anna, "Hallo")
    await workers()
    answer = await ws.wait_typ("character_response")
    session = keys.session_turns(PAIR)
    await redis.delete(session)
    await redis.set(session, "kein Verlauf")  # WRONGTYPE for the dispatcher's RPUSH
    for _ in range(500):
        if not await redis.exists(keys.turn_marker(PAIR)):
            break
        await asyncio.sleep(0.02)
    assert not await redis.exists(keys.turn_marker(PAIR))
    assert answer["nachrichten_ids"] == [mid] and answer["nachricht"] == "Das bleibt."
    assert not ws.of("turn_gescheitert")
    assert any("answer kept" in r.getMessage() for r in caplog.records)
    await redis.delete(session)


async def test_duplicate_event_is_answered_once(
    token, sockets, workers, scripted: ScriptedLLM, redis: aioredis.Redis, caplog
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Einmal.")
    event = build_event(
        user_id="anna",
        character_id="nova",
        source="user",
        typ="message",
        payload={"turn_id": "t-dup", "nachrichten_ids": ["m-dup"], "user_prompt": "Hallo"},
    )
    await push_event(redis, event)
    await push_event(redis, event)  # delivered twice (e.g. a retried push)
    caplog.set_level(logging.WARNING, logger="novaberg.events")
    await workers()
    answer = await ws.wait_typ("character_response")
    assert answer["nachrichten_ids"] == ["m-dup"]
    for _ in range(200):
        if not await redis.llen(keys.event_queue(PAIR)) and not await redis.exists(
            keys.turn_marker(PAIR)
        ):
            break
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)
    assert len(ws.of("character_response")) == 1
    assert any("duplicate event" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("first", ["response", "failure"])
async def test_a_run_has_exactly_one_outcome(redis: aioredis.Redis, first: str) -> None:
    from novaberg.events.outcomes import Outcomes

    outcomes = Outcomes(redis)
    respond = outcomes.respond("anna", "nova", "t1", 0, ["m1"], {"nachricht": "Hallo"})
    fail = outcomes.fail("anna", "nova", "t1", 0, ["m1"], "modell_timeout")
    order = [respond, fail] if first == "response" else [fail, respond]
    assert await order[0] > 0
    assert await order[1] == 0
    assert await outcomes.respond("anna", "nova", "t1", 1, [], {"nachricht": "Nochmal"}) > 0
    logged = await redis.zrange(keys.delivery_log("anna"), 0, -1)
    assert len(logged) == 2


async def test_a_path_one_tail_failure_after_the_hand_over_costs_nothing(
    http: httpx.AsyncClient,
    token,
    sockets,
    workers,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    db,
    caplog,
) -> None:
    """Path 1 hands the turn on once the user's turn is stored; its dispatcher then fails
    (the write log refuses Path 1's rows). The event has left: the turn still gets its one
    answer — with salience's intentions, which reached it before the failure — no
    `turn_gescheitert`, and the pair is free again."""
    async with db.connection() as conn:
        await conn.execute(
            "ALTER TABLE pending_writes_log ADD CONSTRAINT kein_pfad1 CHECK (quelle <> 'human')"
            " NOT VALID"
        )
    try:
        anna = await token("anna")
        ws = await sockets(anna)
        script_answer(scripted, "Trotzdem da.")
        scripted.add(".*", SCORE_OK, schema="SalienceScore")
        caplog.set_level(logging.ERROR, logger="novaberg")
        mid = await _accepted(http, anna, "Hallo du")
        await workers()
        answer = await ws.wait_typ("character_response")
        assert answer["nachrichten_ids"] == [mid] and answer["nachricht"] == "Trotzdem da."
        assert answer["user_intentionen"] == SCORE_OK["intentionen"]
        for _ in range(500):
            if not await redis.exists(keys.turn_marker(PAIR)):
                break
            await asyncio.sleep(0.02)
        assert not await redis.exists(keys.turn_marker(PAIR))
        await asyncio.sleep(0.2)
        assert len(ws.of("character_response")) == 1
        assert not ws.of("turn_gescheitert")
        assert any("failed after its event left" in r.getMessage() for r in caplog.records)
    finally:
        async with db.connection() as conn:
            await conn.execute("ALTER TABLE pending_writes_log DROP CONSTRAINT kein_pfad1")
