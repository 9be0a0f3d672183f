"""The agent framework's types: `AgentState`, `AgentResult`, `Correction`, `BaseAgent`.

Why this shape (docs/behaviour/agents.md#framework): every task agent is a LangGraph
subgraph over one small state (`AgentState`), and reports back through one
validated result type, so the planner, the task block and the session markers
never have to guess what an agent meant.
"""

from __future__ import annotations

import inspect
import operator
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, TypedDict, cast

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps

__all__ = [
    "RUNNING",
    "STATUS_CANON",
    "AgentDefinitionError",
    "AgentResult",
    "AgentState",
    "BaseAgent",
    "Correction",
    "EnrichQuery",
]

STATUS_CANON: frozenset[str] = frozenset(
    {"abgeschlossen", "fehler", "rueckfrage", "abgelehnt", "rejected", "dismissed"}
)
"""Final statuses: done, fault, question, reasoned refusal,
legacy bare refusal, user said no at a gate."""

RUNNING = "laufend"
"""`AgentState.status` while the subgraph runs; never a final status."""

CONTEXT_KEYS: frozenset[str] = frozenset(
    {"user_id", "character_id", "memory_context", "verlauf", "initiator", "angebot"}
)
"""Catalogued `context` keys an agent may see (invoke drops the rest); `angebot` only on a
run that executes an accepted offer (agents/offers.py)."""


EnrichQuery = tuple[str, Sequence[Any]]
"""(sql, params) of an enrich hook's read."""


class AgentDefinitionError(ValueError):
    """An agent folder or result violates the framework contract."""


class AgentState(TypedDict, total=False):
    """Everything an agent sees."""

    task: str  # the stimulus text (user utterance, or the answer on resume)
    task_type: str  # "workflow" | "kognitiv"
    agent_name: str
    context: dict[str, Any]  # user_id, character_id, memory_context, verlauf, initiator[, angebot]
    parameter: dict[str, Any]  # action, target, ..., resume flags; node scratch space
    steps: Annotated[list[dict[str, Any]], operator.add]  # audit: {node, ergebnis, ...}
    result: Any
    status: str  # RUNNING while running, then one of STATUS_CANON
    question: str | None
    error: str | None


@dataclass(frozen=True)
class Correction:
    """Why an agent refused and what would have worked (never executed)."""

    finding: str  # what is wrong
    evidence: str
    suggestion: str  # a working phrasing

    def __post_init__(self) -> None:
        for name in ("finding", "evidence", "suggestion"):
            if not str(getattr(self, name) or "").strip():
                raise AgentDefinitionError(f"Correction needs a non-empty {name}")

    def to_dict(self) -> dict[str, str]:
        return {"finding": self.finding, "evidence": self.evidence, "suggestion": self.suggestion}


@dataclass
class AgentResult:
    """One agent run as the planner and the responder see it."""

    agent_name: str
    result: Any
    status: str
    error: str | None = None
    question: str | None = None
    correction: Correction | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUS_CANON:
            raise AgentDefinitionError(f"unknown agent status {self.status!r}")
        if not self.agent_name:
            raise AgentDefinitionError("AgentResult needs an agent_name")
        required = {"abgelehnt": "correction", "fehler": "error", "rueckfrage": "question"}
        needed = required.get(self.status)
        if needed is not None and not getattr(self, needed):
            raise AgentDefinitionError(f"status {self.status!r} requires {needed}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent_name": self.agent_name,
            "result": self.result,
            "status": self.status,
            "error": self.error,
            "question": self.question,
            "correction": self.correction.to_dict() if self.correction else None,
            "steps": self.steps,
            "meta": self.meta,
        }

    @classmethod
    def coerce(cls, value: AgentResult | dict[str, Any]) -> AgentResult:
        """Accept a result or its dict form (state that went through JSON)."""
        if isinstance(value, AgentResult):
            return value
        data = dict(value)
        correction = data.get("correction")
        if isinstance(correction, dict):
            data["correction"] = Correction(**correction)
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


