"""Chat backend for any OpenAI-compatible server: Ollama's `/v1`, vLLM, llama.cpp
server, LM Studio.

Each role has its own model (and optionally its own URL) by configuration.
Structured calls send the pydantic schema as `response_format` JSON schema, so
servers with constrained decoding return valid JSON; validation and the one
retry live in `TextBackend.structured`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from novaberg.config import Role, Settings, SettingsError
from novaberg.llm.base import Completion, Message, TextBackend
from novaberg.llm.errors import ModelOutputError
from novaberg.llm.http_json import BACKOFF_SECONDS, JsonClient, join_url


def check_settings(settings: Settings) -> None:
    missing = [role.value for role in Role if not settings.url_for(role)]
    if missing:
        raise SettingsError(
            "NOVABERG_LLM_URL: required for NOVABERG_LLM=openai (no URL for role "
            f"{', '.join(missing)}), e.g. http://localhost:11434/v1"
        )


class OpenAICompatLLM(TextBackend):
    name = "openai"

    def __init__(self, settings: Settings, *, backoff: float = BACKOFF_SECONDS) -> None:
        check_settings(settings)
        self.settings = settings
        self.client = JsonClient(
            timeout=settings.llm_timeout,
            retries=settings.llm_retries,
            api_key=settings.llm_api_key,
            backoff=backoff,
        )

    async def aclose(self) -> None:
        await self.client.aclose()

    def describe(self, role: Role = Role.CHAT) -> str:
        return f"{self.settings.model_for(role)} at {self.settings.url_for(role)}"

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
        model = self.settings.model_for(role)
        url = join_url(self.settings.url_for(role) or "", "chat/completions")
        payload: dict[str, Any] = {"model": model, "messages": list(messages)}
        if temperature is not None:
            payload["temperature"] = temperature
        if max_tokens is not None:
            payload["max_tokens"] = max_tokens
        if json_schema is not None:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": _schema_name(schema_name),
                    "schema": json_schema,
                    "strict": False,
                },
            }
        data = await self.client.post(url, payload)
        try:
            content = data["choices"][0]["message"].get("content")
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise ModelOutputError(f"{url}: answer without choices[0].message", str(data)) from exc
        usage = data.get("usage") or {}
        return Completion(
            text=content or "",
            model=str(data.get("model") or model),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )


def _schema_name(name: str | None) -> str:
    """OpenAI allows `[a-zA-Z0-9_-]{1,64}` as a schema name."""
    cleaned = re.sub(r"[^a-zA-Z0-9_-]", "_", name or "answer")[:64]
    return cleaned or "answer"
