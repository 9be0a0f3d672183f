"""The `scripted` backend: the one deterministic model double, for tests, benchmarks,
reproducible demos and bug reports.

Rules (from code or a JSON file named by `NOVABERG_SCRIPT`) are tried in order;
the first whose `match` regex is found in the whole prompt text (and whose
`schema`, if given, names the requested schema class) answers. Without a rule a
structured call gets a schema-valid object derived from the prompt's hash and a
chat call a short deterministic sentence — the same prompt always gives the
same answer.

A rule with neither `output` nor `fault` only *delays*: its `latency_ms` is added and
the call goes on to the next matching rule (or the default answer). So one rule
`[{"match": ".", "latency_ms": 400}]` in front makes every call take 400 ms without
changing any answer — how the benches measure rounds of model latency.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from novaberg.config import Role
from novaberg.llm.base import Completion, Message, TextBackend, prompt_text
from novaberg.llm.errors import ModelOutputError, ModelTimeout, ModelUnavailable

Fault = Literal["timeout", "error", "malformed"]

MALFORMED_TEXT = '{"this is": not json'


@dataclass
class Rule:
    """One scripted answer. `times` (optional) limits how often the rule may fire."""

    match: str
    output: Any = None
    schema: str | None = None
    latency_ms: float = 0.0
    fault: Fault | None = None
    times: int | None = None
    used: int = 0
    _regex: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._regex = re.compile(self.match, re.DOTALL)
        if self.fault not in (None, "timeout", "error", "malformed"):
            raise ValueError(f"unknown fault {self.fault!r} in scripted rule {self.match!r}")

    def applies(self, text: str, schema_name: str | None) -> bool:
        if self.times is not None and self.used >= self.times:
            return False
        if self.schema is not None and self.schema != schema_name:
            return False
        return self._regex.search(text) is not None

    def delays_only(self) -> bool:
        """A rule without output and fault: it adds its latency, another rule answers."""
        return self.output is None and self.fault is None

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Rule:
        unknown = set(raw) - {"match", "output", "schema", "latency_ms", "fault", "times"}
        if unknown:
            raise ValueError(f"scripted rule has unknown keys {sorted(unknown)}")
        if "match" not in raw:
            raise ValueError("scripted rule needs a 'match' regex")
        return cls(**raw)


def load_rules(path: Path) -> list[Rule]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of rules")
    return [Rule.from_dict(item) for item in data]


class ScriptedLLM(TextBackend):
    """Deterministic, rule-driven chat backend."""

    name = "scripted"

    def __init__(self, rules: Sequence[Rule] = (), *, latency_ms: float = 0.0) -> None:
        self.rules: list[Rule] = list(rules)
        self.default_latency_ms = latency_ms
        self.calls: list[dict[str, Any]] = []

    def add(self, match: str, output: Any = None, **kwargs: Any) -> Rule:
        """Add a rule in front of the existing ones (tests add specific rules last)."""
        rule = Rule(match=match, output=output, **kwargs)
        self.rules.insert(0, rule)
        return rule

    def reset(self) -> None:
        self.rules.clear()
        self.calls.clear()

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
        text = prompt_text(messages)
        parts = self._composite_parts(json_schema, schema_name)
        if parts:
            return await self._composed(role, text, schema_name, parts)
        delay = 0.0
        rule: Rule | None = None
        for candidate in self.rules:
            if not candidate.applies(text, schema_name):
                continue
            if candidate.delays_only():
                candidate.used += 1
                delay += candidate.latency_ms
                continue
            rule = candidate
            break
        self.calls.append(
            {
                "role": str(role),
                "schema": schema_name,
                "prompt": text,
                "rule": rule,
                "max_tokens": max_tokens,
            }
        )
        latency = rule.latency_ms if rule and rule.latency_ms else self.default_latency_ms
        latency += delay
        if latency:
            await wait_exactly(latency / 1000)
        if rule is None:
            if json_schema is not None:
                obj = SchemaFaker(text).build(json_schema)
                return self._completion(json.dumps(obj, ensure_ascii=False), text)
            return self._completion(default_chat_text(text), text)
        rule.used += 1
        if rule.fault == "timeout":
            raise ModelTimeout(f"scripted timeout (rule {rule.match!r})")
        if rule.fault == "error":
            raise ModelUnavailable(f"scripted error (rule {rule.match!r})")
        if rule.fault == "malformed":
            if json_schema is None:
                raise ModelOutputError("scripted malformed chat output", MALFORMED_TEXT)
            return self._completion(MALFORMED_TEXT, text)
        output = rule.output
        if isinstance(output, str):
            return self._completion(output, text)
        return self._completion(json.dumps(output, ensure_ascii=False), text)

    def _composite_parts(
        self, json_schema: dict[str, Any] | None, schema_name: str | None
    ) -> dict[str, dict[str, Any]]:
        """The parts of a schema that merges other schemas' answers (the compact profile's
        one-call tribunal: `{jurist: JuristVerdict, …}`), when no rule names the merged
        schema itself but a rule names one of its parts. Then the rules written for the
        separate calls answer the merged one, part by part (README "Scripted model")."""
        if json_schema is None or any(r.schema == schema_name for r in self.rules):
            return {}
        props = json_schema.get("properties") or {}
        titled = {
            key: sub
            for key, sub in props.items()
            if isinstance(sub, dict) and sub.get("type") == "object" and sub.get("title")
        }
        if not titled or len(titled) != len(props):
            return {}
        named = {r.schema for r in self.rules}
        return titled if any(sub["title"] in named for sub in titled.values()) else {}

    async def _composed(
        self, role: Role, text: str, schema_name: str | None, parts: dict[str, dict[str, Any]]
    ) -> Completion:
        """One call answered part by part: each part by the first rule that applies to the
        prompt and names the part's schema (else the schema-valid default). A part's
        `malformed` makes only that part unreadable; `timeout`/`error` fail the whole call
        (one call cannot half time out). Delays add up once, like a single call's."""
        answer: dict[str, Any] = {}
        delay = 0.0
        used: list[Rule] = []
        fault: Fault | None = None
        for key, sub in parts.items():
            name = sub["title"]
            rule = None
            for candidate in self.rules:
                if candidate.schema is None or not candidate.applies(text, name):
                    continue
                if candidate.delays_only():
                    delay = max(delay, candidate.latency_ms)
                    continue
                rule = candidate
                break
            if rule is None:
                answer[key] = SchemaFaker(text + key).build(sub)
                continue
            used.append(rule)
            delay = max(delay, rule.latency_ms)
            if rule.fault == "malformed":
                answer[key] = MALFORMED_TEXT
            elif rule.fault is not None:
                fault = fault or rule.fault
            else:
                answer[key] = rule.output
        for rule in self.rules:
            if rule.schema is None and rule.delays_only() and rule.applies(text, schema_name):
                rule.used += 1
                delay += rule.latency_ms
        for rule in used:
            rule.used += 1
        self.calls.append(
            {
                "role": str(role),
                "schema": schema_name,
                "prompt": text,
                "rule": used[0] if used else None,
            }
        )
        latency = delay or self.default_latency_ms
        if latency:
            await wait_exactly(latency / 1000)
        if fault == "timeout":
            raise ModelTimeout(f"scripted timeout (a part of {schema_name})")
        if fault == "error":
            raise ModelUnavailable(f"scripted error (a part of {schema_name})")
        return self._completion(json.dumps(answer, ensure_ascii=False), text)

    @staticmethod
    def _completion(output: str, prompt: str) -> Completion:
        return Completion(
            text=output,
            model="scripted",
            prompt_tokens=len(prompt.split()),
            completion_tokens=len(output.split()),
        )


