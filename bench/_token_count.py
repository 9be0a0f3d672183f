"""Counting a prompt's tokens as the bundled model sees them, and how much of a turn's
prompts a prefix cache could reuse.

The count is exact, not estimated: the messages go through the GGUF's own chat template
and tokenizer (`Llama(vocab_only=True)`, which loads the vocabulary in a fraction of a
second and no weights), the way `llm/local.py`'s `create_chat_completion` formats them.
A model server (llama.cpp, vLLM) reuses the computed prefix of an earlier prompt; the
*shared prefix* of a call is the longest run of leading tokens it has in common with any
earlier call of the same turn — what such a cache can skip at best.

`RecordingBackend` wraps the scripted model below `structured`, so every raw completion —
a retry's longer prompt included — is recorded with the node that made it and its answer.
It only uses what the product has had since the graphs were complete (`TextBackend`,
the node wrapper's accounting label), so `bench/tokens.py --baseline-ref` can run the same
counting against an older checkout.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from novaberg.config import Role
from novaberg.llm.accounting import current_label
from novaberg.llm.base import Completion, Message, TextBackend

TEXT_SCHEMA = "text"
"""The schema name of a free-text call."""


@dataclass
class RecordedCompletion:
    """One raw completion: the node ("graph/node"), the schema's name, every message sent
    and the answer's text ("" until it came, or if it failed). Kept in the order the calls
    started, which is the order a prefix cache sees the prompts."""

    source: str
    schema: str
    messages: tuple[Message, ...]
    text: str = ""


class RecordingBackend(TextBackend):
    """A chat backend over another one that records every raw completion with its answer."""

    def __init__(self, inner: TextBackend) -> None:
        self.inner = inner
        self.name = inner.name
        self.completions: list[RecordedCompletion] = []

    async def _complete(
        self,
        role: Role,
        messages: Sequence[Message],
        *,
        json_schema: dict[str, Any] | None,
        schema_name: str | None,
        temperature: float | None,
        max_tokens: int | None,
    ) -> Completion:
        record = RecordedCompletion(
            current_label(), schema_name or TEXT_SCHEMA, tuple(dict(m) for m in messages)
        )
        self.completions.append(record)
        completion = await self.inner._complete(
            role,
            messages,
            json_schema=json_schema,
            schema_name=schema_name,
            temperature=temperature,
            max_tokens=max_tokens,
        )
        record.text = completion.text
        return completion


class ChatTokenizer:
    """The bundled (or any chat-templated GGUF) model's tokenizer, without its weights."""

    def __init__(self, model_path: Path) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self._llama = Llama(model_path=str(model_path), vocab_only=True, verbose=False)
        metadata: dict[str, str] = self._llama.metadata
        template = metadata.get("tokenizer.chat_template")
        if not template:
            raise ValueError(f"{model_path.name} has no chat template")
        # the same formatter `Llama` builds for its default chat handler
        vocab = self._llama._model
        eos, bos = self._llama.token_eos(), self._llama.token_bos()
        self._formatter: Any = Jinja2ChatFormatter(
            template=template,
            eos_token=vocab.token_get_text(eos) if eos != -1 else "",
            bos_token=vocab.token_get_text(bos) if bos != -1 else "",
        )

    def prompt_tokens(self, messages: Sequence[Message]) -> list[int]:
        """The token ids the model evaluates for these messages (template applied)."""
        formatted = self._formatter(messages=list(messages))
        return list(
            self._llama.tokenize(
                formatted.prompt.encode("utf-8"), add_bos=not formatted.added_special, special=True
            )
        )

    def count(self, text: str) -> int:
        """Tokens of a plain text (an answer, one prompt block)."""
        if not text:
            return 0
        return len(self._llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))


def common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """How many leading tokens `a` and `b` share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def shared_prefixes(prompts: Sequence[Sequence[int]]) -> list[int]:
    """For each prompt in call order, its longest common prefix with any earlier one (the
    first prompt shares nothing)."""
    shared: list[int] = []
    for index, tokens in enumerate(prompts):
        shared.append(max((common_prefix(tokens, prompts[j]) for j in range(index)), default=0))
    return shared
