"""`ModelLayer`: one object implementing the `LLM` protocol from a chat backend and an embedder.

The chat backend may change while the process runs (the page's model connection,
`llm/connection.py`): a `source` names the backend for each call. Inside `model_turn()` the
first call's backend is kept for the rest of the turn — and for the tasks the turn starts,
which inherit the context — so a turn finishes on the model it started with.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Sequence
from contextvars import ContextVar
from typing import Protocol, TypeVar

from pydantic import BaseModel

from novaberg.config import Role
from novaberg.llm.accounting import record_embedding
from novaberg.llm.base import Message, TextBackend

T = TypeVar("T", bound=BaseModel)


class Embedder(Protocol):
    name: str
    dim: int

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


class BackendSource(Protocol):
    async def text_backend(self, env: TextBackend) -> TextBackend:
        """The chat backend the next call uses; `env`: the one built from the environment."""
        ...


_TURN_BACKENDS: ContextVar[dict[int, TextBackend] | None] = ContextVar(
    "turn_backends", default=None
)
"""Inside `model_turn()`: the backend each layer (by id) chose at the turn's first call."""


@contextlib.asynccontextmanager
async def model_turn() -> AsyncIterator[None]:
    """Keep every model call inside on the backend the first one used (nested: the outer
    turn's choice holds)."""
    if _TURN_BACKENDS.get() is not None:
        yield
        return
    token = _TURN_BACKENDS.set({})
    try:
        yield
    finally:
        _TURN_BACKENDS.reset(token)


class ModelLayer:
    """What the rest of the system calls: `chat`, `structured`, `embed`."""

    def __init__(self, text: TextBackend, embedder: Embedder) -> None:
        self.text = text
        """The chat backend the environment names."""
        self.embedder = embedder
        self.source: BackendSource | None = None
        """Where each call's chat backend comes from; None: always `text`."""

    @property
    def backend_name(self) -> str:
        return self.text.name

    async def current_text(self) -> TextBackend:
        """The chat backend this call uses (see the module docstring)."""
        if self.source is None:
            return self.text
        chosen = _TURN_BACKENDS.get()
        if chosen is not None and id(self) in chosen:
            return chosen[id(self)]
        backend = await self.source.text_backend(self.text)
        if chosen is not None:
            chosen[id(self)] = backend
        return backend

    async def chat(
        self,
        role: Role,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> str:
        text = await self.current_text()
        return await text.chat(role, messages, temperature=temperature, max_tokens=max_tokens)

    async def structured(
        self,
        role: Role,
        messages: Sequence[Message],
        schema: type[T],
        *,
        temperature: float | None = None,
    ) -> T:
        text = await self.current_text()
        return await text.structured(role, messages, schema, temperature=temperature)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            return await self.embedder.embed(texts)
        finally:
            record_embedding(time.perf_counter() - started)

    async def embed_one(self, text: str) -> list[float]:
        return (await self.embed([text]))[0]
