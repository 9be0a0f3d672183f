"""Chat backend for any OpenAI-compatible server: Ollama's `/v1`, vLLM, llama.cpp
server, llama-cpp-python's server, LM Studio.

Each role has its own model (and optionally its own URL) by configuration. Structured
calls ask for JSON in the form `NOVABERG_LLM_STRUCTURED` names; with `auto` (default)
the form is probed once per server URL and remembered (`structured_output`).
Validation and the one retry with a hint live in `TextBackend.structured`.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Sequence
from typing import Any

from novaberg.config import Role, Settings, SettingsError, StructuredForm
from novaberg.llm.base import Completion, Message, TextBackend
from novaberg.llm.errors import ModelOutputError, ModelRefused, StructuredOutputUnsupported
from novaberg.llm.http_json import BACKOFF_SECONDS, JsonClient, join_url
from novaberg.llm.structured_output import (
    PROBE_MAX_TOKENS,
    PROBE_MESSAGES,
    PROMPT_SCHEMA_FORMS,
    ProbeOutcome,
    probe_forms,
    response_format,
    with_schema_in_prompt,
)

log = logging.getLogger(__name__)

DEFAULT_MAX_TOKENS = 1024
"""Sent when a call names no limit. Servers default to "until the context is full", and a
model that loops (a small one at temperature 0 does) would spend minutes of a turn; a
companion's answer and every schema here fit well within it."""

JSON_OBJECT_STOP = ["\n\n\n"]
"""Sent with `{"type": "json_object"}` (JSON, but no schema the server could end the
answer by): a server's generic JSON grammar lets whitespace follow the object, and small
models (Ollama's JSON mode is known for it) fill the rest of `max_tokens` with blank
lines. No valid JSON answer holds two blank lines in a row — compact and pretty-printed
JSON alike have none, and a string cannot hold a raw line break — so generation stops
right after the object. With a schema (`json_schema`, `json_object_schema`) the server's
grammar ends with the object itself; with `none` there is no JSON mode and the answer
may be wrapped in prose or a fence, which the reader strips (no stop: it could end
the prose before the JSON)."""

