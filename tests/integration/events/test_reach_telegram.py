"""Telegram as a channel, through the real app, queues, consumers and graphs; the Bot API is
a local stand-in (bot_api.py) and the model is scripted. A chat is linked with a one-time
code, talks to Nova through the same intake as the page, gets answers, impulses and
failures back when no page is open, and a chat that blocked the bot is marked and left
alone (docs/behaviour/reach.md)."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
import uvicorn
from bot_api import TOKEN, BotApi, running_bot_api
from event_helpers import WAIT, Running, free_port, post, script_answer
from impulse_helpers import PAIR, Clock, at, prime
from psycopg_pool import AsyncConnectionPool
from typer.testing import CliRunner

from novaberg.api.app import create_app
from novaberg.api.channel_intake import TOO_FAST
from novaberg.api.context import AppContext
from novaberg.cli import app as cli_app
from novaberg.config import Settings
from novaberg.events.delivery import Delivery
from novaberg.events.model import ResponseMessage
from novaberg.events.outcomes import outcome_key
from novaberg.events.reminders import deliver_due_reminders
from novaberg.graph.agent_graph import build_agent_graph
from novaberg.graph.contract import GraphDeps
from novaberg.impulses.delivery import ImpulseDelivery
from novaberg.impulses.gates import HELD
from novaberg.llm.gate import ModelGate
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.reach.lead import Reach
from novaberg.reach.linking import new_code
from novaberg.reach.sender import MAX_ATTEMPTS
from novaberg.reach.telegram_poll import NOT_YET
from novaberg.runtime.services import Endpoints
from novaberg.store import keys

CHAT = 5550001


@pytest.fixture
async def bot_api() -> AsyncIterator[BotApi]:
    async with running_bot_api() as api:
        yield api


@asynccontextmanager
async def serving(context: AppContext, bot_api: BotApi, **extra: Any) -> AsyncIterator[Running]:
    """The real app with a bot token, pointed at the stand-in (no consumers: tests start
    workers). `extra` settings may name `{url}`, the app's own address."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with_bot = context.settings.model_copy(
        update={
            "telegram_token": TOKEN,
            "telegram_api_url": bot_api.url,
            "telegram_poll_timeout": 1,
            **{k: v.format(url=url) if isinstance(v, str) else v for k, v in extra.items()},
        }
    )
    app = create_app(context=dataclasses.replace(context, settings=with_bot))
    srv = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    )
    task = asyncio.create_task(srv.serve())
    for _ in range(500):
        if srv.started:
            break
        await asyncio.sleep(0.01)
    assert srv.started, "uvicorn did not start"
    app.state.reach.sender.base_delay = 0.1  # transient retries within the test's bound
    try:
        yield Running(url, app)
    finally:
        srv.should_exit = True
        await asyncio.wait_for(task, 15)


@pytest.fixture
def context(
    settings: Settings,
    endpoints: Endpoints,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
    gate: ModelGate,
) -> AppContext:
    return AppContext(settings, endpoints, redis, db, model, gate)


@pytest.fixture
async def server(context: AppContext, bot_api: BotApi) -> AsyncIterator[Running]:
    async with serving(context, bot_api) as running:
        yield running


async def linked(bot_api: BotApi, redis: aioredis.Redis, chat: int = CHAT) -> None:
    """Link `chat` to anna the way a person does: a code, sent as /start CODE."""
    code = await new_code(redis, "anna")
    await bot_api.user_writes(chat, f"/start {code}")
    [reply] = await bot_api.wait_sent(chat)
    assert reply.text.startswith("Verbunden"), reply.text


async def history(http: httpx.AsyncClient, token: str, count: int) -> list[dict[str, Any]]:
    """The page's history once it holds `count` turns (written after the answer left)."""
    for _ in range(int(WAIT / 0.05)):
        response = await http.get("/history/nova", headers={"Authorization": f"Bearer {token}"})
        entries = response.json()["eintraege"]
        if len(entries) >= count:
            return list(entries)
        await asyncio.sleep(0.05)
    raise AssertionError(f"history did not reach {count} turns: {entries}")


