"""`RecordingModelLayer`: the model layer that remembers every prompt it was sent.

`novaberg turn --prompts` runs one turn through it to show, call by call, which node asked
what with which schema — a person tuning the prompts for their own model needs exactly
that. It observes from outside: the nodes call the layer as always, and the node a call
belongs to is the label of the node wrapper's accounting scope (`llm/accounting.py`,
`graph/base.py:wrap_node`), so concurrent calls (the tribunal's judges) are told apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, TypeVar

from pydantic import BaseModel

from novaberg.config import Role
from novaberg.llm.accounting import current_label
from novaberg.llm.base import Message
from novaberg.llm.layer import ModelLayer

T = TypeVar("T", bound=BaseModel)

TEXT_SCHEMA: Final = "text"
"""The schema of a free-text call."""


@dataclass(frozen=True)
class RecordedCall:
    """One model call as it was sent: `source` is "graph/node" ("" outside every node)."""

    source: str
    schema: str
    role: str
    messages: tuple[Message, ...]


class RecordingModelLayer(ModelLayer):
    """A `ModelLayer` over another one's backend and embedder that records each chat and
    structured call when it starts (so a call that fails is recorded too, in call order).
    Embeddings are not prompts and are not recorded."""

    def __init__(self, inner: ModelLayer) -> None:
        super().__init__(inner.text, inner.embedder)
        self.source = inner.source  # the page's connection, as the inner layer follows it
        self.calls: list[RecordedCall] = []

    def _record(self, role: Role, messages: Sequence[Message], schema: str) -> None:
        self.calls.append(
            RecordedCall(current_label(), schema, str(role), tuple(dict(m) for m in messages))
        )

    async def chat(
        self,
        role: Role,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> str:
        self._record(role, messages, TEXT_SCHEMA)
        return await super().chat(role, messages, temperature=temperature, max_tokens=max_tokens)

    async def structured(
        self,
        role: Role,
        messages: Sequence[Message],
        schema: type[T],
        *,
        temperature: float | None = None,
    ) -> T:
        self._record(role, messages, schema.__name__)
        return await super().structured(role, messages, schema, temperature=temperature)