UNSUPPORTED_RETRY_SECONDS = 60.0
"""A server that honoured no form is probed again after this long, not on every call."""


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
        self.probes: dict[str, ProbeOutcome] = {}
        """What `auto` found per server URL (the form in use, or why there is none)."""
        self._unsupported_until: dict[str, float] = {}
        self._probe_locks: dict[str, tuple[asyncio.AbstractEventLoop, asyncio.Lock]] = {}

    async def aclose(self) -> None:
        await self.client.aclose()

    def describe(self, role: Role = Role.CHAT) -> str:
        return f"{self.settings.model_for(role)} at {self._base(role)}"

    def _base(self, role: Role) -> str:
        return self.settings.url_for(role) or ""

    # -- structured-output form -----------------------------------------------------------

    async def structured_form(self, role: Role) -> StructuredForm:
        """The form structured calls of `role` use; with `auto`, probed once per URL.

        Raises `StructuredOutputUnsupported` if the server honours no form (then set
        `none`), and what the probe's request raised if the server cannot be used."""
        configured = self.settings.llm_structured
        if configured is not StructuredForm.AUTO:
            return configured
        base = self._base(role)
        found = self._known_form(base)
        if found is not None:
            return found
        async with self._probe_lock(base):
            found = self._known_form(base)  # another caller probed meanwhile
            if found is not None:
                return found
            outcome = await self._probe(role)
            self.probes[base] = outcome
            if outcome.form is None:
                self._unsupported_until[base] = time.monotonic() + UNSUPPORTED_RETRY_SECONDS
                raise _unsupported(base, outcome)
            log.info("structured output at %s: %s (%s)", base, outcome.form, outcome.summary())
            return outcome.form

    def _known_form(self, base: str) -> StructuredForm | None:
        outcome = self.probes.get(base)
        if outcome is None:
            return None
        if outcome.form is not None:
            return outcome.form
        if time.monotonic() < self._unsupported_until.get(base, 0.0):
            raise _unsupported(base, outcome)
        del self.probes[base]  # time to ask the server again
        return None

    def _probe_lock(self, base: str) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        held = self._probe_locks.get(base)
        if held is None or held[0] is not loop:
            held = (loop, asyncio.Lock())
            self._probe_locks[base] = held
        return held[1]

    async def _probe(self, role: Role) -> ProbeOutcome:
        url = join_url(self._base(role), "chat/completions")
        model = self.settings.model_for(role)

        async def send(fmt: dict[str, Any] | None) -> str:
            payload: dict[str, Any] = {
                "model": model,
                "messages": PROBE_MESSAGES,
                "temperature": 0.0,
                "max_tokens": PROBE_MAX_TOKENS,
            }
            if fmt is not None:
                payload["response_format"] = fmt
            return _content(url, await self.client.post(url, payload))

        return await probe_forms(send)

    def forget_form(self, role: Role) -> None:
        """Drop what the probe found for `role`'s URL (the server refused a request in
        that form: it may have been replaced); the next structured call probes again."""
        self.probes.pop(self._base(role), None)

    def structured_report(self) -> str:
        """One line per probed URL for `novaberg doctor`: the form in use and why."""
        configured = self.settings.llm_structured
        if configured is not StructuredForm.AUTO:
            return f"structured output: {configured} (NOVABERG_LLM_STRUCTURED)"
        parts = []
        for base, outcome in self.probes.items():
            form = outcome.form or "none honoured"
            others = [f"{f}: {finding}" for f, finding in outcome.findings if f != outcome.form]
            detail = f" ({'; '.join(others)})" if others else ""
            parts.append(f"{form} at {base}, probed{detail}")
        return "structured output: " + ("; ".join(parts) or "not probed yet")

    async def probe_all(self) -> None:
        """Find the form of every role's URL now (doctor); raises like `structured_form`."""
        for role in Role:
            await self.structured_form(role)

    # -- one completion -------------------------------------------------------------------

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
        url = join_url(self._base(role), "chat/completions")
        sent = list(messages)
        fmt: dict[str, Any] | None = None
        form: StructuredForm | None = None
        if json_schema is not None:
            form = await self.structured_form(role)
            if form in PROMPT_SCHEMA_FORMS:
                sent = with_schema_in_prompt(sent, json_schema)
            fmt = response_format(form, json_schema, _schema_name(schema_name))
        payload: dict[str, Any] = {"model": model, "messages": sent}
        if temperature is not None:
            payload["temperature"] = temperature
        payload["max_tokens"] = max_tokens or DEFAULT_MAX_TOKENS
        if fmt is not None:
            payload["response_format"] = fmt
        if form is StructuredForm.JSON_OBJECT:
            payload["stop"] = JSON_OBJECT_STOP
        try:
            data = await self.client.post(url, payload)
        except ModelRefused:
            if form is not None and self.settings.llm_structured is StructuredForm.AUTO:
                self.forget_form(role)
            raise
        usage = data.get("usage") or {}
        return Completion(
            text=_content(url, data),
            model=str(data.get("model") or model),
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        )


def _content(url: str, data: dict[str, Any]) -> str:
    try:
        content = data["choices"][0]["message"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ModelOutputError(f"{url}: answer without choices[0].message", str(data)) from exc
    return str(content or "")


def _unsupported(base: str, outcome: ProbeOutcome) -> StructuredOutputUnsupported:
    return StructuredOutputUnsupported(
        f"{base} honours no structured-output form ({outcome.summary()}); set "
        "NOVABERG_LLM_STRUCTURED=none to state the schema in the prompt only (answers are "
        "validated and retried once), or use a server with JSON-schema output"
    )


def _schema_name(name: str | None) -> str:
    """OpenAI allows `[a-zA-Z0-9_-]{1,64}` as a schema name."""
    cleaned = re.sub(r"[^a-zA-Z0-9_-]", "_", name or "answer")[:64]
    return cleaned or "answer"
