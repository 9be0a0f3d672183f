"""The OpenAI-compatible backend and remote embedder against a real local HTTP
server that fakes one (FastAPI under uvicorn in a thread, on 127.0.0.1).

The fake's behaviour is chosen by the model name's first word: `ok`, `flaky`
(two 500s, then 200), `down` (always 503), `slow` (answers after 2 s),
`missing` (404 with an OpenAI-style error), `badreq` (400 to every request), `longprompt`
(400: context length exceeded), `garbage`
(200, not JSON content).
How it treats `response_format` is chosen the same way, after real servers: `ok`
enforces `json_schema` (OpenAI, vLLM, Ollama), `llamapy` answers `json_schema` with
llama-cpp-python's HTTP 500 validation error and enforces `{"type": "json_object",
"schema": S}`, `jsononly` gives any JSON for `json_object` and ignores schemas, `prose`
ignores `response_format` altogether. The schema stated in the prompt (`json_object`,
`none`) is answered with a valid object whose string holds a raw line break, as a
grammar-less model may write it.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from novaberg.api.doctor import Check, check_health
from novaberg.config import Role, Settings, SettingsError, load_settings
from novaberg.llm.accounting import track_calls
from novaberg.llm.embeddings import EmbeddingDimensionMismatch, RemoteEmbedder
from novaberg.llm.errors import (
    ModelContextExceeded,
    ModelOutputError,
    ModelRefused,
    ModelTimeout,
    ModelUnavailable,
    ModelUnreachable,
    StructuredOutputUnsupported,
)
from novaberg.llm.openai_compat import JSON_OBJECT_STOP, OpenAICompatLLM
from novaberg.llm.structured_output import PROBE_SCHEMA
from novaberg.llm.token_caps import cap_for
from novaberg.runtime.services import Endpoints

DIM = 8


class Mood(BaseModel):
    mood: Literal["happy", "sad"]
    score: float


class Note(BaseModel):
    text: str
    score: float = Field(ge=0.0, le=1.0)


LLAMA_PY_REFUSAL = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
    "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}"
)
"""What llama-cpp-python's server answers to `json_schema`, with status 500."""

RAW_NEWLINE_NOTE = '{"text": "zwei\nZeilen", "score": 0.5}'
"""Invalid for a strict JSON reader: a raw control character inside a string."""


def _schema_object(schema: dict[str, Any]) -> dict[str, Any]:
    """The one answer a server enforcing `schema` gives in these tests."""
    properties = schema.get("properties", {})
    if "probe" in properties:
        return {"probe": properties["probe"]["enum"][0]}
    if "text" in properties:
        return {"text": "eine Zeile", "score": 0.25}
    if "status" in properties:  # the doctor's HealthProbe
        return {"status": "ok"}
    return {"mood": "happy", "score": 0.5}


def _answer(kind: str, body: dict[str, Any]) -> str | JSONResponse:
    """The content a server of `kind` writes for this request (see the module docstring)."""
    fmt = body.get("response_format") or {}
    schema: dict[str, Any] | None = None
    if fmt.get("type") == "json_schema":
        if kind == "llamapy":
            return JSONResponse(
                {"error": {"message": LLAMA_PY_REFUSAL, "type": "internal_server_error"}},
                status_code=500,
            )
        if kind == "ok":
            schema = fmt["json_schema"]["schema"]
    elif fmt.get("type") == "json_object":
        if kind in ("ok", "llamapy") and "schema" in fmt:
            schema = fmt["schema"]
        elif kind != "prose" and "JSON-Schema" not in body["messages"][-1]["content"]:
            return '{"antwort": "Hallo"}'
    if schema is not None:
        return json.dumps(_schema_object(schema))
    prompt = body["messages"][-1]["content"]
    if "JSON-Schema" in prompt:  # the schema is the prompt's last line
        stated = _schema_object(json.loads(prompt.rsplit("\n", 1)[1]))
        return RAW_NEWLINE_NOTE if "text" in stated else json.dumps(stated)
    if kind == "prose" and fmt:
        return "Hallo! Schön, dich zu sehen."
    return json.dumps({"mood": "happy", "score": 0.5}) if fmt else "Hallo!"


