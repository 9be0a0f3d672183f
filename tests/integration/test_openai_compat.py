"""The OpenAI-compatible backend and remote embedder against a real local HTTP
server that fakes one (FastAPI under uvicorn in a thread, on 127.0.0.1).

The fake's behaviour is chosen by the model name's first word: `ok`, `flaky`
(two 500s, then 200), `down` (always 503), `slow` (answers after 2 s),
`missing` (404 with an OpenAI-style error), `garbage` (200, not JSON content).
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
from pydantic import BaseModel

from novaberg.config import Role, Settings, SettingsError, load_settings
from novaberg.llm.accounting import track_calls
from novaberg.llm.embeddings import EmbeddingDimensionMismatch, RemoteEmbedder
from novaberg.llm.errors import ModelOutputError, ModelTimeout, ModelUnavailable
from novaberg.llm.openai_compat import OpenAICompatLLM

DIM = 8


class Mood(BaseModel):
    mood: Literal["happy", "sad"]
    score: float


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
        return None

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        server.requests.append({"body": body, "auth": request.headers.get("authorization")})
        model = body["model"]
        if (problem := failure(model)) is not None:
            return problem
        if model.startswith("slow"):
            await asyncio.sleep(2)
        if model.startswith("garbage"):
            content = '{"mood": '
        elif "response_format" in body:
            content = json.dumps({"mood": "happy", "score": 0.5})
        else:
            content = "Hallo!"
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
    with pytest.raises(ModelUnavailable, match="not found"):
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
    with pytest.raises(ModelUnavailable, match="cannot connect"):
        await llm.chat(Role.CHAT, PROMPT)
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
