"""The "Test" of the page's model connection, the way `novaberg doctor` checks a model:
one real structured call to the server (its structured-output form found first, as every
call would), its time, and one embedding whose size must match the database's vectors.
A failure is named by a code the page turns into a sentence (docs/behaviour/web.md#model-connection).
"""

from __future__ import annotations

import asyncio
import time
from typing import Final, Literal

from pydantic import BaseModel, Field

from novaberg.api.context import AppContext
from novaberg.api.doctor import PROBE_MESSAGES, HealthProbe, _stored_dimension
from novaberg.config import Role
from novaberg.llm.connection import connection_settings
from novaberg.llm.errors import (
    ModelOutputError,
    ModelRefused,
    ModelTimeout,
    ModelUnreachable,
    StructuredOutputUnsupported,
)

CHECK_TIMEOUT: Final = 20.0
"""Seconds the test's model call may take at most (a person waits for the button)."""

Problem = Literal[
    "nicht_erreichbar", "schluessel_abgelehnt", "abgelehnt", "zu_langsam", "kein_json",
    "groesse_falsch", "fehler",
]  # fmt: skip


class Probe(BaseModel):
    ok: bool
    sekunden: float = Field(description="How long the call took.")
    problem: Problem | None = Field(default=None, description="Why it failed, as a code.")
    detail: str = Field(default="", description="What the server or client said (technical).")
    dimension: int | None = Field(default=None, description="Embeddings: the vector size.")
    schema_dimension: int | None = Field(default=None, description="The database's size.")


class ConnectionCheck(BaseModel):
    ok: bool = Field(description="The chat model answered a structured call.")
    chat: Probe
    embeddings: Probe


def problem_of(exc: Exception) -> Problem:
    if isinstance(exc, ModelTimeout):
        return "zu_langsam"
    if isinstance(exc, ModelRefused):
        return "schluessel_abgelehnt" if exc.status in (401, 403) else "abgelehnt"
    if isinstance(exc, ModelUnreachable):
        return "nicht_erreichbar"
    if isinstance(exc, ModelOutputError | StructuredOutputUnsupported):
        return "kein_json"
    return "fehler"


async def check_chat(ctx: AppContext, url: str, model: str, api_key: str) -> Probe:
    """One structured call to the given server, with a short timeout and no retries."""
    from novaberg.llm.openai_compat import OpenAICompatLLM

    settings = connection_settings(ctx.settings, url, model, api_key).model_copy(
        update={"llm_retries": 0, "llm_timeout": min(ctx.settings.llm_timeout, CHECK_TIMEOUT)}
    )
    backend = OpenAICompatLLM(settings)
    started = time.perf_counter()
    try:
        await backend.structured(Role.CHAT, PROBE_MESSAGES, HealthProbe, temperature=0.0)
    except Exception as exc:
        seconds = round(time.perf_counter() - started, 2)
        detail = f"{type(exc).__name__}: {exc}"[:500]
        return Probe(ok=False, sekunden=seconds, problem=problem_of(exc), detail=detail)
    finally:
        await backend.aclose()
    return Probe(ok=True, sekunden=round(time.perf_counter() - started, 2))


async def check_embeddings(ctx: AppContext) -> Probe:
    """The embedder in use (the connection does not change it) against the schema's size."""
    started = time.perf_counter()
    try:
        vectors = await ctx.model.embed(["Novaberg health check"])
        stored = await asyncio.to_thread(_stored_dimension, ctx.endpoints.database_url)
    except Exception as exc:
        seconds = round(time.perf_counter() - started, 2)
        detail = f"{type(exc).__name__}: {exc}"[:500]
        return Probe(ok=False, sekunden=seconds, problem=problem_of(exc), detail=detail)
    seconds = round(time.perf_counter() - started, 2)
    size = len(vectors[0]) if vectors else 0
    ok = stored is None or size == stored
    return Probe(
        ok=ok,
        sekunden=seconds,
        problem=None if ok else "groesse_falsch",
        dimension=size,
        schema_dimension=stored,
    )


async def check_connection(ctx: AppContext, url: str, model: str, api_key: str) -> ConnectionCheck:
    chat, embeddings = await asyncio.gather(
        check_chat(ctx, url, model, api_key), check_embeddings(ctx)
    )
    return ConnectionCheck(ok=chat.ok, chat=chat, embeddings=embeddings)