LOOP_TIMER_SLACK_S = 0.002
"""How late an event-loop timer may fire: epoll waits in whole milliseconds, rounded up."""


async def wait_exactly(seconds: float) -> None:
    """Sleep `seconds`, ending within microseconds of the deadline, not up to a millisecond
    late as a plain `asyncio.sleep` does: a latency rule stands for a model call taking
    exactly its latency, so a bench counting rounds of it (bench/critical_path.py) is not
    off by the loop's timer resolution once per round."""
    deadline = time.perf_counter() + seconds
    if seconds > LOOP_TIMER_SLACK_S:
        await asyncio.sleep(seconds - LOOP_TIMER_SLACK_S)
    while time.perf_counter() < deadline:
        await asyncio.sleep(0)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


def default_chat_text(prompt: str) -> str:
    """A short, stable answer for prompts no rule covers."""
    words = ["Gern", "Verstehe", "Erzähl mir mehr", "Das klingt spannend", "Ich bin da"]
    first = words[_digest(prompt)[0] % len(words)]
    return f"{first}. (scripted {_digest(prompt).hex()[:8]})"


class SchemaFaker:
    """Builds a JSON-schema-valid value, choosing deterministically from a prompt hash."""

    def __init__(self, seed_text: str) -> None:
        self.seed = _digest(seed_text)
        self.counter = 0
        self.defs: dict[str, Any] = {}

    def _byte(self) -> int:
        self.counter += 1
        return _digest(self.seed.hex() + str(self.counter))[0]

    def build(self, schema: dict[str, Any]) -> Any:
        self.defs = schema.get("$defs", {})
        return self._value(schema)

    def _value(self, schema: dict[str, Any]) -> Any:
        if "$ref" in schema:
            return self._value(self.defs[schema["$ref"].split("/")[-1]])
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return schema["enum"][self._byte() % len(schema["enum"])]
        if "default" in schema and schema.get("type") != "object":
            return schema["default"]
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [o for o in schema[key] if o.get("type") != "null"] or schema[key]
                return self._value(options[0])
        if "allOf" in schema:
            return self._value(schema["allOf"][0])
        kind = schema.get("type", "object")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        return getattr(self, f"_{kind}")(schema)

    def _object(self, schema: dict[str, Any]) -> dict[str, Any]:
        props = schema.get("properties", {})
        return {name: self._value(sub) for name, sub in props.items()}

    def _array(self, schema: dict[str, Any]) -> list[Any]:
        count = max(int(schema.get("minItems", 0)), 1)
        count = min(count, int(schema.get("maxItems", count)))
        return [self._value(schema.get("items", {"type": "string"})) for _ in range(count)]

    def _string(self, schema: dict[str, Any]) -> str:
        text = f"scripted-{self.seed.hex()[:6]}-{self.counter}"
        if "minLength" in schema:
            text = text.ljust(int(schema["minLength"]), "x")
        if "maxLength" in schema:
            text = text[: int(schema["maxLength"])]
        return text

    def _number(self, schema: dict[str, Any]) -> float:
        low = float(schema.get("minimum", schema.get("exclusiveMinimum", 0.0)))
        high = float(schema.get("maximum", schema.get("exclusiveMaximum", 1.0)))
        if high < low:
            high = low
        return round(low + (high - low) * (self._byte() / 255) * 0.98 + (high - low) * 0.01, 3)

    def _integer(self, schema: dict[str, Any]) -> int:
        low = int(schema.get("minimum", 0))
        high = int(schema.get("maximum", low + 10))
        return low + self._byte() % (high - low + 1)

    def _boolean(self, schema: dict[str, Any]) -> bool:
        return bool(self._byte() % 2)

    def _null(self, schema: dict[str, Any]) -> None:
        return None


class ScriptedEmbedder:
    """Hashed bag-of-words vectors: texts sharing words are near, others far.

    Deterministic and dependency-free, so memory tests can reason about cosine
    similarity (a near-duplicate sentence scores high, an unrelated one ~0).
    """

    name = "scripted"

    def __init__(self, dim: int) -> None:
        self.dim = dim

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.vector(text) for text in texts]

    def vector(self, text: str) -> list[float]:
        values = [0.0] * self.dim
        tokens = re.findall(r"\w+", text.lower())
        for token in tokens:
            digest = _digest(token)
            index = int.from_bytes(digest[:4], "big") % self.dim
            values[index] += 1.0 if digest[4] % 2 else -1.0
        norm = sum(v * v for v in values) ** 0.5
        if norm == 0:
            values[0] = 1.0
            return values
        return [v / norm for v in values]
