"""The model-layer protocol and the shared `structured` logic every backend uses.

A backend only implements `_complete` (one raw completion, optionally
constrained by a JSON schema) and `embed`; `chat` and `structured` — with
pydantic validation, one retry and a typed `ModelOutputError` — live here once.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ValidationError

from novaberg.config import Role
from novaberg.llm.accounting import (
    PARSED_AFTER_HINT,
    PARSED_FIRST,
    UNREADABLE,
    record_call,
    record_structured,
)
from novaberg.llm.errors import ModelOutputError
from novaberg.llm.token_caps import cap_for

log = logging.getLogger(__name__)

Message = dict[str, str]
"""`{"role": "system"|"user"|"assistant", "content": "..."}`"""

T = TypeVar("T", bound=BaseModel)

RETRY_HINT = (
    "Your previous answer was not valid JSON for the required schema. "
    "Answer again with JSON only, matching the schema exactly."
)


@dataclass(frozen=True)
class Completion:
    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


@runtime_checkable
class LLM(Protocol):
    """What nodes and services see of the model layer."""

    async def chat(
        self,
        role: Role,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> str: ...

    async def structured(
        self,
        role: Role,
        messages: Sequence[Message],
        schema: type[T],
        *,
        temperature: float | None = None,
    ) -> T: ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]: ...


def prompt_text(messages: Sequence[Message]) -> str:
    """The whole prompt as one string (what scripted rules match against)."""
    return "\n\n".join(m.get("content", "") for m in messages)


@functools.cache
def schema_of(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema, generated once per class (pydantic takes ~15 ms for a nested
    schema, more than a whole turn's graph overhead). Shared: treat it as read-only."""
    return model.model_json_schema()


class TextBackend(ABC):
    """Base for chat backends: subclasses provide one raw completion."""

    name: str = "backend"

    @abstractmethod
    async def _complete(
        self,
        role: Role,
        messages: Sequence[Message],
        *,
        json_schema: dict[str, Any] | None,
        schema_name: str | None,
        temperature: float | None,
        max_tokens: int | None,
    ) -> Completion: ...

    async def _timed(
        self,
        role: Role,
        messages: Sequence[Message],
        *,
        json_schema: dict[str, Any] | None = None,
        schema_name: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Completion:
        started = time.perf_counter()
        completion = await self._complete(
            role,
            messages,
            json_schema=json_schema,
            schema_name=schema_name,
            temperature=temperature,
            max_tokens=max_tokens,
        )
        record_call(
            completion.model,
            completion.prompt_tokens,
            completion.completion_tokens,
            time.perf_counter() - started,
        )
        return completion

    async def chat(
        self,
        role: Role,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> str:
        completion = await self._timed(
            role, messages, temperature=temperature, max_tokens=max_tokens
        )
        return completion.text.strip()

    async def structured(
        self,
        role: Role,
        messages: Sequence[Message],
        schema: type[T],
        *,
        temperature: float | None = None,
    ) -> T:
        """Validated object, one retry on invalid output, then `ModelOutputError`.
        Generation is capped at what the schema's longest answer needs (`token_caps`)."""
        json_schema = schema_of(schema)
        cap = cap_for(schema)
        attempt_messages = list(messages)
        raw = ""
        for attempt in (1, 2):
            completion = await self._timed(
                role,
                attempt_messages,
                json_schema=json_schema,
                schema_name=schema.__name__,
                temperature=temperature,
                max_tokens=cap,
            )
            raw = completion.text
            try:
                parsed = parse_structured(schema, raw)
            except (ValidationError, ValueError) as exc:
                log.warning(
                    "%s: invalid %s output (attempt %d): %s",
                    self.name,
                    schema.__name__,
                    attempt,
                    str(exc).splitlines()[0],
                )
                attempt_messages = [
                    *messages,
                    {"role": "assistant", "content": raw[:2000]},
                    {"role": "user", "content": RETRY_HINT},
                ]
            else:
                record_structured(
                    schema.__name__, PARSED_FIRST if attempt == 1 else PARSED_AFTER_HINT
                )
                return parsed
        record_structured(schema.__name__, UNREADABLE)
        raise ModelOutputError(f"{schema.__name__}: unreadable model output after retry", raw)


def parse_structured(schema: type[T], raw: str) -> T:
    """`raw` as a `schema` object. Tolerant only where JSON readers may be: a Markdown
    fence around the object, and raw control characters (a newline a grammar let through)
    inside strings (`json.loads(strict=False)`). The schema itself is never loosened:
    a value outside its bounds stays a `ValidationError`, nothing is clamped here."""
    text = _strip_fences(raw)
    try:
        return schema.model_validate_json(text)
    except ValidationError as exc:
        if not any(error["type"] == "json_invalid" for error in exc.errors()):
            raise
        data = json.loads(text, strict=False)  # ValueError if it is not JSON at all
    return schema.model_validate(data)


def _strip_fences(raw: str) -> str:
    """Accept JSON wrapped in a Markdown code fence (common with remote models)."""
    text = raw.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        if text.rstrip().endswith("```"):
            text = text.rstrip()[:-3]
    return text.strip()


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False)
