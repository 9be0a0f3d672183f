"""Web Push as a channel, through the real app, queues, consumers and graphs; the push
service is a local one (push_service.py) that checks the VAPID signature and decrypts each
notification with the subscription's private key. A device is subscribed through the API,
gets Nova's impulse and answers as notifications when no page is open (the text asserted
after decryption), nothing in quiet hours, and a 410 subscription is marked after one try
(docs/behaviour/reach.md#web-push)."""

from __future__ import annotations

import asyncio
import json
import stat
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from event_helpers import WAIT, Running, post, script_answer
from impulse_helpers import PAIR, Clock, at, prime
from push_service import PushService, running_push_service

from novaberg.config import Settings
from novaberg.events.delivery import Delivery
from novaberg.events.reminders import deliver_due_reminders
from novaberg.graph.agent_graph import build_agent_graph
from novaberg.graph.contract import GraphDeps
from novaberg.impulses.delivery import ImpulseDelivery
from novaberg.impulses.gates import HELD
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.reach.push import PREVIEW_CHARS
from novaberg.reach.sender import MAX_ATTEMPTS
from novaberg.reach.vapid import KEY_FILE
from novaberg.store import keys


@pytest.fixture
async def push(http: httpx.AsyncClient, token) -> AsyncIterator[PushService]:  # type: ignore[no-untyped-def]
    """The local push service, told the installation's public key (as the page gets it)."""
    async with running_push_service() as service:
        anna = await token("anna")
        answer = await http.get("/kanaele/push/schluessel", headers=auth(anna))
        assert answer.status_code == 200, answer.text
        service.server_key = answer.json()["schluessel"]
        yield service


@pytest.fixture
def fast_retries(server: Running) -> None:
    server.app.state.reach.sender.base_delay = 0.05


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def subscribed(
    http: httpx.AsyncClient, token: str, push: PushService, name: str = "phone"
) -> tuple[Any, int]:
    """A device subscribed the way the page does it: the browser's subscription, posted."""
    device = push.device(name)
    answer = await http.post(
        "/kanaele/push/geraete",
        json={**device.subscription(push.url), "character_id": "nova"},
        headers=auth(token),
    )
    assert answer.status_code == 201, answer.text
    return device, int(answer.json()["id"])


async def outbox_drained(redis: aioredis.Redis) -> None:
    """Every item sent or given up (read in one transaction, as the Telegram tests do)."""
    for _ in range(int(WAIT / 0.02)):
        async with redis.pipeline(transaction=True) as pipe:
            pipe.llen(keys.channel_outbox())
            pipe.llen(keys.channel_outbox_work())
            pipe.zcard(keys.channel_retry())
            lengths = await pipe.execute()
        if not any(lengths):
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the channel outbox did not drain: {lengths}")


async def history(http: httpx.AsyncClient, token: str, count: int) -> list[dict[str, Any]]:
    for _ in range(int(WAIT / 0.05)):
        entries = (await http.get("/history/nova", headers=auth(token))).json()["eintraege"]
        if len(entries) >= count:
            return list(entries)
        await asyncio.sleep(0.05)
    raise AssertionError(f"history did not reach {count} turns")


@pytest.fixture
def clock() -> Clock:
    return Clock(at("2026-12-03 15:00"))


@pytest.fixture
async def impulses(settings, redis, db, model, clock) -> AsyncIterator[ImpulseDelivery]:  # type: ignore[no-untyped-def]
    deps = GraphDeps(settings=settings, redis=redis, pool=db, model=model, clock=clock)
    yield ImpulseDelivery(deps, build_agent_graph(deps), clock=clock)
    assert deps.log is not None
    await deps.log.close()