async def outbox_drained(redis: aioredis.Redis) -> None:
    """Every item sent or given up: none in the outbox, the work list or waiting to retry
    (read in one transaction: an item moves between them, never out of all three)."""
    for _ in range(int(WAIT / 0.02)):
        async with redis.pipeline(transaction=True) as pipe:
            pipe.llen(keys.channel_outbox())
            pipe.llen(keys.channel_outbox_work())
            pipe.zcard(keys.channel_retry())
            lengths = await pipe.execute()
        if not any(lengths):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the channel outbox was not drained")


async def test_a_linked_chat_talks_to_nova_and_the_page_shows_the_same_history(
    http: httpx.AsyncClient,
    token,
    workers,
    scripted: ScriptedLLM,
    redis,
    bot_api: BotApi,
    caplog: pytest.LogCaptureFixture,
) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.DEBUG)
    anna = await token("anna")
    await linked(bot_api, redis)
    script_answer(scripted, "Schön, von dir zu hören! Wohin geht es?")
    await workers()

    await bot_api.user_writes(CHAT, "Hallo Nova, ich sitze im Zug.")

    sent = await bot_api.wait_sent(CHAT, 2)
    print("telegram chat:", [s.text for s in sent])
    assert sent[1].text == "Schön, von dir zu hören! Wohin geht es?"
    [turn] = await history(http, anna, 1)
    assert turn["eingabe"] == "Hallo Nova, ich sitze im Zug."
    assert turn["nachricht"] == "Schön, von dir zu hören! Wohin geht es?"
    await outbox_drained(redis)
    assert len(bot_api.to(CHAT)) == 2, "exactly one answer in the chat"
    logged = [r.getMessage() for r in caplog.records]
    assert any("/bot***/sendMessage" in m for m in logged), "the Bot API requests are logged"
    assert not [m for m in logged if TOKEN.split(":")[1] in m], "never the bot token"