class BaseAgent(ABC):
    """A task agent: a folder with AGENT.md, agent.py (this class) and dispatch.py.

    `name` is the wire name the router and the pending question use ("notizen",
    "timeline", "direktiven", "charakter_identitaet"); the folder name is English.
    """

    graph_suitability: tuple[str, ...] = ("user",)
    """Which graphs may run the agent (`graph_eignung`)."""

    load_type: str = "llm"
    """"llm" or "cpu" (`lastart`)."""

    router_intents: tuple[str, ...] = ()
    """Perception intents that select this agent in the planner
    (docs/behaviour/nodes.md#planner)."""

    aliases: tuple[str, ...] = ()
    """Further lowercase names a router target may use for this agent."""

    routable: bool = True
    """Offered to the router's model in `[AGENTEN]`. False: reached only through a promise
    of Nova's (a self-event's `commitment`, graph/nodes/router.py), so the router prompt of
    every plain message stays as it is."""

    rejection_hint: str = "Formuliere die Aufgabe bitte konkreter."
    """Fixed phrasing hint for a refusal (`Correction.suggestion`)."""

    offer_notice: str = ""
    """What Nova may offer to have this agent do, as the composer's `[ANGEBOT]` block lists
    it (German); "" = the agent is never offered (docs/behaviour/agents.md#offers). An
    offerable agent's classifier shows the `[OBJEKT]` and `[ZUSTIMMUNG]` blocks."""

    domain_language: ClassVar[Mapping[str, Any]] = {}
    """The agent's actions (`aktionen`) and everyday phrasings that name them
    (`umgangssprache`); its classify prompt shows them (docs/behaviour/agents.md#classification)."""

    _compiled: tuple[GraphDeps, Any] | None = None
    """The subgraph compiled for one `GraphDeps` (see `compiled`)."""

    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    def directory(self) -> Path:
        return Path(inspect.getfile(self.__class__)).parent

    @cached_property
    def description(self) -> str:
        """AGENT.md, required: an agent without a description is not discoverable.
        Read once per agent object: the router asks for it on every turn."""
        path = self.directory / "AGENT.md"
        if not path.is_file():
            raise AgentDefinitionError(f"{self.directory.name}: AGENT.md is missing")
        return path.read_text(encoding="utf-8")

    @cached_property
    def notice(self) -> str:
        """The router's notice (`aushang`): the AGENT.md section "## Aushang" or its
        first paragraph after the title."""
        text = self.description
        marker = "## Aushang"
        if marker in text:
            section = text.split(marker, 1)[1]
            return section.split("\n## ", 1)[0].strip()
        paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
        body = [p for p in paragraphs if not p.startswith("#")]
        return body[0] if body else ""

    @property
    def capabilities(self) -> list[str]:
        """What the agent can do (`faehigkeiten`): its domain actions."""
        return list(self.domain_language.get("aktionen", []))

    workflow: ClassVar[Any] = None
    """The agent's subgraph as an `agents.workflow.Workflow` declaration (shape and node
    functions); an agent without one overrides `build_graph`."""

    def build_graph(self, deps: GraphDeps) -> Any:
        """The compiled LangGraph subgraph over `AgentState`, nodes bound to `deps`."""
        if self.workflow is None:
            raise AgentDefinitionError(f"{self.name}: neither a workflow nor a build_graph")
        return self.workflow.compile(deps)

    def compiled(self, deps: GraphDeps) -> Any:
        """The subgraph bound to `deps`, compiled on first use and kept: a process has one
        `GraphDeps`, so every run after the first reuses it (`GraphRuntime.compile`
        compiles it at startup)."""
        if self._compiled is None or self._compiled[0] is not deps:
            self._compiled = (deps, self.build_graph(deps))
        return self._compiled[1]

    async def enrich(self, deps: GraphDeps, user_id: str, text: str) -> list[dict[str, Any]]:
        """The enricher's hook: memory entries {quelle, subtyp, inhalt, gewicht, meta} this
        agent's data adds to a turn about `text` (docs/behaviour/agents.md#enrich-hooks).
        Read only, no model call: the rows of `enrich_query`, shaped by `enrich_rows`; the
        default adds nothing."""
        query = self.enrich_query(deps, user_id, text)
        if query is None:
            return []
        sql, params = query
        async with deps.pool.connection() as conn:
            cur = await conn.execute(sql, params)
            rows = cast(list[dict[str, Any]], await cur.fetchall())
        return self.enrich_rows(deps, rows)

    def enrich_query(self, deps: GraphDeps, user_id: str, text: str) -> EnrichQuery | None:
        """The hook's one read as (sql, params), or None when `text` asks for nothing.
        Separate from `enrich` so db_access can send it with its own reads (one round
        trip for all of them); the default reads nothing."""
        return None

    def enrich_rows(self, deps: GraphDeps, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The memory entries made of `enrich_query`'s rows; the default makes none."""
        return []

    async def invoke(self, state: AgentState, deps: GraphDeps) -> AgentState:
        """Drop undeclared `context` keys, then run the subgraph."""
        context = {k: v for k, v in (state.get("context") or {}).items() if k in CONTEXT_KEYS}
        result = await self.compiled(deps).ainvoke({**state, "context": context})
        return AgentState(**result)  # type: ignore[typeddict-item]
