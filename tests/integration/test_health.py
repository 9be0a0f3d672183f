"""`create_app` + `GET /health` against the real embedded services, and the checks'
failure reports (with their fixes) when a service or the model is not there."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI

from novaberg.api.app import create_app
from novaberg.api.context import AppContext
from novaberg.api.doctor import CHECK_NAMES, check_health
from novaberg.config import Settings, load_settings
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedEmbedder, ScriptedLLM
from novaberg.runtime.services import Endpoints


@asynccontextmanager
async def serving(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """Run the app's lifespan in this loop and talk to it in-process."""
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://novaberg") as client:
            yield client


def _closed_port_url() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}/v1"


def _by_name(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {check["name"]: check for check in body["checks"]}


async def test_health_is_ok_with_scripted_model(settings: Settings, endpoints: Endpoints) -> None:
    app = create_app(settings, endpoints=endpoints)
    async with serving(app) as client:
        response = await client.get("/health")
        openapi = (await client.get("/openapi.json")).json()
    body = response.json()
    assert response.status_code == 200, body
    assert body["ok"] is True
    assert [c["name"] for c in body["checks"]] == list(CHECK_NAMES)
    assert all(c["ok"] and c["fix"] == "" for c in body["checks"])
    assert "384 dims" in _by_name(body)["embeddings"]["detail"]
    assert openapi["info"]["title"] == "Novaberg"
    assert "/health" in openapi["paths"]


async def test_bad_llm_url_fails_the_chat_check_with_a_fix(
    settings: Settings, endpoints: Endpoints
) -> None:
    bad = load_settings(
        home=settings.home,
        redis_url=endpoints.redis_url,
        database_url=endpoints.database_url,
        llm="openai",
        llm_url=_closed_port_url(),
        llm_retries=0,
        embed="scripted",
    )
    app = create_app(bad, endpoints=endpoints)
    async with serving(app) as client:
        response = await client.get("/health")
    body = response.json()
    assert response.status_code == 503
    assert body["ok"] is False
    checks = _by_name(body)
    assert checks["redis"]["ok"] and checks["postgres"]["ok"] and checks["embeddings"]["ok"]
    chat = checks["chat model"]
    assert not chat["ok"]
    assert "ModelUnreachable" in chat["detail"]
    assert "NOVABERG_LLM_URL" in chat["fix"]


async def test_injected_context_is_used_and_results_are_cached(
    settings: Settings, endpoints: Endpoints
) -> None:
    scripted = ScriptedLLM()
    layer = ModelLayer(scripted, ScriptedEmbedder(384))
    ctx = await AppContext.open(settings, endpoints, model=layer)
    try:
        app = create_app(context=ctx)
        async with serving(app) as client:
            first = await client.get("/health")
            second = await client.get("/health")
        assert first.status_code == second.status_code == 200, first.json()
        assert first.json() == second.json()
        assert len(scripted.calls) == 1  # the second request reused the result
        assert app.state.context is ctx
    finally:
        await ctx.aclose()


async def test_missing_services_and_wrong_dimension_are_reported(settings: Settings) -> None:
    checks = await check_health(settings, None)
    by_name = {c.name: c for c in checks}
    assert not by_name["redis"].ok and "NOVABERG_REDIS_URL" in by_name["redis"].fix
    assert not by_name["postgres"].ok and "NOVABERG_DATABASE_URL" in by_name["postgres"].fix
    assert by_name["chat model"].ok


async def test_embedding_dimension_must_match_the_schema(
    settings: Settings, endpoints: Endpoints
) -> None:
    wide = load_settings(
        home=settings.home,
        redis_url=endpoints.redis_url,
        database_url=endpoints.database_url,
        llm="scripted",
        embed_dim=768,
    )
    checks = {c.name: c for c in await check_health(wide, endpoints)}
    embeddings = checks["embeddings"]
    assert not embeddings.ok
    assert "768-dimensional vectors, the schema stores 384" in embeddings.detail
    assert "NOVABERG_EMBED_DIM=384" in embeddings.fix
