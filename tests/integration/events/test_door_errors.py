"""Every error of the OpenAI door reaches an OpenAI client in OpenAI's shape, whoever
produced it (request guard, auth, schema check, router), so the official `openai` package
raises the matching exception with our code and sentence instead of a bare status; and the
door reports `usage` (in the answer, and as the stream's last chunk when asked)."""

from __future__ import annotations

import httpx
import openai
import pytest
from event_helpers import Running, script_answer
from test_openai_door import LIVE, client

from novaberg.llm.scripted import ScriptedLLM


async def test_a_wrong_token_is_an_authentication_error_with_our_code(server: Running) -> None:
    api = client(server, "not-a-token").with_options(max_retries=0)
    with pytest.raises(openai.AuthenticationError) as listing:
        await api.models.list()
    with pytest.raises(openai.AuthenticationError) as completing:
        await api.chat.completions.create(
            model="nova", messages=[{"role": "user", "content": "Hallo"}]
        )
    for caught in (listing.value, completing.value):
        assert caught.code == "token_ungueltig"
        assert "unknown or revoked token" in caught.message
        assert caught.type == "authentication_error"


async def test_a_body_that_breaks_the_schema_names_the_field(server: Running, token) -> None:
    anna = await token("anna")
    api = client(server, anna).with_options(max_retries=0)
    with pytest.raises(openai.UnprocessableEntityError) as caught:
        await api.chat.completions.create(
            model="nova", messages=[{"role": "system", "content": "nur System"}]
        )
    assert caught.value.code == "anfrage_ungueltig"
    assert "no message with role 'user'" in caught.value.message
    assert caught.value.type == "invalid_request_error"


async def test_an_oversized_body_is_a_413_in_openai_shape(
    server: Running, http: httpx.AsyncClient, token
) -> None:
    anna = await token("anna")
    huge = {"model": "nova", "messages": [{"role": "user", "content": "x" * 2_000_000}]}
    response = await http.post(
        "/v1/chat/completions", json=huge, headers={"Authorization": f"Bearer {anna}"}
    )
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "zu_gross"
    assert error["type"] == "invalid_request_error"
    assert "over the limit" in error["message"]


async def test_an_unknown_door_path_is_a_not_found_in_openai_shape(
    server: Running, http: httpx.AsyncClient, token
) -> None:
    anna = await token("anna")
    response = await http.post(
        "/v1/embeddings", json={"input": "x"}, headers={"Authorization": f"Bearer {anna}"}
    )
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "nicht_gefunden"


async def test_other_routes_keep_their_own_error_shape(
    server: Running, http: httpx.AsyncClient
) -> None:
    response = await http.get("/characters", headers={"Authorization": "Bearer nope"})
    assert response.status_code == 401
    assert response.json()["detail"]["fehler"] == "token_ungueltig"


async def test_an_answer_reports_usage(
    server: Running, token, workers, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    script_answer(scripted, "Zwölf Zeichen")
    await workers(heartbeat_ttl=LIVE)
    answer = await client(server, anna).chat.completions.create(
        model="nova", messages=[{"role": "user", "content": "Wie geht's?"}]
    )
    assert answer.usage is not None
    assert answer.usage.prompt_tokens > 0
    assert answer.usage.completion_tokens > 0
    assert answer.usage.total_tokens == answer.usage.prompt_tokens + answer.usage.completion_tokens


async def test_a_stream_asked_for_usage_ends_with_a_usage_chunk(
    server: Running, token, workers, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    script_answer(scripted, "Gezählt und gestreamt.")
    await workers(heartbeat_ttl=LIVE)
    stream = await client(server, anna).chat.completions.create(
        model="nova",
        messages=[{"role": "user", "content": "Zählst du mit?"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]
    last = chunks[-1]
    assert last.choices == []
    assert last.usage is not None
    assert last.usage.completion_tokens > 0
    assert all(c.usage is None for c in chunks[:-1])
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Gezählt und gestreamt."


async def test_a_stream_not_asked_for_usage_has_none(
    server: Running, token, workers, scripted: ScriptedLLM
) -> None:
    anna = await token("anna")
    script_answer(scripted, "Ohne Zählung.")
    await workers(heartbeat_ttl=LIVE)
    stream = await client(server, anna).chat.completions.create(
        model="nova", messages=[{"role": "user", "content": "Und jetzt?"}], stream=True
    )
    chunks = [chunk async for chunk in stream]
    assert all(c.usage is None for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "stop"
