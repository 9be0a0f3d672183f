"""How a structured call asks an OpenAI-compatible server for JSON, and the probe that
finds the way a server honours (`NOVABERG_LLM_STRUCTURED=auto`).

Servers differ. OpenAI, vLLM, LM Studio, Ollama (>= 0.5) and llama.cpp's `llama-server`
take `{"type": "json_schema", "json_schema": {"name", "schema"}}`; llama-cpp-python's
server refuses that form and constrains by `{"type": "json_object", "schema": S}`;
others only know `{"type": "json_object"}` (some JSON, any shape). And a server may
accept a form but ignore it. So the probe asks, in each form, for an object the model
cannot produce unless the form is enforced — the prompt does not mention JSON, and the
schema allows exactly one answer — and takes the first form whose answer obeys.

With `json_object` (JSON but no schema) and `none` (no `response_format` at all) the
schema is stated in the prompt instead; the answer is validated and retried once with
a hint either way (`TextBackend.structured`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from novaberg.config import StructuredForm
from novaberg.llm.base import Message
from novaberg.llm.errors import ModelRefused, ModelUnavailable, ModelUnreachable

PROBED_FORMS: Final = (
    StructuredForm.JSON_SCHEMA,
    StructuredForm.JSON_OBJECT_SCHEMA,
    StructuredForm.JSON_OBJECT,
)
"""What `auto` tries, in this order: the schema-enforcing forms first."""

PROMPT_SCHEMA_FORMS: Final = frozenset({StructuredForm.JSON_OBJECT, StructuredForm.NONE})
"""Forms in which the server does not see the schema, so the prompt states it."""

PROBE_KEY: Final = "probe"
PROBE_VALUE: Final = "novaberg"
PROBE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {PROBE_KEY: {"type": "string", "enum": [PROBE_VALUE]}},
    "required": [PROBE_KEY],
    "additionalProperties": False,
}
PROBE_MESSAGES: Final[list[Message]] = [
    {"role": "user", "content": "Sag in einem kurzen Satz Hallo."},
]
PROBE_MAX_TOKENS: Final = 48
"""The enforced answer is ~10 tokens; an ignored form may ramble, the start suffices."""

SCHEMA_PROMPT: Final = (
    "Antworte ausschließlich mit einem JSON-Objekt nach diesem JSON-Schema "
    "(Zahlen innerhalb von minimum/maximum):\n"
)
"""Appended to the last user message when the server does not see the schema."""

QUOTE_LIMIT: Final = 60


def response_format(
    form: StructuredForm, schema: dict[str, Any], name: str
) -> dict[str, Any] | None:
    """The `response_format` field for `form` (None: send none)."""
    if form is StructuredForm.JSON_SCHEMA:
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema, "strict": False},
        }
    if form is StructuredForm.JSON_OBJECT_SCHEMA:
        return {"type": "json_object", "schema": schema}
    if form is StructuredForm.JSON_OBJECT:
        return {"type": "json_object"}
    if form is StructuredForm.NONE:
        return None
    raise ValueError(f"no request form for {form!r} (auto is resolved by probing)")


def with_schema_in_prompt(messages: Sequence[Message], schema: dict[str, Any]) -> list[Message]:
    """`messages` with the schema stated at the end of the last user message."""
    text = SCHEMA_PROMPT + json.dumps(compact_schema(schema), ensure_ascii=False)
    result = [dict(m) for m in messages]
    for message in reversed(result):
        if message.get("role") == "user":
            message["content"] = f"{message.get('content', '')}\n\n{text}"
            return result
    return [*result, {"role": "user", "content": text}]


def compact_schema(node: Any, *, names: bool = False) -> Any:
    """The schema without what pydantic adds for developers: `title`s, and a model's
    docstring (the `description` next to `properties`); a field's own description is
    meant for the model and stays. Inside `properties`/`$defs` the keys are names."""
    if isinstance(node, dict):
        if names:
            return {key: compact_schema(value) for key, value in node.items()}
        dropped = {"title"} | ({"description"} if "properties" in node else set())
        return {
            key: compact_schema(value, names=key in ("properties", "$defs", "definitions"))
            for key, value in node.items()
            if not (key in dropped and isinstance(value, str))
        }
    if isinstance(node, list):
        return [compact_schema(item) for item in node]
    return node


Send = Callable[[dict[str, Any] | None], Awaitable[str]]
"""Posts the probe with the given `response_format` and returns the answer's text."""


@dataclass(frozen=True)
class ProbeOutcome:
    """The form `auto` found (None: the server honours none) and what each form did."""

    form: StructuredForm | None
    findings: tuple[tuple[StructuredForm, str], ...]

    def summary(self) -> str:
        return "; ".join(f"{form}: {finding}" for form, finding in self.findings)


NOT_ABOUT_THE_FORM: Final = frozenset({401, 403, 404})
"""Refusals that concern the key, the model or the URL, whatever the `response_format`."""


async def probe_forms(send: Send) -> ProbeOutcome:
    """Try the forms in order and return the first the server accepts and honours.

    A server that cannot be reached (or does not answer in time) raises: nothing was
    learned about it. So does one that refuses the request itself — a wrong key, model or
    URL, or a refusal that a request without `response_format` gets too: that is what the
    person must fix, not the form. A refused or failing form is noted, the next one tried."""
    findings: list[tuple[StructuredForm, str]] = []
    refused = False
    for form in PROBED_FORMS:
        fmt = response_format(form, PROBE_SCHEMA, "probe")
        try:
            text = await send(fmt)
        except ModelUnreachable:
            raise
        except ModelRefused as exc:
            if exc.status in NOT_ABOUT_THE_FORM:
                raise
            refused = True
            findings.append((form, f"refused (HTTP {exc.status}: {exc.server_message})"))
            continue
        except ModelUnavailable as exc:
            findings.append((form, f"failed ({exc})"))
            continue
        if honours(form, text):
            findings.append((form, "honoured"))
            return ProbeOutcome(form, tuple(findings))
        findings.append((form, f"ignored (answered {text.strip()[:QUOTE_LIMIT]!r})"))
    if refused:
        await send(None)  # raises ModelRefused if the server refuses this request as such
    return ProbeOutcome(None, tuple(findings))


def honours(form: StructuredForm, text: str) -> bool:
    """Did the probe's answer obey `form`? A schema form must yield exactly the one object
    the schema allows; `json_object` must yield an object at all (the prompt asked for a
    sentence)."""
    stripped = text.strip()
    if form is StructuredForm.JSON_OBJECT:
        return stripped.startswith("{")
    try:
        data = json.loads(stripped, strict=False)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get(PROBE_KEY) == PROBE_VALUE