async def test_an_answer_to_a_telegram_message_goes_there_while_the_page_also_sees_it(
    token, sockets, workers, scripted: ScriptedLLM, redis, bot_api: BotApi
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    await linked(bot_api, redis)
    page = await sockets(anna)
    script_answer(scripted, "Gute Reise!")
    await workers()

    await bot_api.user_writes(CHAT, "Ich fahre gleich los.")

    seen = await page.wait_typ("character_response")
    utterance = page.of("user_utterance")
    print(
        "page socket:", [(m["typ"], m.get("nachricht") or m.get("aeusserungen")) for m in page.seen]
    )
    assert seen["nachricht"] == "Gute Reise!"
    assert utterance and utterance[0]["client_ids"] == ["telegram"]
    sent = await bot_api.wait_sent(CHAT, 2)
    assert sent[1].text == "Gute Reise!", "its origin gets the answer though a page is open"


async def test_a_page_answer_stays_on_the_page_while_a_socket_is_open(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM, redis, bot_api: BotApi
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    await linked(bot_api, redis)
    page = await sockets(anna)
    await redis.set(keys.presence("anna"), "1")  # the socket's own mark may lag a moment
    script_answer(scripted, "Ich bin da.")
    await workers()

    assert (await post(http, anna, "Bist du da?")).status_code == 202

    assert (await page.wait_typ("character_response"))["nachricht"] == "Ich bin da."
    await outbox_drained(redis)
    assert [s.text for s in bot_api.to(CHAT)][1:] == [], "nothing went to the chat"


async def test_with_no_page_open_a_page_answer_and_a_failed_turn_reach_the_chat(
    http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, redis, bot_api: BotApi
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    await linked(bot_api, redis)
    script_answer(scripted, "Da bin ich wieder.", times=1)
    await workers()
    assert (await post(http, anna, "Hallo?")).status_code == 202
    sent = await bot_api.wait_sent(CHAT, 2)
    assert sent[1].text == "Da bin ich wieder."

    scripted.rules.clear()
    script_answer(scripted, "", fault="error")
    assert (await post(http, anna, "Und jetzt?")).status_code == 202
    sent = await bot_api.wait_sent(CHAT, 3)
    print("telegram chat:", [s.text for s in sent])
    assert "nicht geklappt" in sent[2].text


async def test_a_voice_message_gets_not_yet_in_words_and_queues_nothing(
    redis, bot_api: BotApi, server: Running
) -> None:  # type: ignore[no-untyped-def]
    await linked(bot_api, redis)

    await bot_api.user_writes(CHAT, voice={"file_id": "v1", "file_unique_id": "u1", "duration": 3})

    sent = await bot_api.wait_sent(CHAT, 2)
    assert sent[1].text == NOT_YET
    assert await redis.llen(keys.prompt_queue(PAIR)) == 0


async def test_an_unlinked_chat_and_a_wrong_code_are_told_how_to_link(
    redis, bot_api: BotApi, server: Running
) -> None:  # type: ignore[no-untyped-def]
    await bot_api.user_writes(CHAT, "Hallo?")
    await bot_api.user_writes(CHAT, "/start FALSCH42")
    sent = await bot_api.wait_sent(CHAT, 2)
    assert "noch nicht verbunden" in sent[0].text
    assert "unbekannt oder abgelaufen" in sent[1].text
    assert await redis.llen(keys.prompt_queue(PAIR)) == 0


async def test_character_lists_and_changes_who_the_chat_talks_to(
    redis, db, bot_api: BotApi, server: Running
) -> None:  # type: ignore[no-untyped-def]
    await linked(bot_api, redis)
    await bot_api.user_writes(CHAT, "/character")
    await bot_api.user_writes(CHAT, "/character niemand")
    await bot_api.user_writes(CHAT, "/character nova")
    sent = await bot_api.wait_sent(CHAT, 4)
    assert "Du schreibst mit nova" in sent[1].text
    assert "kenne ich nicht" in sent[2].text
    assert sent[3].text == "Du schreibst jetzt mit nova."


async def test_a_blocked_bot_marks_the_chat_and_it_is_not_tried_again(
    http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, redis, db, bot_api: BotApi
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    await linked(bot_api, redis)
    bot_api.blocked.add(CHAT)
    script_answer(scripted, "Hallo!")
    await workers()

    assert (await post(http, anna, "Eins")).status_code == 202
    await history(http, anna, 1)
    await outbox_drained(redis)
    async with db.connection() as conn:
        cur = await conn.execute("SELECT gestoert_am, stoerung FROM kanal_verknuepfung")
        [row] = await cur.fetchall()
    assert row["gestoert_am"] is not None and "403" in row["stoerung"]
    assert not await redis.sismember(keys.channel_users(), "anna")

    assert (await post(http, anna, "Zwei")).status_code == 202
    await history(http, anna, 2)
    await outbox_drained(redis)
    assert bot_api.refused[CHAT] == 1, "one try, then never again"


async def test_a_transient_failure_is_retried_and_sent_once(
    http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, redis, bot_api: BotApi
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    await linked(bot_api, redis)
    bot_api.failing = 2
    script_answer(scripted, "Jetzt aber.")
    await workers()

    assert (await post(http, anna, "Hallo?")).status_code == 202

    sent = await bot_api.wait_sent(CHAT, 2)
    await outbox_drained(redis)
    assert [s.text for s in bot_api.to(CHAT)] == [sent[0].text, "Jetzt aber."]
    assert bot_api.calls.count("sendMessage") == 1 + 3, "link reply, two 500s, then the answer"


@pytest.fixture
def clock() -> Clock:
    return Clock(at("2026-12-03 15:00"))


@pytest.fixture
async def impulses(settings, redis, db, model, clock) -> AsyncIterator[ImpulseDelivery]:  # type: ignore[no-untyped-def]
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model, clock=clock)
    yield ImpulseDelivery(deps, build_agent_graph(deps), clock=clock)
    assert deps.log is not None
    await deps.log.close()


async def test_an_impulse_for_a_person_without_a_page_goes_to_telegram(
    impulses: ImpulseDelivery,
    workers,
    scripted: ScriptedLLM,
    redis,
    clock: Clock,
    bot_api: BotApi,
    server: Running,
) -> None:  # type: ignore[no-untyped-def]
    await linked(bot_api, redis)
    await prime(redis, clock.now, connected=False)
    script_answer(scripted, "Wie ist es mit dem Streit ausgegangen?")
    await workers()

    [(pair, decision)] = await impulses.tick()

    assert pair == PAIR and decision.fired
    sent = await bot_api.wait_sent(CHAT, 2)
    print("telegram chat:", [s.text for s in sent])
    assert sent[1].text == "Wie ist es mit dem Streit ausgegangen?"


async def test_quiet_hours_hold_an_impulse_on_telegram_too(
    impulses: ImpulseDelivery,
    workers,
    scripted: ScriptedLLM,
    redis,
    db,
    clock: Clock,
    bot_api: BotApi,
    server: Running,
) -> None:  # type: ignore[no-untyped-def]
    await linked(bot_api, redis)
    clock.now = at("2026-12-03 23:30")
    await prime(redis, clock.now, connected=False)
    script_answer(scripted, "Bist du noch wach?")
    await workers()

    [(_, decision)] = await impulses.tick()

    assert not decision.fired
    closed = [g.name for g in decision.gates if not g.open]
    assert closed == ["ruhezeit"]
    assert await redis.llen(keys.event_queue(PAIR)) == 0
    async with db.connection() as conn:
        cur = await conn.execute("SELECT ergebnis FROM impuls_protokoll")
        assert [r["ergebnis"] for r in await cur.fetchall()] == [HELD]
    await outbox_drained(redis)
    assert len(bot_api.to(CHAT)) == 1, "only the link reply: nothing in the night"


def test_telegram_link_prints_a_code_as_its_last_word(
    endpoints: Endpoints, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {
        "NOVABERG_HOME": str(tmp_path),
        "NOVABERG_REDIS_URL": endpoints.redis_url,
        "NOVABERG_DATABASE_URL": endpoints.database_url,
        "NOVABERG_LLM": "scripted",
        "NOVABERG_EMBED_DIM": "384",
    }.items():
        monkeypatch.setenv(name, value)

    result = CliRunner().invoke(cli_app, ["telegram", "link", "--user", "anna"])

    assert result.exit_code == 0, result.output
    code = result.output.split()[-1]
    import redis as redis_lib

    with redis_lib.Redis.from_url(endpoints.redis_url, decode_responses=True) as sync:
        assert sync.get(keys.link_code(code)) == "anna"


def standalone_reach(redis: aioredis.Redis, db: AsyncConnectionPool, bot_api: BotApi) -> Reach:
    """A second process's `Reach` (its intake is never reached in these tests)."""

    async def refuse(user_id: str, character_id: str, text: str, message_id: str) -> str | None:
        return "nicht hier"

    return Reach(
        redis,
        db,
        refuse,
        token=TOKEN,
        api_url=bot_api.url,
        default_character="nova",
        poll_timeout=1,
        lease_seconds=3,
    )


async def outcome(redis: aioredis.Redis, text: str, turn_id: str) -> int:
    """An answer as the event consumer sends it (outcome marker and all)."""
    message = ResponseMessage.model_validate(
        {"character_id": "nova", "turn_id": turn_id, "nachrichten_ids": [], "nachricht": text}
    )
    return await Delivery(redis).send("anna", message, outcome_key=outcome_key("anna", turn_id, 0))


async def test_two_processes_send_each_outcome_once_and_the_second_takes_over(
    redis, db, bot_api: BotApi, server: Running
) -> None:  # type: ignore[no-untyped-def]
    await linked(bot_api, redis)
    first: Reach = server.app.state.reach
    second = standalone_reach(redis, db, bot_api)
    await second.start()
    try:
        for number in range(3):
            await outcome(redis, f"Gedanke {number}", f"t-{number}")
        await bot_api.wait_sent(CHAT, 4)
        await outbox_drained(redis)
        assert [first.leading, second.leading] == [True, False]

        await first.stop()  # its lease is released: the other process leads
        await outcome(redis, "Gedanke 3", "t-3")
        sent = await bot_api.wait_sent(CHAT, 5)
        await outbox_drained(redis)
    finally:
        await second.stop()
    print("telegram chat:", [s.text for s in sent])
    assert [s.text for s in bot_api.to(CHAT)][1:] == [f"Gedanke {n}" for n in range(4)]
    assert bot_api.calls.count("getUpdates") > 0


async def test_what_a_dead_sender_was_sending_is_sent_by_the_next(
    redis, db, bot_api: BotApi, server: Running
) -> None:  # type: ignore[no-untyped-def]
    await linked(bot_api, redis)
    await server.app.state.reach.stop()
    seq = await outcome(redis, "Bist du noch da?", "t-dead")
    # a sender took the item and died before sending: it sits in the work list
    assert await redis.lmove(keys.channel_outbox(), keys.channel_outbox_work(), "LEFT", "RIGHT")
    next_one = standalone_reach(redis, db, bot_api)
    await next_one.start()
    try:
        sent = await bot_api.wait_sent(CHAT, 2)
        await outbox_drained(redis)
    finally:
        await next_one.stop()
    assert sent[1].text == "Bist du noch da?"
    assert len(bot_api.to(CHAT)) == 2
    assert await redis.exists(keys.channel_sent("anna", seq, 1))


async def test_settings_keep_impulses_off_a_chat_but_answers_still_arrive(
    http: httpx.AsyncClient,
    token,
    impulses: ImpulseDelivery,
    workers,
    scripted: ScriptedLLM,
    redis,
    clock: Clock,
    bot_api: BotApi,
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    headers = {"Authorization": f"Bearer {anna}"}
    await linked(bot_api, redis)
    patched = await http.patch(
        "/settings", json={"kanaele": {"telegram": {"impulse": False}}}, headers=headers
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["kanaele"] == {
        "telegram": {"antworten": True, "impulse": False, "erinnerungen": True},
        "push": {"antworten": True, "impulse": True, "erinnerungen": True},
    }
    for bad in ({"fax": {"impulse": False}}, {"telegram": {"impulse": "nein"}}):
        refused = await http.patch("/settings", json={"kanaele": bad}, headers=headers)
        assert refused.status_code == 422, bad
    await prime(redis, clock.now, connected=False)
    script_answer(scripted, "Wie ist es mit dem Streit ausgegangen?")
    await workers()

    [(_, decision)] = await impulses.tick()
    assert decision.fired
    await history(http, anna, 1)  # the impulse's answer was sent (to the log, the page)
    await outbox_drained(redis)
    assert len(bot_api.to(CHAT)) == 1, "no impulse in the chat"

    assert (await post(http, anna, "Gut, danke.")).status_code == 202
    sent = await bot_api.wait_sent(CHAT, 2)
    assert sent[1].text == "Wie ist es mit dem Streit ausgegangen?", "answers still come"


async def test_a_reminder_reaches_the_chat_though_impulses_are_off_there(
    http: httpx.AsyncClient,
    token,
    workers,
    scripted: ScriptedLLM,
    redis,
    db,
    settings: Settings,
    model: ModelLayer,
    clock: Clock,
    bot_api: BotApi,
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    headers = {"Authorization": f"Bearer {anna}"}
    await linked(bot_api, redis)
    await http.patch(
        "/settings", json={"kanaele": {"telegram": {"impulse": False}}}, headers=headers
    )
    async with db.connection() as conn:
        await conn.execute(
            "INSERT INTO timeline (user_id, event_time, title, precision, remind)"
            " VALUES ('anna', %s, 'Zahnarzt', 'minute', TRUE)",
            (datetime.fromtimestamp(clock.now - 60, UTC),),
        )
    script_answer(scripted, "Denk an den Zahnarzt!")
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model, clock=clock)
    try:
        assert await deliver_due_reminders(deps, build_agent_graph(deps)) == 1
    finally:
        assert deps.log is not None
        await deps.log.close()
    await workers()  # (after: a worker's own reminder loop, on today's clock, would skip it)

    sent = await bot_api.wait_sent(CHAT, 2)
    assert sent[1].text == "Denk an den Zahnarzt!"


async def test_once_the_last_page_closes_the_next_answer_goes_to_the_chat(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM, redis, bot_api: BotApi
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    await linked(bot_api, redis)
    page = await sockets(anna)
    for _ in range(int(WAIT / 0.02)):
        if await redis.exists(keys.presence("anna")):
            break
        await asyncio.sleep(0.02)
    assert await redis.exists(keys.presence("anna"))
    await page.close()
    for _ in range(int(WAIT / 0.02)):
        if not await redis.exists(keys.presence("anna")):
            break
        await asyncio.sleep(0.02)
    script_answer(scripted, "Schon weg?")
    await workers()

    assert (await post(http, anna, "Tschüss!")).status_code == 202

    sent = await bot_api.wait_sent(CHAT, 2)
    assert sent[1].text == "Schon weg?"


async def test_a_channel_that_keeps_failing_is_given_up_after_bounded_tries(
    http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, redis, db, bot_api: BotApi
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    await linked(bot_api, redis)
    bot_api.failing = 1000
    script_answer(scripted, "Hörst du mich?")
    await workers()

    assert (await post(http, anna, "Hallo?")).status_code == 202
    await history(http, anna, 1)
    await outbox_drained(redis)

    assert bot_api.calls.count("sendMessage") == 1 + MAX_ATTEMPTS, "the link reply, then 6 tries"
    async with db.connection() as conn:
        cur = await conn.execute("SELECT gestoert_am FROM kanal_verknuepfung")
        [row] = await cur.fetchall()
    assert row["gestoert_am"] is None, "a transient failure never marks the chat"
    assert await redis.sismember(keys.channel_users(), "anna")


async def test_an_answer_the_openai_door_waits_for_goes_to_no_chat(
    http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, redis, bot_api: BotApi
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    await linked(bot_api, redis)
    script_answer(scripted, "Hier, direkt in deiner App.")
    await workers()

    response = await http.post(
        "/v1/chat/completions",
        json={"model": "nova", "messages": [{"role": "user", "content": "Hallo?"}]},
        headers={"Authorization": f"Bearer {anna}"},
    )

    assert response.status_code == 200, response.text
    assert response.json()["choices"][0]["message"]["content"] == "Hier, direkt in deiner App."
    await outbox_drained(redis)
    assert len(bot_api.to(CHAT)) == 1, "only the link reply: the door had the answer"


async def test_with_the_webhook_option_telegram_posts_and_nothing_polls(
    context: AppContext, token, workers, scripted: ScriptedLLM, redis, bot_api: BotApi
) -> None:  # type: ignore[no-untyped-def]
    await token("anna")
    script_answer(scripted, "Angekommen.")
    await workers()
    async with serving(context, bot_api, telegram_webhook_url="{url}") as running:
        for _ in range(int(WAIT / 0.02)):
            if bot_api.webhook:
                break
            await asyncio.sleep(0.02)
        assert bot_api.webhook == running.url + "/telegram/webhook"
        async with httpx.AsyncClient(base_url=running.url, timeout=WAIT) as client:

            async def post_update(text: str, secret: str | None) -> int:
                await bot_api.user_writes(CHAT, text)
                update = bot_api.updates[-1]
                headers = {} if secret is None else {"X-Telegram-Bot-Api-Secret-Token": secret}
                response = await client.post("/telegram/webhook", json=update, headers=headers)
                return response.status_code

            assert await post_update("Hallo?", None) == 401
            assert await post_update("Hallo?", "geraten") == 401
            code = await new_code(redis, "anna")
            assert await post_update(f"/start {code}", bot_api.webhook_secret) == 200
            assert await post_update("Bist du da?", bot_api.webhook_secret) == 200
            repeat = bot_api.updates[-1]
            again = await client.post(
                "/telegram/webhook",
                json=repeat,
                headers={"X-Telegram-Bot-Api-Secret-Token": bot_api.webhook_secret},
            )
            assert again.status_code == 200
            sent = await bot_api.wait_sent(CHAT, 2)
            await outbox_drained(redis)
    print("telegram chat:", [s.text for s in bot_api.to(CHAT)])
    assert sent[0].text.startswith("Verbunden")
    assert [s.text for s in bot_api.to(CHAT)][1:] == ["Angekommen."], "a repeat is dropped"
    assert "getUpdates" not in bot_api.calls


async def test_quick_telegram_messages_become_one_block_and_one_answer(
    token, sockets, workers, scripted: ScriptedLLM, redis, bot_api: BotApi
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    await linked(bot_api, redis)
    page = await sockets(anna)
    await bot_api.user_writes(CHAT, "Hey")
    await bot_api.user_writes(CHAT, "ich wollte sagen...")
    for _ in range(int(WAIT / 0.02)):
        if await redis.llen(keys.prompt_queue(PAIR)) == 2:
            break
        await asyncio.sleep(0.02)
    script_answer(scripted, "Ich höre.")
    await workers()

    answer = await page.wait_typ("character_response")
    sent = await bot_api.wait_sent(CHAT, 2)
    await outbox_drained(redis)
    assert len(answer["nachrichten_ids"]) == 2, "one block, one answer naming both"
    assert [s.text for s in bot_api.to(CHAT)][1:] == ["Ich höre."]
    assert sent[1].text == "Ich höre."


async def test_telegram_messages_share_the_person_s_rate_limit(
    context: AppContext, redis, bot_api: BotApi
) -> None:  # type: ignore[no-untyped-def]
    async with serving(context, bot_api, chat_burst=2, chat_rate=0.01):
        await linked(bot_api, redis)
        for text in ("eins", "zwei", "drei"):
            await bot_api.user_writes(CHAT, text)
        sent = await bot_api.wait_sent(CHAT, 2)
    assert sent[1].text == TOO_FAST
    assert await redis.llen(keys.prompt_queue(PAIR)) == 2, "the third was not queued"


async def test_a_page_that_comes_back_catches_up_on_what_went_to_the_chat(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM, redis, bot_api: BotApi
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    await linked(bot_api, redis)
    script_answer(scripted, "Du warst weg, hier ist es trotzdem.")
    await workers()
    assert (await post(http, anna, "Ich gehe kurz.")).status_code == 202
    sent = await bot_api.wait_sent(CHAT, 2)

    page = await sockets(anna, since=0)

    caught_up = await page.wait_typ("character_response")
    print("page socket:", [m["typ"] for m in page.seen])
    assert caught_up["nachricht"] == sent[1].text == "Du warst weg, hier ist es trotzdem."


async def test_the_page_api_lists_links_makes_a_code_and_unlinks(
    http: httpx.AsyncClient, token, redis, bot_api: BotApi
) -> None:  # type: ignore[no-untyped-def]
    anna = {"Authorization": f"Bearer {await token('anna')}"}
    bert = {"Authorization": f"Bearer {await token('bert')}"}
    made = await http.post("/kanaele/telegram/code", headers=anna)
    assert made.status_code == 200, made.text
    assert made.json()["befehl"] == f"/start {made.json()['code']}"
    await bot_api.user_writes(CHAT, made.json()["befehl"])
    await bot_api.wait_sent(CHAT)
    [row] = (await http.get("/kanaele", headers=anna)).json()
    assert (row["art"], row["character_id"], row["gestoert_am"]) == ("telegram", "nova", None)
    assert (await http.get("/kanaele", headers=bert)).json() == []

    assert (await http.delete(f"/kanaele/{row['id']}", headers=bert)).status_code == 404
    assert (await http.delete(f"/kanaele/{row['id']}", headers=anna)).status_code == 204
    assert (await http.delete(f"/kanaele/{row['id']}", headers=anna)).status_code == 404

    assert (await http.get("/kanaele", headers=anna)).json() == []
    assert not await redis.sismember(keys.channel_users(), "anna"), "no outcome enters the outbox"
    await bot_api.user_writes(CHAT, "Hallo?")
    sent = await bot_api.wait_sent(CHAT, 2)
    assert "noch nicht verbunden" in sent[1].text
    assert await redis.llen(keys.prompt_queue(PAIR)) == 0
