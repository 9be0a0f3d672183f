"""The model connection set in the page (api/model_api.py, llm/connection.py) against the
real app, queue, worker, Redis and PostgreSQL: applied, the next turn is answered by the
other server without a restart; reset, by the environment's again. Only the operator may
test or change it (the server never calls a URL someone else gave), the key never comes
back, a connection that fails its check is not applied, and a running turn keeps the model
it started with."""

from __future__ import annotations

from typing import Any

import httpx
import redis.asyncio as aioredis
from event_helpers import RESPONDER, Running, script_answer
from psycopg_pool import AsyncConnectionPool

from novaberg.api.error_sentences import SENTENCES
from novaberg.config import Role
from novaberg.llm.layer import ModelLayer, model_turn
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store.model_connection import clear_connection, read_connection, write_connection
from scripted_openai import ScriptedOpenAIServer

KEY = "sk-zweiter-server-1234"
FROM_ENV = "Hier antwortet das Modell der Umgebung."
FROM_SECOND = "Hier antwortet der zweite Server."


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def answer_to(http: httpx.AsyncClient, ws: Any, token: str, text: str) -> str:
    before = len(ws.of("character_response"))
    sent = await http.post(
        "/chat", json={"character_id": "nova", "text": text}, headers=auth(token)
    )
    assert sent.status_code == 202, sent.text
    await ws.wait_for(
        lambda m: m.get("typ") == "character_response" and len(ws.of("character_response")) > before
    )
    return str(ws.of("character_response")[before]["nachricht"])


async def test_the_next_turn_uses_the_applied_connection_without_restart(
    server: Running, http: httpx.AsyncClient, token, workers, sockets, scripted: ScriptedLLM
) -> None:
    script_answer(scripted, FROM_ENV)
    second = ScriptedLLM()
    script_answer(second, FROM_SECOND)
    operator = await token("meister")  # NOVABERG_DEFAULT_USER
    ws = await sockets(operator)
    await workers()
    with ScriptedOpenAIServer(second, KEY) as other:
        assert await answer_to(http, ws, operator, "Hallo!") == FROM_ENV

        applied = await http.put(
            "/page/model",
            json={"url": other.url, "modell": "zweiter", "schluessel": KEY},
            headers=auth(operator),
        )
        assert applied.status_code == 200, applied.text
        body = applied.json()
        assert body["pruefung"]["ok"] and body["pruefung"]["embeddings"]["ok"]
        assert body["verbindung"]["quelle"] == "seite"
        assert body["verbindung"]["schluessel"] == "••••1234"
        assert KEY not in applied.text, "the key is never echoed"
        asked = len(second.calls)

        assert await answer_to(http, ws, operator, "Und jetzt?") == FROM_SECOND
        assert any(RESPONDER in c["prompt"] for c in second.calls[asked:])
        assert {r["model"] for r in other.requests} == {"zweiter"}
        shown = (await http.get("/page/settings", headers=auth(operator))).json()
        assert (shown["backend"], shown["modell"]) == ("openai", "zweiter")
        got = (await http.get("/page/model", headers=auth(operator))).json()
        assert got["url"] == other.url and KEY not in str(got)

        reset = await http.delete("/page/model", headers=auth(operator))
        assert reset.status_code == 200 and reset.json()["quelle"] == "umgebung"
        served = len(other.requests)
        assert await answer_to(http, ws, operator, "Und wieder?") == FROM_ENV
        assert len(other.requests) == served, "back on the environment's model"


async def test_only_the_operator_may_test_or_change_the_connection(
    server: Running, http: httpx.AsyncClient, token, db: AsyncConnectionPool
) -> None:
    anna = await token("anna")
    with ScriptedOpenAIServer(ScriptedLLM(), KEY) as other:
        wanted = {"url": other.url, "modell": "zweiter", "schluessel": KEY}
        for method, path in (("PUT", "/page/model"), ("POST", "/page/model/test")):
            refused = await http.request(method, path, json=wanted, headers=auth(anna))
            assert refused.status_code == 403, refused.text
            assert refused.json()["detail"]["meldung"] == SENTENCES["nur_betreiber"]
        refused = await http.delete("/page/model", headers=auth(anna))
        assert refused.status_code == 403
        assert other.requests == [], "the server never called a URL a non-operator gave"
    assert await read_connection(db) is None
    seen = (await http.get("/page/model", headers=auth(anna))).json()
    assert seen["darf_aendern"] is False and seen["url"] is None and seen["schluessel"] == ""
    assert seen["quelle"] == "umgebung" and seen["modell"] == "scripted"


async def test_a_connection_that_fails_its_check_is_not_applied(
    server: Running, http: httpx.AsyncClient, token, db: AsyncConnectionPool
) -> None:
    operator = await token("meister")
    with ScriptedOpenAIServer(ScriptedLLM(), KEY) as other:
        wrong_key = {"url": other.url, "modell": "zweiter", "schluessel": "sk-falsch"}
        tested = await http.post("/page/model/test", json=wrong_key, headers=auth(operator))
        assert tested.status_code == 200, tested.text
        assert tested.json()["chat"]["problem"] == "schluessel_abgelehnt"
        refused = await http.put("/page/model", json=wrong_key, headers=auth(operator))
        assert refused.status_code == 422, refused.text
        detail = refused.json()["detail"]
        assert detail["fehler"] == "verbindung_fehlgeschlagen" and detail["meldung"]
        assert detail["pruefung"]["chat"]["problem"] == "schluessel_abgelehnt"
        closed = other.url  # the server stops below: nothing listens there any more
    gone = await http.post(
        "/page/model/test", json={"url": closed, "modell": "x"}, headers=auth(operator)
    )
    assert gone.json()["chat"]["problem"] == "nicht_erreichbar"
    bad = await http.put(
        "/page/model", json={"url": "file:///etc/passwd", "modell": "x"}, headers=auth(operator)
    )
    assert bad.status_code == 422 and bad.json()["detail"]["fehler"] == "url_ungueltig"
    assert await read_connection(db) is None


async def test_a_running_turn_keeps_the_model_it_started_with(
    server: Running,
    model: ModelLayer,
    scripted: ScriptedLLM,
    redis: aioredis.Redis,
    db: AsyncConnectionPool,
) -> None:
    """`server` built the AppContext, which made `model` follow the page's connection."""
    second = ScriptedLLM()
    second.add("Wer bist du", "der zweite")
    scripted.add("Wer bist du", "die Umgebung")
    ask = [{"role": "user", "content": "Wer bist du?"}]
    with ScriptedOpenAIServer(second, KEY) as other:
        async with model_turn():
            assert await model.chat(Role.CHAT, ask) == "die Umgebung"
            await write_connection(
                db, redis, url=other.url, model="zweiter", api_key=KEY, user_id="meister"
            )
            assert await model.chat(Role.CHAT, ask) == "die Umgebung", "same turn, same model"
        assert await model.chat(Role.CHAT, ask) == "der zweite", "the next turn follows"
        await clear_connection(db, redis)  # the database is shared with later tests