async def test_an_impulse_for_a_person_whose_page_is_closed_arrives_as_a_decrypted_push(
    http: httpx.AsyncClient,
    token,
    push: PushService,
    impulses: ImpulseDelivery,
    workers,
    scripted: ScriptedLLM,
    redis,
    clock: Clock,
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    phone, _ = await subscribed(http, anna, push)
    await prime(redis, clock.now, connected=False)
    script_answer(scripted, "Wie ist es mit dem Streit ausgegangen?")
    await workers()

    [(pair, decision)] = await impulses.tick()

    assert pair == PAIR and decision.fired
    [note] = await push.wait_received(phone)
    print("push notification (decrypted):", note)
    assert note["titel"] == "Nova", "the sender, by the name the person knows"
    assert note["text"] == "Wie ist es mit dem Streit ausgegangen?"
    seq = note["seq"]
    logged = json.loads(str(await Delivery(redis).logged("anna", seq)))
    assert (logged["typ"], logged["nachricht"]) == ("character_response", note["text"])
    turn = logged["turn_id"]
    assert note["url"] == f"/?charakter=nova#turn-{turn}", "opens the page at that message"
    assert push.problems == []


async def test_quiet_hours_hold_an_impulse_from_the_push_channel_too(
    http: httpx.AsyncClient,
    token,
    push: PushService,
    impulses: ImpulseDelivery,
    workers,
    scripted: ScriptedLLM,
    redis,
    db,
    clock: Clock,
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    phone, _ = await subscribed(http, anna, push)
    clock.now = at("2026-12-03 23:30")
    await prime(redis, clock.now, connected=False)
    script_answer(scripted, "Bist du noch wach?")
    await workers()

    [(_, decision)] = await impulses.tick()

    assert not decision.fired
    assert [g.name for g in decision.gates if not g.open] == ["ruhezeit"]
    async with db.connection() as conn:
        cur = await conn.execute("SELECT ergebnis FROM impuls_protokoll")
        assert [r["ergebnis"] for r in await cur.fetchall()] == [HELD]
    await outbox_drained(redis)
    assert phone.requests == 0, "nothing in the night"


async def test_a_page_answer_with_no_page_open_reaches_every_device_shortened(
    http: httpx.AsyncClient, token, push: PushService, workers, scripted: ScriptedLLM, redis
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    phone, _ = await subscribed(http, anna, push, "phone")
    laptop, _ = await subscribed(http, anna, push, "laptop")
    long_answer = "Das ist eine lange Antwort. " * 20
    script_answer(scripted, long_answer.strip())
    await workers()

    assert (await post(http, anna, "Erzähl mir was")).status_code == 202

    [on_phone] = await push.wait_received(phone)
    [on_laptop] = await push.wait_received(laptop)
    assert on_phone["text"] == on_laptop["text"]
    assert len(on_phone["text"]) <= PREVIEW_CHARS + 2 and on_phone["text"].endswith("…")
    assert long_answer.startswith(on_phone["text"][:-2])


@pytest.mark.parametrize("gone", [410, 404, 403])
async def test_a_gone_subscription_is_marked_after_one_try_and_not_tried_again(
    http: httpx.AsyncClient,
    token,
    push: PushService,
    workers,
    scripted: ScriptedLLM,
    redis,
    db,
    gone: int,
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    phone, link_id = await subscribed(http, anna, push)
    phone.answer = gone
    script_answer(scripted, "Hallo!")
    await workers()

    assert (await post(http, anna, "Eins")).status_code == 202
    await history(http, anna, 1)
    await outbox_drained(redis)
    assert phone.requests == 1
    [link] = (await http.get("/kanaele", headers=auth(anna))).json()
    assert link["id"] == link_id and link["art"] == "push"
    assert link["gestoert_am"] is not None and str(gone) in link["stoerung"]
    assert not await redis.sismember(keys.channel_users(), "anna")

    assert (await post(http, anna, "Zwei")).status_code == 202
    await history(http, anna, 2)
    await outbox_drained(redis)
    assert phone.requests == 1, "one try, then never again"


async def test_a_push_service_error_is_retried_and_the_notification_sent_once(
    http: httpx.AsyncClient,
    token,
    push: PushService,
    workers,
    scripted: ScriptedLLM,
    redis,
    fast_retries: None,
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    phone, _ = await subscribed(http, anna, push)
    phone.failing = 2
    script_answer(scripted, "Jetzt aber.")
    await workers()

    assert (await post(http, anna, "Hallo?")).status_code == 202

    [note] = await push.wait_received(phone)
    await outbox_drained(redis)
    assert note["text"] == "Jetzt aber."
    assert phone.requests == 3 < MAX_ATTEMPTS, "two 500s, then the notification"
    assert len(phone.received) == 1


async def test_settings_keep_impulses_off_the_devices(
    http: httpx.AsyncClient,
    token,
    push: PushService,
    impulses: ImpulseDelivery,
    workers,
    scripted: ScriptedLLM,
    redis,
    clock: Clock,
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    phone, _ = await subscribed(http, anna, push)
    changed = await http.patch(
        "/settings",
        json={"character_id": "nova", "kanaele": {"push": {"impulse": False}}},
        headers=auth(anna),
    )
    assert changed.status_code == 200, changed.text
    assert changed.json()["kanaele"]["push"] == {
        "antworten": True,
        "impulse": False,
        "erinnerungen": True,
    }
    await prime(redis, clock.now, connected=False)
    script_answer(scripted, "Wie geht es dir?")
    await workers()

    [(_, decision)] = await impulses.tick()

    assert decision.fired
    await outbox_drained(redis)
    assert phone.requests == 0, "impulses switched off for push"


async def test_the_api_subscribes_lists_and_revokes_devices(
    http: httpx.AsyncClient, token, push: PushService, settings: Settings, redis
) -> None:  # type: ignore[no-untyped-def]
    anna, ben = await token("anna"), await token("ben")
    key_file = settings.home / KEY_FILE
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600, "only the server's user reads it"
    again = await http.get("/kanaele/push/schluessel", headers=auth(ben))
    assert again.json()["schluessel"] == push.server_key, "one key pair per installation"

    phone, phone_id = await subscribed(http, anna, push, "phone")
    _, laptop_id = await subscribed(http, anna, push, "laptop")
    renewed_keys = push.device("phone")  # the browser renewed: same endpoint, new keys
    renewed = await http.post(
        "/kanaele/push/geraete", json=renewed_keys.subscription(push.url), headers=auth(anna)
    )
    assert renewed.status_code == 201
    listed = (await http.get("/kanaele", headers=auth(anna))).json()
    assert [(link["art"], link["dienst"]) for link in listed] == [("push", "127.0.0.1")] * 2
    assert renewed.json()["id"] in {link["id"] for link in listed}, "the renewed one replaced"
    assert phone_id not in {link["id"] for link in listed}
    assert all("keys" not in json.dumps(link) for link in listed), "keys stay on the server"

    assert (await http.delete(f"/kanaele/{laptop_id}", headers=auth(ben))).status_code == 404
    assert (await http.delete(f"/kanaele/{laptop_id}", headers=auth(anna))).status_code == 204
    assert len((await http.get("/kanaele", headers=auth(anna))).json()) == 1

    bad = [
        {"endpoint": "http://push.example.org/x", "keys": phone.subscription(push.url)["keys"]},
        {**phone.subscription(push.url), "keys": {"p256dh": "AAAA", "auth": "AAAA"}},
        {"endpoint": "ftp://127.0.0.1/x", "keys": phone.subscription(push.url)["keys"]},
    ]
    for body in bad:
        refused = await http.post("/kanaele/push/geraete", json=body, headers=auth(anna))
        assert refused.status_code == 422, body


async def test_the_page_is_installable_with_a_manifest_and_a_root_service_worker(
    http: httpx.AsyncClient,
) -> None:
    page = (await http.get("/")).text
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page
    manifest = await http.get("/manifest.webmanifest")
    assert manifest.headers["content-type"].startswith("application/manifest+json")
    body = manifest.json()
    assert (body["start_url"], body["scope"], body["display"]) == ("/", "/", "standalone")
    for icon in body["icons"]:
        served = await http.get(icon["src"])
        assert served.status_code == 200 and served.headers["content-type"] == icon["type"]
    worker = await http.get("/sw.js")
    assert worker.headers["content-type"].startswith("text/javascript")
    assert worker.headers["cache-control"] == "no-cache", "a new worker reaches the browser"
    for event in ("push", "notificationclick"):
        assert f'addEventListener("{event}"' in worker.text


async def test_a_reminder_reaches_the_device_though_impulses_are_off_there(
    http: httpx.AsyncClient,
    token,
    push: PushService,
    workers,
    scripted: ScriptedLLM,
    redis,
    db,
    settings: Settings,
    model: ModelLayer,
    clock: Clock,
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    phone, _ = await subscribed(http, anna, push)
    await http.patch(
        "/settings",
        json={"character_id": "nova", "kanaele": {"push": {"impulse": False}}},
        headers=auth(anna),
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
    await workers()

    [note] = await push.wait_received(phone)
    assert note["text"] == "Denk an den Zahnarzt!"
    assert note["url"].startswith("/?charakter=nova#turn-erinnerung-")
