"""The OpenAI-compatible door, driven by the official `openai` package against the real
app, queues, workers and graphs (scripted model only): a completion is Nova's answer to
the last user message, streamed or not; a failed turn is an OpenAI error the client does
not retry; earlier messages of the request are not stored again."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import openai
import pytest
import redis.asyncio as aioredis
from event_helpers import WAIT, Running, script_answer
from openai import AsyncOpenAI

from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys

PAIR = Pair("anna", "nova")

LIVE = 30.0
"""Heartbeat TTL of the workers here: the door answers 503 when no worker beats, and the
fixture's 1 s can lapse on a loaded machine."""


def client(server: Running, token: str) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=f"{server.url}/v1", api_key=token, timeout=WAIT)


async def session_texts(http: httpx.AsyncClient, token: str) -> list[str]:
    response = await http.get("/memory/nova/session", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return [str(turn.get("inhalt", "")) for turn in response.json()["turns"]]


async def test_models_are_the_characters(server: Running, token) -> None:
    anna = await token("anna")
    listed = await client(server, anna).models.list()
    ids = [m.id for m in listed.data]
    assert "nova" in ids
    assert all(m.owned_by == "novaberg" for m in listed.data)


async def test_models_need_the_token(server: Running) -> None:
    with pytest.raises(openai.AuthenticationError):
        await client(server, "not-a-token").models.list()


async def test_completion_is_novas_answer_to_the_last_user_message(
    server: Running, http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, sockets
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Schön, dass du fragst! Mir geht es gut.")
    await workers(heartbeat_ttl=LIVE)
    answer = await client(server, anna).chat.completions.create(
        model="nova",
        messages=[
            {"role": "system", "content": "Du bist eine Piratin."},
            {"role": "user", "content": "Alte Frage von gestern"},
            {"role": "assistant", "content": "Alte Antwort"},
            {"role": "user", "content": "Wie geht es dir heute?"},
        ],
    )
    assert answer.choices[0].message.content == "Schön, dass du fragst! Mir geht es gut."
    assert answer.choices[0].message.role == "assistant"
    assert answer.choices[0].finish_reason == "stop"
    assert answer.model == "nova"
    response = await ws.wait_typ("character_response")
    assert answer.id == f"chatcmpl-{response['nachrichten_ids'][0]}"
    assert response["turn_id"] == answer.model_extra["novaberg"]["turn_id"]
    perceived = "\n".join(c["prompt"] for c in scripted.calls if c["schema"] == "PerceptionResult")
    assert "Wie geht es dir heute?" in perceived
    assert "Alte Frage von gestern" not in perceived, "earlier messages are not re-stored"
    stored = "\n".join(await session_texts(http, anna))
    assert "Wie geht es dir heute?" in stored
    assert "Alte Frage von gestern" not in stored
    assert "Piratin" not in stored


async def test_streamed_completion_sends_the_answer_in_chunks(
    server: Running, token, workers, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    script_answer(scripted, "Hier bin ich, ganz live.")
    await workers(heartbeat_ttl=LIVE)
    stream = await client(server, anna).chat.completions.create(
        model="nova",
        messages=[{"role": "user", "content": [{"type": "text", "text": "Bist du da?"}]}],
        stream=True,
    )
    chunks = [chunk async for chunk in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == "Hier bin ich, ganz live."
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.object == "chat.completion.chunk" for c in chunks)


async def test_stream_is_server_sent_events_ending_with_done(
    server: Running, http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    script_answer(scripted, "Roh gelesen.")
    await workers(heartbeat_ttl=LIVE)
    body = {"model": "nova", "messages": [{"role": "user", "content": "roh"}], "stream": True}
    async with http.stream(
        "POST", "/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {anna}"}
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        raw = "".join([part async for part in response.aiter_text()])

    events = [e for e in raw.split("\n\n") if e.strip()]
    assert events[-1] == "data: [DONE]"
    assert any(e.startswith(": ") for e in events), "stages travel as SSE comments"
    assert '"content": "Roh gelesen."' in raw


@pytest.mark.parametrize("stream", [False, True])
async def test_failed_turn_is_an_openai_error_and_not_retried(
    server: Running,
    token,
    workers,
    scripted: ScriptedLLM,
    sockets,
    stream: bool,
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "", fault="timeout")
    await workers(heartbeat_ttl=LIVE)
    api = client(server, anna)
    with pytest.raises(openai.APIError) as caught:
        result: Any = await api.chat.completions.create(
            model="nova", messages=[{"role": "user", "content": "Hallo?"}], stream=stream
        )
        async for _chunk in result:
            pass
    failed = await ws.wait_typ("turn_gescheitert")
    assert failed["grund"].startswith("modell_timeout")
    error = caught.value
    assert "modell_timeout" in str(error)
    if not stream:
        assert isinstance(error, openai.APIStatusError)
        assert error.status_code == 504
        assert error.code == "modell_timeout"
    await asyncio.sleep(0.5)
    assert len(ws.of("turn_gescheitert")) == 1, "the client did not send the message again"
    assert not ws.of("character_response")


async def test_refusals_queue_nothing(
    server: Running, token, workers, redis: aioredis.Redis
) -> None:
    anna = await token("anna")
    api = client(server, anna).with_options(max_retries=0)
    with pytest.raises(openai.APIStatusError) as no_worker:
        await api.chat.completions.create(
            model="nova", messages=[{"role": "user", "content": "Jemand da?"}]
        )
    assert no_worker.value.status_code == 503
    assert no_worker.value.code == "kein_worker"
    await workers(heartbeat_ttl=LIVE)
    with pytest.raises(openai.NotFoundError) as unknown:
        await api.chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "Hallo"}]
        )
    assert unknown.value.code == "charakter_unbekannt"
    with pytest.raises(openai.BadRequestError) as blank:
        await api.chat.completions.create(
            model="nova", messages=[{"role": "user", "content": "   "}]
        )
    assert blank.value.code == "text_leer"
    with pytest.raises(openai.UnprocessableEntityError):
        await api.chat.completions.create(
            model="nova", messages=[{"role": "system", "content": "nur System"}]
        )
    assert await redis.llen(keys.prompt_queue(PAIR)) == 0
    assert not await redis.exists(keys.turn_marker(PAIR))


async def test_a_paused_character_is_refused_at_once_and_nothing_is_queued(
    server: Running, token, workers, redis: aioredis.Redis, http: httpx.AsyncClient
) -> None:
    """A completion waits for its answer, and a paused character answers only once activated:
    the door says so at once instead of waiting out NOVABERG_DOOR_TIMEOUT."""
    anna = await token("anna")
    await workers(heartbeat_ttl=LIVE)
    paused = await http.post("/characters/nova/pause", headers={"Authorization": f"Bearer {anna}"})
    assert paused.status_code == 200
    api = client(server, anna).with_options(max_retries=0)
    with pytest.raises(openai.ConflictError) as refused:
        await api.chat.completions.create(
            model="nova", messages=[{"role": "user", "content": "Hallo?"}]
        )
    assert refused.value.code == "charakter_pausiert"
    assert await redis.llen(keys.prompt_queue(PAIR)) == 0


async def test_a_client_that_leaves_early_holds_no_connection(
    server: Running, http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, sockets
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    hub = server.app.state.chat.hub
    script_answer(scripted, "Zu spät gelesen.", latency_ms=1500)
    await workers(heartbeat_ttl=LIVE)
    body = {"model": "nova", "messages": [{"role": "user", "content": "kurz"}], "stream": True}
    async with http.stream(
        "POST", "/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {anna}"}
    ) as response:
        assert response.status_code == 200
        async for _first in response.aiter_text():
            break
        assert hub.connection_count("anna") == 2, "the stream waits on the user's delivery"
    answer = await ws.wait_typ("character_response")
    assert answer["nachricht"] == "Zu spät gelesen.", "the turn goes on without the client"
    await only_the_page_is_left(hub)
    impatient = client(server, anna).with_options(max_retries=0, timeout=0.5)
    with pytest.raises(openai.APITimeoutError):
        await impatient.chat.completions.create(
            model="nova", messages=[{"role": "user", "content": "noch mal kurz"}]
        )
    assert hub.connection_count("anna") == 2, "the call still waits on the user's delivery"
    await only_the_page_is_left(hub)


async def only_the_page_is_left(hub: Any) -> None:
    for _ in range(100):
        if hub.connection_count("anna") == 1:
            break
        await asyncio.sleep(0.05)
    assert hub.connection_count("anna") == 1, "only the page's socket is left"


async def test_no_outcome_in_time_is_a_timeout_and_the_answer_still_arrives(
    server: Running, token, workers, scripted: ScriptedLLM, sockets
) -> None:
    ctx = server.app.state.context
    ctx.settings = ctx.settings.model_copy(update={"door_timeout": 1.0})
    anna = await token("anna")
    ws = await sockets(anna)
    script_answer(scripted, "Gut Ding will Weile haben.", latency_ms=2500)
    await workers(heartbeat_ttl=LIVE)
    with pytest.raises(openai.APIStatusError) as late:
        await client(server, anna).chat.completions.create(
            model="nova", messages=[{"role": "user", "content": "Schnell, bitte!"}]
        )
    assert late.value.status_code == 504
    assert late.value.code == "zeitueberschreitung"
    answer = await ws.wait_typ("character_response")
    assert answer["nachricht"] == "Gut Ding will Weile haben."
    await asyncio.sleep(0.5)
    assert len(ws.of("character_response")) == 1, "the client did not send it again"


async def test_revoking_the_token_ends_a_waiting_completion(
    server: Running, http: httpx.AsyncClient, token, workers, scripted: ScriptedLLM, sockets
) -> None:
    anna = await token("anna")
    ws = await sockets(anna)
    hub = server.app.state.chat.hub
    script_answer(scripted, "Das hört niemand mehr.", latency_ms=3000)
    await workers(heartbeat_ttl=LIVE)
    body = {"model": "nova", "messages": [{"role": "user", "content": "Warte mal"}]}
    waiting = asyncio.create_task(
        http.post("/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {anna}"})
    )
    for _ in range(200):
        if hub.connection_count("anna") == 2:
            break
        await asyncio.sleep(0.02)
    assert hub.connection_count("anna") == 2, "the completion waits on the user's delivery"
    listed = await http.get("/tokens", headers={"Authorization": f"Bearer {anna}"})
    own = next(t["id"] for t in listed.json() if t["aktuell"])
    gone = await http.delete(f"/tokens/{own}", headers={"Authorization": f"Bearer {anna}"})
    assert gone.status_code == 204
    answer = await asyncio.wait_for(waiting, WAIT)
    assert answer.status_code == 401, "a revoked token's wait ends at once, not with the turn"
    assert answer.json()["error"]["code"] == "token_ungueltig"
    assert "Das hört niemand mehr." not in answer.text
    assert (await ws.conn.wait_closed()) is None and ws.conn.close_code == 4401
