"""`ModelLayer`: one object implementing the `LLM` protocol from a chat backend and an embedder."""

from __future__ import annotations

import time
from collections.abc import Sequence
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


class ModelLayer:
    """What the rest of the system calls: `chat`, `structured`, `embed`."""

    def __init__(self, text: TextBackend, embedder: Embedder) -> None:
        self.text = text
        self.embedder = embedder

    @property
    def backend_name(self) -> str:
        return self.text.name

    async def chat(
        self,
        role: Role,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> str:
        return await self.text.chat(role, messages, temperature=temperature, max_tokens=max_tokens)

    async def structured(
        self,
        role: Role,
        messages: Sequence[Message],
        schema: type[T],
        *,
        temperature: float | None = None,
    ) -> T:
        return await self.text.structured(role, messages, schema, temperature=temperature)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            return await self.embedder.embed(texts)
        finally:
            record_embedding(time.perf_counter() - started)

    async def embed_one(self, text: str) -> list[float]:
        return (await self.embed([text]))[0]