@dataclass
class FakeServer:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    seen: Counter[str] = field(default_factory=Counter)


def _fake_app(server: FakeServer) -> FastAPI:
    app = FastAPI()

    def failure(model: str) -> JSONResponse | None:
        kind = model.split("-")[0]
        server.seen[model] += 1
        if kind == "down" or (kind == "flaky" and server.seen[model] <= 2):
            return JSONResponse({"error": {"message": "overloaded"}}, status_code=503)
        if kind == "missing":
            return JSONResponse(
                {"error": {"message": f"model '{model}' not found"}}, status_code=404
            )
        if kind == "longprompt":
            message = "This model's maximum context length is 2048 tokens, you requested 3000"
            return JSONResponse(
                {"error": {"message": message, "code": "context_length_exceeded"}},
                status_code=400,
            )
        if kind == "badreq":
            return JSONResponse({"error": {"message": "unsupported request"}}, status_code=400)
        return None

    @app.post("/v1/chat/completions")
    @app.post("/other/v1/chat/completions")
    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        server.requests.append(
            {"body": body, "auth": request.headers.get("authorization"), "path": request.url.path}
        )
        model = body["model"]
        if (problem := failure(model)) is not None:
            return problem
        if model.startswith("slow"):
            await asyncio.sleep(2)
        if model.startswith("garbage"):
            content = '{"mood": '
        else:
            answer = _answer(model.split("-")[0], body)
            if isinstance(answer, JSONResponse):
                return answer
            content = answer
        return JSONResponse(
            {
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
            }
        )

    @app.post("/v1/embeddings")
    async def embeddings(request: Request) -> JSONResponse:
        body = await request.json()
        server.requests.append({"body": body, "auth": request.headers.get("authorization")})
        model = body["model"]
        if (problem := failure(model)) is not None:
            return problem
        size = DIM + 1 if model.startswith("wide") else DIM
        # out of order on purpose: clients must sort by index
        data = [{"index": i, "embedding": [float(i)] * size} for i in range(len(body["input"]))][
            ::-1
        ]
        return JSONResponse({"data": data, "model": model})

    return app


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeServer]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = FakeServer(url=f"http://127.0.0.1:{port}/v1")
    config = uvicorn.Config(
        _fake_app(server), log_level="error", lifespan="off", timeout_graceful_shutdown=1
    )
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not uv.started:
        threading.Event().wait(0.02)
    yield server
    uv.should_exit = True
    thread.join(10)
    sock.close()


def _settings(fake: FakeServer, model: str, **extra: Any) -> Settings:
    values: dict[str, Any] = {
        "llm": "openai",
        "llm_url": fake.url,
        "llm_model": model,
        "llm_api_key": "geheim",
        "llm_timeout": 5.0,
        "llm_retries": 2,
        "embed": "openai",
        "embed_url": fake.url,
        "embed_model": model,
        "embed_dim": DIM,
    }
    values.update(extra)
    return load_settings(**values)


def _model(kind: str) -> str:
    return f"{kind}-{uuid.uuid4().hex[:6]}"


PROMPT = [{"role": "user", "content": "Wie geht's?"}]


