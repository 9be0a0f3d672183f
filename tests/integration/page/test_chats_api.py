"""Chats of a pair over the API: the first chat holds the history so far, a new chat is open
and empty, each chat shows only its own turns, switching ends her running conversation,
rename/delete, another user's chat is a 404 in words, and the export in both formats."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
import redis.asyncio as aioredis
from psycopg_pool import AsyncConnectionPool

from novaberg.api.app import create_app
from novaberg.api.context import AppContext
from novaberg.api.error_sentences import SENTENCES
from novaberg.config import Settings
from novaberg.llm.gate import ModelGate
from novaberg.llm.layer import ModelLayer
from novaberg.pair import Pair
from novaberg.runtime.services import Endpoints
from novaberg.store import keys, session
from novaberg.store.failed_turns import FailedTurnLog
from novaberg.store.pipeline_log import KIND_RAW_TURN, PipelineLog
from novaberg.store.users import issue_token


@pytest.fixture
async def app_ctx(
    settings: Settings,
    endpoints: Endpoints,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
    model: ModelLayer,
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    ctx = AppContext(settings, endpoints, redis, db, model, ModelGate(redis, "scripted-chats", 1))
    app = create_app(context=ctx)
    app.state.local_page = False
    mine = (await issue_token(db, "leser", "test")).token
    theirs = (await issue_token(db, "fremder", "test")).token
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with (
            httpx.AsyncClient(
                transport=transport,
                base_url="http://novaberg",
                headers={"Authorization": f"Bearer {mine}"},
            ) as http,
            httpx.AsyncClient(
                transport=transport,
                base_url="http://novaberg",
                headers={"Authorization": f"Bearer {theirs}"},
            ) as other,
        ):
            yield http, other


async def _turns(db: AsyncConnectionPool, *prompts: str, user: str = "leser") -> None:
    """Answered turns of `user` with Nova, written like the dispatcher writes them."""
    log = PipelineLog(db)
    for prompt in prompts:
        log.add(
            source="character",
            node="dispatcher",
            kind=KIND_RAW_TURN,
            turn_id=f"t-{prompt}",
            content={
                "user_prompt": prompt,
                "response": f"Antwort auf {prompt}",
                "nova_emotion": {"emotion": "freude", "arousal": 0.5},
                "herkunft": "nutzer_turn",
            },
            user_id=user,
            character_id="nova",
        )
    await log.close()


async def _said(http: httpx.AsyncClient, path: str) -> list[str]:
    page = await http.get(path)
    assert page.status_code == 200, page.text
    return [entry["eingabe"] for entry in page.json()["eintraege"]]


async def test_each_chat_shows_only_its_own_turns(
    app_ctx: tuple[httpx.AsyncClient, httpx.AsyncClient], db: AsyncConnectionPool
) -> None:
    http, _ = app_ctx
    await _turns(db, "Guten Morgen, wie war dein Wochenende am See?", "und sonst")
    listed = (await http.get("/chats", params={"character_id": "nova"})).json()
    assert len(listed["chats"]) == 1
    first = listed["chats"][0]
    assert first["aktuell"] is True and listed["aktuell"] == first["id"]
    assert first["titel"] == "Guten Morgen, wie war dein Wochenende…"
    assert first["eigener_titel"] is False and first["turns"] == 2

    created = await http.post("/chats", json={"character_id": "nova"})
    assert created.status_code == 201
    second = created.json()
    assert second["aktuell"] is True and second["turns"] == 0 and second["titel"] == ""
    assert await _said(http, "/history/nova") == []  # the open chat is the new one
    await _turns(db, "Neues Thema: Kochen")

    assert await _said(http, f"/chats/{second['id']}/history") == ["Neues Thema: Kochen"]
    assert await _said(http, f"/chats/{first['id']}/history") == [
        "Guten Morgen, wie war dein Wochenende am See?",
        "und sonst",
    ]
    opened = (await http.post(f"/chats/{first['id']}/open")).json()
    assert opened["aktuell"] is True
    await _turns(db, "zurück im ersten")
    assert await _said(http, "/history/nova") == [
        "Guten Morgen, wie war dein Wochenende am See?",
        "und sonst",
        "zurück im ersten",
    ]
    assert await _said(http, f"/chats/{second['id']}/history") == ["Neues Thema: Kochen"]
    listed = (await http.get("/chats", params={"character_id": "nova"})).json()
    assert [c["titel"] for c in listed["chats"]] == [
        "Neues Thema: Kochen",
        "Guten Morgen, wie war dein Wochenende…",
    ]
    assert [c["aktuell"] for c in listed["chats"]] == [False, True]


async def test_switching_chats_ends_the_running_conversation(
    app_ctx: tuple[httpx.AsyncClient, httpx.AsyncClient],
    redis: aioredis.Redis,
) -> None:
    http, _ = app_ctx
    pair = Pair("leser", "nova")
    first = (await http.get("/chats", params={"character_id": "nova"})).json()["aktuell"]
    await session.append_turn(redis, pair, {"rolle": "user", "inhalt": "alter Faden"})
    await redis.set(keys.session_summary(pair), "vorher")
    await http.post(f"/chats/{first}/open")  # already open: nothing ends
    assert await redis.exists(keys.session_turns(pair)) == 1

    await http.post("/chats", json={"character_id": "nova"})
    assert await redis.exists(keys.session_turns(pair), keys.session_summary(pair)) == 0
    await session.append_turn(redis, pair, {"rolle": "user", "inhalt": "neuer Faden"})
    await http.post(f"/chats/{first}/open")
    assert await session.read_turns(redis, pair) == []


async def test_rename_and_delete(
    app_ctx: tuple[httpx.AsyncClient, httpx.AsyncClient], db: AsyncConnectionPool
) -> None:
    http, _ = app_ctx
    await _turns(db, "erster Chat")
    first = (await http.get("/chats", params={"character_id": "nova"})).json()["aktuell"]
    second = (await http.post("/chats", json={"character_id": "nova"})).json()["id"]
    await _turns(db, "zweiter Chat")

    renamed = (await http.patch(f"/chats/{second}", json={"titel": "  Urlaub  "})).json()
    assert (renamed["titel"], renamed["eigener_titel"]) == ("Urlaub", True)
    back = (await http.patch(f"/chats/{second}", json={"titel": None})).json()
    assert (back["titel"], back["eigener_titel"]) == ("zweiter Chat", False)
    too_long = await http.patch(f"/chats/{second}", json={"titel": "x" * 121})
    assert too_long.status_code == 422
    nul = await http.patch(f"/chats/{second}", json={"titel": "a\u0000b"})
    assert nul.status_code == 422  # PostgreSQL stores no NUL: refused, not a 500
    nul_new = await http.post("/chats", json={"character_id": "nova", "titel": "a\u0000b"})
    assert nul_new.status_code == 422

    gone = await http.delete(f"/chats/{second}")
    assert gone.status_code == 200 and gone.json() == {"aktuell": first}
    assert await _said(http, "/history/nova") == ["erster Chat"]
    listed = (await http.get("/chats", params={"character_id": "nova"})).json()
    assert [c["id"] for c in listed["chats"]] == [first]
    missing = await http.get(f"/chats/{second}/history")
    assert missing.status_code == 404
    assert missing.json()["detail"]["meldung"] == SENTENCES["chat_unbekannt"]

    await _turns(db, "danach")  # the deleted chat's turns never spill into the open one
    assert await _said(http, f"/chats/{first}/history") == ["erster Chat", "danach"]
    last = await http.delete(f"/chats/{first}")  # the last one: a new empty chat opens
    fresh = last.json()["aktuell"]
    assert fresh not in (first, second) and await _said(http, "/history/nova") == []


async def test_another_users_chat_is_unknown(
    app_ctx: tuple[httpx.AsyncClient, httpx.AsyncClient],
) -> None:
    http, other = app_ctx
    mine = (await http.post("/chats", json={"character_id": "nova", "titel": "privat"})).json()
    for method, path in [
        ("GET", f"/chats/{mine['id']}"),
        ("GET", f"/chats/{mine['id']}/history"),
        ("GET", f"/chats/{mine['id']}/export"),
        ("POST", f"/chats/{mine['id']}/open"),
        ("DELETE", f"/chats/{mine['id']}"),
    ]:
        answer = await other.request(method, path)
        assert answer.status_code == 404, (method, path)
        assert answer.json()["detail"]["fehler"] == "chat_unbekannt"
    renamed = await other.patch(f"/chats/{mine['id']}", json={"titel": "meins"})
    assert renamed.status_code == 404
    assert (await http.get(f"/chats/{mine['id']}")).json()["titel"] == "privat"
    nobody = await http.get("/chats", params={"character_id": "niemand"})
    assert nobody.status_code == 404 and nobody.json()["detail"]["meldung"]
    assert (await http.post("/chats", json={"character_id": "niemand"})).status_code == 404


async def test_export_as_markdown_and_json(
    app_ctx: tuple[httpx.AsyncClient, httpx.AsyncClient], db: AsyncConnectionPool
) -> None:
    http, _ = app_ctx
    chat = (await http.post("/chats", json={"character_id": "nova", "titel": "Reise"})).json()
    await _turns(db, "Wohin fahren wir?")
    await FailedTurnLog(db).record("leser", "nova", "t-weg", ["m1"], "modell_timeout", ["Hallo?"])

    md = await http.get(f"/chats/{chat['id']}/export", params={"format": "md"})
    assert md.status_code == 200 and md.headers["content-type"].startswith("text/markdown")
    assert "attachment" in md.headers["content-disposition"]
    text = md.text
    assert text.startswith("# Reise\n")
    assert "**leser** ·" in text and "Wohin fahren wir?" in text
    assert "**Nova** ·" in text and "Antwort auf Wohin fahren wir?" in text
    assert "(keine Antwort: modell_timeout)" in text
    english = await http.get(
        f"/chats/{chat['id']}/export", params={"format": "md", "sprache": "en"}
    )
    assert "(no answer: modell_timeout)" in english.text

    raw = await http.get(f"/chats/{chat['id']}/export", params={"format": "json"})
    assert raw.headers["content-type"].startswith("application/json")
    document = json.loads(raw.text)
    assert (document["format"], document["version"]) == ("novaberg-chat", 1)
    assert document["chat"]["titel"] == "Reise"
    assert document["chat"]["character_name"] == "Nova"
    said = [(m["rolle"], m["name"], m["text"], m["gescheitert"]) for m in document["nachrichten"]]
    assert said == [
        ("user", "leser", "Wohin fahren wir?", False),
        ("assistant", "Nova", "Antwort auf Wohin fahren wir?", False),
        ("user", "leser", "Hallo?", True),
    ]
    assert document["nachrichten"][1]["emotion"] == "freude"
    assert document["nachrichten"][2]["grund"] == "modell_timeout"
    assert (await http.get(f"/chats/{chat['id']}/export?format=pdf")).status_code == 422
