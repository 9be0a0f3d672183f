"""One identity: `GET /chat/me` says whom a token signs in as (the page's local single user or
a user with a key); a token made with `POST /tokens` belongs to the same person, so an
OpenAI client with it continues the page's conversation; `GET/PUT /persona` keep the
person's name and description, which reach the prompts only when set."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from event_helpers import WAIT, Running, post, script_answer
from openai import AsyncOpenAI

from novaberg.llm.scripted import ScriptedLLM

LIVE = 30.0
"""Heartbeat TTL of the workers: the door answers 503 when no worker beats."""


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def who(response: httpx.Response) -> tuple[str, bool, str]:
    body = response.json()
    return body["user_id"], body["lokal"], body["name"]


def page_token(server: Running) -> str:
    token = server.app.state.chat.page_token
    assert token, "a loopback server hands its page a local token"
    return str(token)


async def test_chat_me_tells_the_local_page_user_from_a_signed_in_one(
    server: Running, http: httpx.AsyncClient, token, settings
) -> None:
    local = await http.get("/chat/me", headers=bearer(page_token(server)))
    assert local.status_code == 200, local.text
    assert who(local) == (settings.default_user, True, settings.default_user)
    anna = await token("anna")
    assert who(await http.get("/chat/me", headers=bearer(anna))) == ("anna", False, "anna")
    await http.put("/persona", json={"name": "Annika"}, headers=bearer(anna))
    assert who(await http.get("/chat/me", headers=bearer(anna))) == ("anna", False, "Annika")
    refused = await http.get("/chat/me")
    assert refused.status_code == 401


async def test_a_token_for_other_apps_is_the_same_person_shown_once(
    server: Running, http: httpx.AsyncClient, settings
) -> None:
    page = page_token(server)
    made = await http.post("/tokens", json={"label": "SillyTavern"}, headers=bearer(page))
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["label"] == "SillyTavern" and body["token"].startswith("nvb_")
    other = body["token"]
    me = await http.get("/chat/me", headers=bearer(other))
    assert who(me) == (settings.default_user, False, settings.default_user)
    listed = (await http.get("/tokens", headers=bearer(page))).json()
    assert [t["label"] for t in listed if t["id"] == body["id"]] == ["SillyTavern"]
    assert all("token" not in t for t in listed), "the list never shows a token again"
    for bad in ({"label": "  "}, {}, {"label": "x" * 101}):
        refused = await http.post("/tokens", json=bad, headers=bearer(page))
        assert refused.status_code == 422, (bad, refused.text)
    gone = await http.delete(f"/tokens/{body['id']}", headers=bearer(page))
    assert gone.status_code == 204
    assert (await http.get("/chat/me", headers=bearer(other))).status_code == 401
    assert (await http.get("/chat/me", headers=bearer(page))).status_code == 200


async def test_an_openai_client_with_a_settings_token_continues_the_pages_chat(
    server: Running, http: httpx.AsyncClient, workers, scripted: ScriptedLLM
) -> None:
    page = page_token(server)
    made = (await http.post("/tokens", json={"label": "Open WebUI"}, headers=bearer(page))).json()
    script_answer(scripted, "Aus der anderen App, aber ich kenne dich.")
    await workers(heartbeat_ttl=LIVE)
    door = AsyncOpenAI(base_url=f"{server.url}/v1", api_key=made["token"], timeout=WAIT)
    answer = await door.chat.completions.create(
        model="nova", messages=[{"role": "user", "content": "Hallo aus Open WebUI"}]
    )
    assert answer.choices[0].message.content == "Aus der anderen App, aber ich kenne dich."
    wanted = ("Hallo aus Open WebUI", "Aus der anderen App, aber ich kenne dich.")
    turns: list[tuple[str, str]] = []
    async with asyncio.timeout(WAIT):  # a guard: the history is written after the release
        while wanted not in turns:
            history = await http.get("/history/nova", headers=bearer(page))
            assert history.status_code == 200, history.text
            turns = [(e["eingabe"], e["nachricht"]) for e in history.json()["eintraege"]]
            await asyncio.sleep(0.05)
    assert turns == [wanted], "the page's person holds exactly the door's turn"


async def test_the_persona_is_kept_per_user_and_emptied_away(
    http: httpx.AsyncClient, token, db
) -> None:
    anna, berta = await token("anna"), await token("berta")
    assert (await http.get("/persona", headers=bearer(anna))).json() == {
        "name": "",
        "beschreibung": "",
    }
    wanted = {"name": "  Annika ", "beschreibung": "Gärtnerin in Kassel, mag Regen."}
    saved = await http.put("/persona", json=wanted, headers=bearer(anna))
    assert saved.status_code == 200, saved.text
    assert saved.json() == {"name": "Annika", "beschreibung": "Gärtnerin in Kassel, mag Regen."}
    assert (await http.get("/persona", headers=bearer(anna))).json() == saved.json()
    assert (await http.get("/persona", headers=bearer(berta))).json()["name"] == ""
    too_long = await http.put("/persona", json={"name": "x" * 81}, headers=bearer(anna))
    assert too_long.status_code == 422
    cleared = await http.put(
        "/persona", json={"name": " ", "beschreibung": ""}, headers=bearer(anna)
    )
    assert cleared.json() == {"name": "", "beschreibung": ""}
    async with db.connection() as conn:
        rows = await (await conn.execute("SELECT user_id FROM nutzer_persona")).fetchall()
    assert rows == [], "an emptied persona leaves no row"


def _prompts(scripted: ScriptedLLM, since: int) -> tuple[str, str]:
    calls: list[dict[str, Any]] = scripted.calls[since:]
    (responder,) = [
        c["prompt"] for c in calls if c["schema"] is None and "Du bist Nova." in c["prompt"]
    ]
    (composer,) = [
        c["prompt"]
        for c in calls
        if c["schema"] is None and "[AUFGABE]\nDu bereitest den Inhalt" in c["prompt"]
    ]
    return responder, composer


async def test_the_persona_reaches_the_prompts_only_when_set(
    http: httpx.AsyncClient, token, sockets, workers, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Gern.")
    await workers()

    async def turn(text: str) -> tuple[str, str]:
        since = len(scripted.calls)
        accepted = await post(http, anna, text)
        assert accepted.status_code == 202, accepted.text
        sent = accepted.json()["nachrichten_id"]
        await ws.wait_for(
            lambda m: m.get("typ") == "character_response" and sent in m.get("nachrichten_ids", [])
        )
        return _prompts(scripted, since)

    plain_responder, plain_composer = await turn("Wie war dein Tag?")
    for prompt in (plain_responder, plain_composer):
        assert "[GEGENUEBER]" not in prompt and "[PERSON-A]" not in prompt
    persona = {"name": "Annika", "beschreibung": "Gärtnerin in Kassel, mag Regen."}
    assert (await http.put("/persona", json=persona, headers=bearer(anna))).status_code == 200
    responder, composer = await turn("Und morgen?")
    assert "[GEGENUEBER]\nDie Person, mit der du sprichst, heißt Annika." in responder
    assert "So beschreibt sich die Person selbst: Gärtnerin in Kassel, mag Regen." in responder
    assert "[PERSON-A]\nPerson A heißt Annika." in composer
    assert "So beschreibt sich Person A selbst: Gärtnerin in Kassel, mag Regen." in composer