async def test_structured_sends_the_schema_and_records_usage(fake: FakeServer) -> None:
    llm = OpenAICompatLLM(_settings(fake, _model("ok")))
    with track_calls() as stats:
        assert await llm.structured(Role.CHAT, PROMPT, Mood) == Mood(mood="happy", score=0.5)
        assert await llm.chat(Role.CHAT, PROMPT, temperature=0.3, max_tokens=20) == "Hallo!"
    await llm.aclose()
    structured, chat = fake.requests[-2]["body"], fake.requests[-1]["body"]
    fmt = structured["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Mood"
    assert fmt["json_schema"]["strict"] is False
    assert fmt["json_schema"]["schema"] == Mood.model_json_schema()
    assert "response_format" not in chat
    assert (chat["temperature"], chat["max_tokens"]) == (0.3, 20)
    assert structured["max_tokens"] == cap_for(Mood), "the schema's own cap, never unbounded"
    assert "stop" not in structured, "the schema's grammar ends the answer"
    assert fake.requests[-1]["auth"] == "Bearer geheim"
    assert stats.calls == 2
    assert (stats.prompt_tokens, stats.completion_tokens) == (22, 14)


async def test_roles_use_their_own_model(fake: FakeServer) -> None:
    base = _model("ok")
    llm = OpenAICompatLLM(_settings(fake, base, llm_model_background=base + "-bg"))
    await llm.chat(Role.BACKGROUND, PROMPT)
    assert fake.requests[-1]["body"]["model"] == base + "-bg"
    await llm.chat(Role.ANALYSIS, PROMPT)
    assert fake.requests[-1]["body"]["model"] == base
    await llm.aclose()


async def test_5xx_is_retried_with_backoff_then_succeeds(fake: FakeServer) -> None:
    model = _model("flaky")
    llm = OpenAICompatLLM(_settings(fake, model), backoff=0.01)
    assert await llm.chat(Role.CHAT, PROMPT) == "Hallo!"
    assert fake.seen[model] == 3
    await llm.aclose()


async def test_5xx_after_all_retries_is_model_unavailable(fake: FakeServer) -> None:
    model = _model("down")
    llm = OpenAICompatLLM(_settings(fake, model, llm_retries=1), backoff=0.01)
    with pytest.raises(ModelUnavailable, match="503: overloaded"):
        await llm.chat(Role.CHAT, PROMPT)
    assert fake.seen[model] == 2
    await llm.aclose()


async def test_4xx_is_not_retried_and_carries_the_server_message(fake: FakeServer) -> None:
    model = _model("missing")
    llm = OpenAICompatLLM(_settings(fake, model), backoff=0.01)
    with pytest.raises(ModelRefused, match="not found") as caught:
        await llm.chat(Role.CHAT, PROMPT)
    assert caught.value.status == 404
    assert caught.value.server_message == f"model '{model}' not found"
    assert fake.seen[model] == 1
    await llm.aclose()


async def test_a_prompt_beyond_the_context_concerns_that_call_only(fake: FakeServer) -> None:
    model = _model("longprompt")
    llm = OpenAICompatLLM(_settings(fake, model), backoff=0.01)
    with pytest.raises(ModelContextExceeded, match="maximum context length") as caught:
        await llm.chat(Role.CHAT, PROMPT)
    assert not isinstance(caught.value, ModelUnavailable), "the node's fallback applies"
    assert fake.seen[model] == 1
    await llm.aclose()


async def test_a_5xx_that_is_a_request_validation_error_is_not_retried(fake: FakeServer) -> None:
    """llama-cpp-python answers a `response_format` it does not know with HTTP 500."""
    model = _model("llamapy")
    llm = OpenAICompatLLM(_settings(fake, model, llm_structured="json_schema"), backoff=0.01)
    before = len(fake.requests)
    with pytest.raises(ModelRefused, match="Input should be 'text' or 'json_object'") as caught:
        await llm.structured(Role.CHAT, PROMPT, Mood)
    assert caught.value.status == 500
    assert len(fake.requests) == before + 1, "refused once, never retried"
    await llm.aclose()


async def test_retries_end_within_the_timeout(fake: FakeServer) -> None:
    """A back-off that would outlast NOVABERG_LLM_TIMEOUT is not waited for."""
    model = _model("down")
    llm = OpenAICompatLLM(_settings(fake, model, llm_timeout=1.0), backoff=5.0)
    with pytest.raises(ModelUnavailable, match=r"503: overloaded \(after 1 attempt"):
        await llm.chat(Role.CHAT, PROMPT)
    assert fake.seen[model] == 1
    await llm.aclose()


async def test_slow_server_is_model_timeout(fake: FakeServer) -> None:
    model = _model("slow")
    llm = OpenAICompatLLM(_settings(fake, model, llm_timeout=0.3), backoff=0.01)
    with pytest.raises(ModelTimeout):
        await llm.chat(Role.CHAT, PROMPT)
    assert fake.seen[model] == 1  # a timeout is not retried
    await llm.aclose()


async def test_closed_port_is_model_unavailable_after_retries() -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    settings = load_settings(llm="openai", llm_url=f"http://127.0.0.1:{port}/v1", llm_retries=1)
    llm = OpenAICompatLLM(settings, backoff=0.01)
    with pytest.raises(ModelUnreachable, match=r"cannot connect.*after 2 attempt"):
        await llm.chat(Role.CHAT, PROMPT)
    # the next call (the next node, another judge) fails at once from memory
    with pytest.raises(ModelUnreachable, match="moments ago"):
        await llm.structured(Role.ANALYSIS, PROMPT, Mood)
    await llm.aclose()


async def test_unparseable_output_twice_is_model_output_error(fake: FakeServer) -> None:
    llm = OpenAICompatLLM(_settings(fake, _model("garbage")))
    with pytest.raises(ModelOutputError) as caught:
        await llm.structured(Role.CHAT, PROMPT, Mood)
    assert caught.value.raw == '{"mood": '
    await llm.aclose()


def test_openai_backend_without_url_names_the_variable() -> None:
    with pytest.raises(SettingsError, match=r"^NOVABERG_LLM_URL"):
        OpenAICompatLLM(load_settings(llm="openai", llm_url=None))


async def test_embeddings_in_input_order(fake: FakeServer) -> None:
    model = _model("ok")
    embedder = RemoteEmbedder(_settings(fake, model))
    vectors = await embedder.embed(["a", "b", "c"])
    assert [v[0] for v in vectors] == [0.0, 1.0, 2.0]
    assert all(len(v) == DIM for v in vectors)
    assert fake.requests[-1]["body"] == {"model": model, "input": ["a", "b", "c"]}
    assert await embedder.embed([]) == []
    await embedder.aclose()


async def test_embeddings_retry_and_dimension_check(fake: FakeServer) -> None:
    flaky = RemoteEmbedder(_settings(fake, _model("flaky")), backoff=0.01)
    assert len((await flaky.embed(["x"]))[0]) == DIM
    wide = RemoteEmbedder(_settings(fake, _model("wide")))
    with pytest.raises(EmbeddingDimensionMismatch, match=f"NOVABERG_EMBED_DIM={DIM + 1}"):
        await wide.embed(["x"])
    down = RemoteEmbedder(_settings(fake, _model("down"), llm_retries=0))
    with pytest.raises(ModelUnavailable):
        await down.embed(["x"])
    for embedder in (flaky, wide, down):
        await embedder.aclose()


# --- structured-output forms ----------------------------------------------------------------


def _bodies(fake: FakeServer, model: str) -> list[dict[str, Any]]:
    return [r["body"] for r in fake.requests if r["body"]["model"] == model]


async def test_auto_probes_once_and_uses_json_schema_where_it_is_enforced(
    fake: FakeServer,
) -> None:
    model = _model("ok")
    llm = OpenAICompatLLM(_settings(fake, model))
    assert await llm.structured(Role.CHAT, PROMPT, Mood) == Mood(mood="happy", score=0.5)
    assert await llm.structured(Role.ANALYSIS, PROMPT, Mood) == Mood(mood="happy", score=0.5)
    bodies = _bodies(fake, model)
    assert len(bodies) == 3, "one probe for the URL both roles share, then the two calls"
    probe, first, second = bodies
    assert probe["response_format"]["json_schema"]["schema"] == PROBE_SCHEMA
    assert "JSON" not in probe["messages"][-1]["content"], "the probe does not ask for JSON"
    for call in (first, second):
        assert call["response_format"]["type"] == "json_schema"
        assert "JSON-Schema" not in call["messages"][-1]["content"]
    assert llm.structured_report() == f"structured output: json_schema at {fake.url}, probed"
    await llm.aclose()


async def test_auto_finds_json_object_schema_on_llama_cpp_pythons_server(
    fake: FakeServer,
) -> None:
    model = _model("llamapy")
    llm = OpenAICompatLLM(_settings(fake, model), backoff=0.01)
    assert await llm.structured(Role.CHAT, PROMPT, Mood) == Mood(mood="happy", score=0.5)
    bodies = _bodies(fake, model)
    assert [b["response_format"]["type"] for b in bodies] == [
        "json_schema",  # probe: refused with HTTP 500, not retried
        "json_object",  # probe: schema enforced
        "json_object",  # the call
    ]
    assert bodies[-1]["response_format"]["schema"] == Mood.model_json_schema()
    assert await llm.structured_form(Role.BACKGROUND) == "json_object_schema"
    report = llm.structured_report()
    assert report.startswith(f"structured output: json_object_schema at {fake.url}, probed")
    assert "json_schema: refused (HTTP 500: 1 validation error:" in report
    assert "Input should be 'text' or 'json_object'" in report
    await llm.aclose()


async def test_auto_falls_back_to_json_object_with_the_schema_in_the_prompt(
    fake: FakeServer,
) -> None:
    model = _model("jsononly")
    llm = OpenAICompatLLM(_settings(fake, model))
    assert await llm.structured(Role.CHAT, PROMPT, Note) == Note(text="zwei\nZeilen", score=0.5)
    call = _bodies(fake, model)[-1]
    assert call["response_format"] == {"type": "json_object"}
    assert call["stop"] == JSON_OBJECT_STOP, "no blank lines after the object"
    stated = call["messages"][-1]["content"]
    assert stated.startswith(PROMPT[-1]["content"]), "the schema follows the prompt"
    assert '"text"' in stated and '"maximum": 1.0' in stated
    assert '"title"' not in stated, "pydantic's titles are left out of the prompt"
    await llm.aclose()


async def test_a_server_that_honours_no_form_is_a_clear_error_and_not_asked_each_call(
    fake: FakeServer,
) -> None:
    model = _model("prose")
    llm = OpenAICompatLLM(_settings(fake, model))
    with pytest.raises(StructuredOutputUnsupported, match="NOVABERG_LLM_STRUCTURED=none") as caught:
        await llm.structured(Role.CHAT, PROMPT, Mood)
    assert "json_schema: ignored (answered 'Hallo! Schön, dich zu sehen.')" in str(caught.value)
    probes = len(_bodies(fake, model))
    assert probes == 3
    with pytest.raises(StructuredOutputUnsupported):
        await llm.structured(Role.ANALYSIS, PROMPT, Mood)
    assert len(_bodies(fake, model)) == probes, "the finding is remembered"
    assert isinstance(caught.value, ModelUnavailable), "a turn cannot use this model"
    await llm.aclose()


async def test_a_server_that_refuses_every_request_is_not_blamed_on_the_form(
    fake: FakeServer,
) -> None:
    model = _model("badreq")
    llm = OpenAICompatLLM(_settings(fake, model))
    with pytest.raises(ModelRefused, match="400: unsupported request"):
        await llm.structured(Role.CHAT, PROMPT, Mood)
    bodies = _bodies(fake, model)
    assert len(bodies) == 4 and "response_format" not in bodies[-1], "checked without a form"
    assert llm.probes == {}, "nothing learned: the next call asks again"
    await llm.aclose()


async def test_none_states_the_schema_and_reads_raw_line_breaks_in_strings(
    fake: FakeServer,
) -> None:
    model = _model("prose")
    llm = OpenAICompatLLM(_settings(fake, model, llm_structured="none"))
    with track_calls() as stats:
        note = await llm.structured(Role.CHAT, PROMPT, Note)
    assert note == Note(text="zwei\nZeilen", score=0.5)
    assert stats.structured_summary() == {"Note": {"erster_versuch": 1}}
    (call,) = _bodies(fake, model)  # no probe
    assert "response_format" not in call
    assert "JSON-Schema" in call["messages"][-1]["content"]
    await llm.aclose()


async def test_a_configured_form_is_used_without_probing(fake: FakeServer) -> None:
    model = _model("llamapy")
    llm = OpenAICompatLLM(_settings(fake, model, llm_structured="json_object_schema"))
    assert await llm.structured(Role.CHAT, PROMPT, Mood) == Mood(mood="happy", score=0.5)
    (call,) = _bodies(fake, model)
    assert call["response_format"] == {"type": "json_object", "schema": Mood.model_json_schema()}
    assert llm.structured_report() == (
        "structured output: json_object_schema (NOVABERG_LLM_STRUCTURED)"
    )
    await llm.aclose()


async def test_each_role_url_is_probed_on_its_own(fake: FakeServer) -> None:
    model = _model("llamapy")
    other = fake.url.replace("/v1", "/other/v1")
    llm = OpenAICompatLLM(_settings(fake, model, llm_url_analysis=other), backoff=0.01)
    await llm.structured(Role.CHAT, PROMPT, Mood)
    await llm.structured(Role.ANALYSIS, PROMPT, Mood)
    await llm.structured(Role.CHAT, PROMPT, Mood)
    paths = [r["path"] for r in fake.requests if r["body"]["model"] == model]
    assert paths == [
        "/v1/chat/completions",  # probe json_schema (refused)
        "/v1/chat/completions",  # probe json_object_schema
        "/v1/chat/completions",  # chat role's call
        "/other/v1/chat/completions",  # the analysis URL is probed on its own
        "/other/v1/chat/completions",
        "/other/v1/chat/completions",
        "/v1/chat/completions",  # remembered: no new probe
    ]
    assert set(llm.probes) == {fake.url, other}
    await llm.aclose()


async def test_an_out_of_range_value_is_refused_not_clamped(fake: FakeServer) -> None:
    """Tolerant parsing stops at the schema: the grammar of some servers ignores
    minimum/maximum, and such a value is invalid output (retried, then an error)."""
    model = _model("ok")
    llm = OpenAICompatLLM(_settings(fake, model))

    class Strict(BaseModel):
        mood: Literal["happy", "sad"]
        score: float = Field(ge=0.0, le=0.4)  # the fake answers 0.5

    with track_calls() as stats, pytest.raises(ModelOutputError):
        await llm.structured(Role.CHAT, PROMPT, Strict)
    assert stats.calls == 2, "retried once with the hint"
    assert stats.structured_summary() == {"Strict": {"unlesbar": 1}}
    assert _bodies(fake, model)[-1]["messages"][-1]["content"].startswith("Your previous answer")
    await llm.aclose()


# --- doctor ---------------------------------------------------------------------------------


async def _doctor_chat(fake: FakeServer, model: str, endpoints: Endpoints, **extra: Any) -> Check:
    settings = _settings(fake, model, embed="scripted", embed_dim=384, **extra)
    checks = {check.name: check for check in await check_health(settings, endpoints)}
    assert checks["embeddings"].ok, checks["embeddings"]
    return checks["chat model"]


async def test_doctor_names_the_structured_output_form_it_found(
    fake: FakeServer, endpoints: Endpoints
) -> None:
    chat = await _doctor_chat(fake, _model("llamapy"), endpoints)
    assert chat.ok, chat
    assert f"structured output: json_object_schema at {fake.url}, probed" in chat.detail
    assert "json_schema: refused (HTTP 500" in chat.detail


async def test_doctor_shows_the_servers_message_when_it_refuses(
    fake: FakeServer, endpoints: Endpoints
) -> None:
    model = _model("missing")
    chat = await _doctor_chat(fake, model, endpoints)
    assert not chat.ok
    assert f"model '{model}' not found" in chat.detail
    assert "refused the request" in chat.fix
    assert "start a server" not in chat.fix, "the server runs"


async def test_doctor_fails_a_server_that_honours_no_form_and_says_what_to_set(
    fake: FakeServer, endpoints: Endpoints
) -> None:
    chat = await _doctor_chat(fake, _model("prose"), endpoints)
    assert not chat.ok
    assert "StructuredOutputUnsupported" in chat.detail
    assert "NOVABERG_LLM_STRUCTURED=none" in chat.fix
    with_none = await _doctor_chat(fake, _model("prose"), endpoints, llm_structured="none")
    assert with_none.ok, with_none
    assert "structured output: none (NOVABERG_LLM_STRUCTURED)" in with_none.detail
