"""The person stays in control: settings per user and character, the stack and the shadow
queue with why each entry exists, dismissing; a user message resets the burst; a
connected user is marked present."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import httpx
import redis.asyncio as aioredis
from event_helpers import post, script_answer
from impulse_helpers import PAIR, entry

from novaberg.impulses import shadow_queue
from novaberg.impulses import stack as impulse_stack
from novaberg.impulses.shadow_queue import ShadowTask
from novaberg.store import keys


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_settings_default_then_patch_per_character(http: httpx.AsyncClient, token) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    got = await http.get("/settings", headers=auth(anna))
    assert got.status_code == 200
    assert got.json() == {
        "character_id": "nova",
        "impulse": True,
        "ruhezeit": "22:00-08:00",
        "zeitzone": "Europe/Berlin",
        "pro_tag": 3,
        "kanaele": {
            "telegram": {"antworten": True, "impulse": True, "erinnerungen": True},
            "push": {"antworten": True, "impulse": True, "erinnerungen": True},
        },
    }
    changed = await http.patch(
        "/settings", json={"impulse": False, "ruhezeit": "", "pro_tag": 1}, headers=auth(anna)
    )
    assert changed.status_code == 200
    assert changed.json()["impulse"] is False and changed.json()["ruhezeit"] == ""
    again = (await http.get("/settings", headers=auth(anna))).json()
    assert (again["impulse"], again["ruhezeit"], again["pro_tag"]) == (False, "", 1)
    other = (await http.get("/settings?character_id=luna", headers=auth(anna))).json()
    assert other["impulse"] is True, "settings are per character"
    bert = (await http.get("/settings", headers=auth(await token("bert")))).json()
    assert bert["impulse"] is True, "settings are per user"


async def test_bad_settings_are_refused(http: httpx.AsyncClient, token) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    for body in (
        {"ruhezeit": "22-8"},
        {"zeitzone": "Mars/Olympus"},
        {"pro_tag": -1},
        {"pro_tag": "2"},
        {"pro_tag": 1.5},
        {"impulse": "ja"},
        {"unbekannt": 1},
    ):
        assert (await http.patch("/settings", json=body, headers=auth(anna))).status_code == 422
    assert (await http.get("/settings")).status_code == 401


async def test_impulses_list_with_reasons_and_dismiss(
    http: httpx.AsyncClient, token, redis: aioredis.Redis, db
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    now = datetime.now(UTC)
    row_id, _ = await shadow_queue.push(
        db,
        ShadowTask("anna", "nova", "recherche", "Reha", reason="zusage: ich schau mal nach"),
        now,
    )
    item = await entry(redis, now.timestamp())
    listing = (await http.get("/impulses", headers=auth(anna))).json()
    assert [e["id"] for e in listing["stapel"]] == [item.id]
    assert "embedding" not in listing["stapel"][0] and listing["stapel"][0]["warum"]
    [queued] = listing["warteschlange"]
    assert queued["id"] == f"auftrag-{row_id}" and queued["warum"].startswith("zusage")
    assert listing["einstellungen"]["impulse"] is True

    bert = await token("bert")
    assert (await http.delete(f"/impulses/{item.id}", headers=auth(bert))).status_code == 404
    assert (await http.delete(f"/impulses/{item.id}", headers=auth(anna))).status_code == 204
    assert (await http.delete(f"/impulses/auftrag-{row_id}", headers=auth(anna))).status_code == 204
    assert await impulse_stack.size(redis, PAIR) == 0
    assert await shadow_queue.for_pair(db, "anna", "nova") == []
    assert (await http.delete(f"/impulses/{item.id}", headers=auth(anna))).status_code == 404


async def test_a_task_id_that_is_no_ascii_number_is_a_404(http: httpx.AsyncClient, token) -> None:  # type: ignore[no-untyped-def]
    """`str.isdigit` holds for '²' and for 5,000 digits, which int() or the database then
    refused with a 500: a task id is up to 18 ASCII digits, anything else is no entry."""
    anna = await token("anna")
    for entry_id in (
        "auftrag-%C2%B2",
        "auftrag-%D9%A3",
        "auftrag-" + "9" * 5000,
        "auftrag-" + "9" * 19,
    ):
        answer = await http.delete(f"/impulses/{entry_id}", headers=auth(anna))
        assert answer.status_code == 404, (entry_id[:20], answer.status_code)
        assert answer.json()["detail"]["fehler"] == "nicht_gefunden"


async def test_a_user_message_resets_the_burst(
    http: httpx.AsyncClient, token, workers, sockets, redis: aioredis.Redis, scripted
) -> None:  # type: ignore[no-untyped-def]
    anna = await token("anna")
    ws = await sockets(anna)
    for _ in range(200):
        if await redis.exists(keys.presence("anna")):
            break
        await asyncio.sleep(0.01)
    assert await redis.exists(keys.presence("anna")), "a connected user is marked present"
    await redis.set(keys.impulse_burst(PAIR), 2)
    script_answer(scripted, "Schön, von dir zu hören.")
    await workers()
    assert (await post(http, anna, "Da bin ich wieder.")).status_code == 202
    await ws.wait_typ("character_response")
    assert not await redis.exists(keys.impulse_burst(PAIR))
