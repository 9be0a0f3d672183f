"""Per-scope accounting of model calls, so each node run can log what it spent.

A node wrapper opens a scope with `track_calls()`; every backend call inside it
(including ones in concurrent tasks spawned from it) adds to that scope. Every node run
opens one, so a scope is a plain class, not a generator-based context manager, and its
stats hold plain dicts (a `Counter` costs a Python-level `__init__` per run).
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from types import TracebackType

from novaberg.store.pipeline_log import (
    STRUCTURED_AFTER_HINT,
    STRUCTURED_FIRST,
    STRUCTURED_UNREADABLE,
)


@dataclass(slots=True)
class CallStats:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_seconds: float = 0.0
    embed_calls: int = 0
    embed_seconds: float = 0.0
    models: list[str] = field(default_factory=list)
    structured: dict[tuple[str, str], int] = field(default_factory=dict)
    """(schema name, outcome) -> structured calls; outcomes are `STRUCTURED_OUTCOMES`."""
    label: str = ""
    """Whose calls these are ("character/router"; the node wrapper names its scope)."""

    def add(self, model: str, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.model_seconds += seconds
        if model not in self.models:
            self.models.append(model)

    def add_embedding(self, seconds: float) -> None:
        self.embed_calls += 1
        self.embed_seconds += seconds

    def structured_summary(self) -> dict[str, dict[str, int]]:
        """`{schema: {outcome: count}}`, JSON-ready (a pipeline_log row's `strukturiert`)."""
        summary: dict[str, dict[str, int]] = {}
        for (schema, outcome), count in sorted(self.structured.items()):
            summary.setdefault(schema, {})[outcome] = count
        return summary

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


PARSED_FIRST = STRUCTURED_FIRST
PARSED_AFTER_HINT = STRUCTURED_AFTER_HINT
UNREADABLE = STRUCTURED_UNREADABLE
STRUCTURED_OUTCOMES = (PARSED_FIRST, PARSED_AFTER_HINT, UNREADABLE)
"""How a structured call ended: valid at once, valid after the retry with the hint, or
unreadable after it (wire values of pipeline_log rows, defined in store/pipeline_log.py)."""

_current: ContextVar[tuple[CallStats, ...]] = ContextVar("novaberg_call_stats", default=())


class CallScope:
    """`with CallScope() as stats:` collects the calls made inside the block into `stats`
    (nested scopes all see them)."""

    __slots__ = ("_token", "stats")

    def __init__(self, label: str = "") -> None:
        self.stats = CallStats(label=label)
        self._token: Token[tuple[CallStats, ...]] | None = None

    def __enter__(self) -> CallStats:
        self._token = _current.set((*_current.get(), self.stats))
        return self.stats

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._token is not None:
            _current.reset(self._token)
            self._token = None


def track_calls(label: str = "") -> CallScope:
    """Collect the calls made inside this block (nested scopes all see them); `label` names
    whose calls they are (`current_label`)."""
    return CallScope(label)


def current_label() -> str:
    """The label of the innermost labelled scope around this call ("" outside any)."""
    for stats in reversed(_current.get()):
        if stats.label:
            return stats.label
    return ""


def record_call(model: str, prompt_tokens: int, completion_tokens: int, seconds: float) -> None:
    for stats in _current.get():
        stats.add(model, prompt_tokens, completion_tokens, seconds)


def record_embedding(seconds: float) -> None:
    """An embedding call is model work too; counted apart from chat calls (`calls`)."""
    for stats in _current.get():
        stats.add_embedding(seconds)


def record_structured(schema: str, outcome: str) -> None:
    """One structured call ended with `outcome` (one of `STRUCTURED_OUTCOMES`)."""
    key = (schema, outcome)
    for stats in _current.get():
        stats.structured[key] = stats.structured.get(key, 0) + 1
