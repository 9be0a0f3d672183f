"""Shared pieces of the workflow-agent subgraphs (docs/behaviour/agents.md#workflow).

Pattern: validate → classify → [db-validate] → search → CRUD → confirm, with the
transaction phases recognise → validate → execute → verify. This module holds
what all four user agents share: audit steps, the "stop when decided" edge, the
keyword cross-check with its confidence, the classification call and its update, and the
final confirm node.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from novaberg.agents.base import RUNNING, AgentState
from novaberg.agents.verb_mappings import PHRASINGS_KEY, matching_phrasings, phrasings
from novaberg.config import Role
from novaberg.llm.errors import ModelError
from novaberg.prompts import render, user_message

if TYPE_CHECKING:
    from novaberg.agents.deps import GraphDeps
    from novaberg.agents.verb_mappings import Mapping as Phrasing

log = logging.getLogger(__name__)

S = TypeVar("S", bound=BaseModel)

KEYWORD_HINTS: dict[str, tuple[str, ...]] = {
    "reactivate": (
        r"wiederherstell",
        r"wieder\s+her",
        r"reaktivier",
        r"zurückhol",
        r"rückgängig",
        r"\bundo\b",
        r"zurücknehm",
    ),
    "delete": (r"lösch", r"entfern", r"weg\s+damit", r"absag", r"stornier"),
    "add_content": (r"füg\w*\b.*\bhinzu", r"hinzufüg", r"aufnehm", r"nimm\b.*\bauf\b", r"ergänz"),
    "remove_content": (r"streich", r"nimm\b.*\braus\b", r"entferne\b.*\bvon\b", r"runter\s+von"),
    "clear_content": (r"\bleer", r"alles\s+lösch", r"komplett\s+leer"),
    "update": (r"änder", r"aktualisier", r"korrigier"),
    "reschedule": (r"verschieb", r"verleg"),
    "read": (r"\bzeig", r"was\s+hast", r"welche", r"\bliste\b", r"auflist", r"aufzähl"),
    "create": (r"erstell", r"anlegen", r"\bleg\b.*\ban\b", r"\bmach\b.*\bneu"),
}
"""Keyword hints per action (docs/behaviour/agents.md#classification); case-insensitive,
several may fire."""

_UMLAUT_ASCII = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss"})


def step(node: str, ergebnis: Any, **extra: Any) -> list[dict[str, Any]]:
    """One audit entry, as a list so a node can return it as the `schritte` update."""
    return [{"node": node, "ergebnis": ergebnis, **extra}]


def decided(state: AgentState) -> bool:
    return (state.get("status") or RUNNING) != RUNNING


def unless_decided(target: str | Callable[[AgentState], str]) -> Callable[[AgentState], str]:
    """Conditional edge: END once a node set a final status, else `target`."""

    def route(state: AgentState) -> str:
        if decided(state):
            return END
        return target(state) if callable(target) else target

    return route


def keyword_hints(text: str) -> set[str]:
    """Actions whose keyword patterns occur in `text` (umlaut and ASCII spellings)."""
    lowered = text.lower()
    variants = {lowered, lowered.translate(_UMLAUT_ASCII)}
    hits: set[str] = set()
    for action, patterns in KEYWORD_HINTS.items():
        for pattern in patterns:
            ascii_pattern = pattern.translate(_UMLAUT_ASCII)
            if any(re.search(p, v) for p in {pattern, ascii_pattern} for v in variants):
                hits.add(action)
                break
    return hits


def confidence(action: str, hints: set[str], emerging: set[str] | None = None) -> str:
    """`hoch` if the model agrees with a hint, `konflikt` if there are hints and it agrees
    with none; without hints `mittel` if it agrees with a phrasing still being learnt
    (`emerging`), else `niedrig`. Stored in the audit, never a reason to execute anything.
    The hints are the keyword hints and the person's learnt phrasings
    (agents/verb_mappings.py)."""
    if hints:
        return "hoch" if action in hints else "konflikt"
    return "mittel" if action in (emerging or set()) else "niedrig"


class Classification(Protocol):
    """What every agent's classification schema carries besides its own fields."""

    @property
    def action(self) -> str: ...
    @property
    def normalisiert(self) -> str: ...
    @property
    def grund(self) -> str: ...


def classification_update(
    state: AgentState,
    result: Classification,
    hints: set[str],
    fields: Mapping[str, Any],
    *,
    action: str | None = None,
    learnt: Sequence[Phrasing] = (),
    emerging: Sequence[Phrasing] = (),
) -> dict[str, Any]:
    """The classify node's update, the same in every agent: the task's parameters over
    the earlier ones (with the wording's phrasings, counted once the task is carried out),
    the audit step with the cross-check of the model's own action by the keyword hints and
    the `learnt` phrasings that occur in the task (and those still being learnt,
    `emerging`, which can only make it `mittel`), and `rejected` as a final status.
    `action` replaces the model's action where the agent decides otherwise (identity:
    create past the limit → consolidate)."""
    executed = action or result.action
    checked = hints | {mapping.action for mapping in learnt}
    konfidenz = confidence(result.action, checked, {mapping.action for mapping in emerging})
    wording = state.get("task") or ""
    parameter = {
        **state.get("parameter", {}),
        **fields,
        "aktion": executed,
        "normalisiert": result.normalisiert,
        "grund": result.grund,
        "konfidenz": konfidenz,
        PHRASINGS_KEY: phrasings(
            wording,
            result.normalisiert,
            str(fields.get("target") or ""),
            skip=lambda word: bool(keyword_hints(word)),
        ),
    }
    audit: dict[str, Any] = {"konfidenz": konfidenz, "hinweise": sorted(hints)}
    if learnt or emerging:
        audit["gelernt"] = [f"{m.expression}→{m.action} ×{m.uses}" for m in (*learnt, *emerging)]
    update: dict[str, Any] = {
        "parameter": parameter,
        "steps": step("klassifizieren", executed, **audit),
    }
    if executed == "rejected":
        update["status"] = "rejected"
    return update


C = TypeVar("C", bound=BaseModel)


async def classify_task(
    state: AgentState,
    deps: GraphDeps,
    *,
    prompt_name: str,
    schema: type[C],
    domain_language: Mapping[str, Any],
    fields: Callable[[C], Mapping[str, Any]],
    blocks: Mapping[str, Any] | None = None,
    action: Callable[[C], str | None] | None = None,
) -> dict[str, Any]:
    """The classify node every agent runs: its prompt (task, keyword hints, recent history,
    domain language and the agent's own `blocks`), one structured call, and the update of
    `classification_update` with the agent's `fields` of the result (or a fault)."""
    aufgabe = state.get("task") or ""
    hints = keyword_hints(aufgabe)
    prompt = render_prompt(
        prompt_name,
        aufgabe=aufgabe,
        hinweise=hint_text(hints),
        verlauf=history_text(state),
        fachsprache=domain_language_text(domain_language),
        **(blocks or {}),
    )
    # the learnt phrasings are read meanwhile; they check the answer, not the prompt
    learnt = asyncio.ensure_future(
        matching_phrasings(
            deps,
            str((state.get("context") or {}).get("user_id") or ""),
            str(state.get("agent_name") or ""),
            aufgabe,
        )
    )
    try:
        result, error = await classify(deps, prompt, schema)
    finally:
        found = await learnt
    if result is None:
        return fail("klassifizieren", "Ich konnte die Aufgabe nicht einordnen.", grund=error)
    chosen = action(result) if action is not None else None
    enough = deps.settings.verb_mapping_uses
    return classification_update(
        state,
        result,  # type: ignore[arg-type]
        hints,
        fields(result),
        action=chosen,
        learnt=[m for m in found if m.uses >= enough],
        emerging=[m for m in found if m.uses < enough],
    )


def hint_text(hints: set[str]) -> str:
    return ", ".join(sorted(hints)) if hints else ""


def history_text(state: AgentState) -> str:
    return "\n".join((state.get("context") or {}).get("verlauf") or [])


async def classify(
    deps: GraphDeps, prompt: str, schema: type[S], *, node: str = "klassifizieren"
) -> tuple[S | None, str | None]:
    """One structured ANALYSIS call; `(None, reason)` if the model gave nothing usable."""
    try:
        result = await deps.model.structured(Role.ANALYSIS, user_message(prompt), schema)
    except ModelError as exc:
        log.warning("%s: model call failed: %s", node, exc)
        return None, f"{type(exc).__name__}: {exc}"
    return result, None


def render_prompt(prompt_name: str, /, **blocks: Any) -> str:
    """Fill `prompts/<prompt_name>.txt`; never name a placeholder `name` or `variant`
    (they collide with `render`'s own parameters)."""
    return render(prompt_name, **blocks)


def domain_language_text(domain: Mapping[str, Any]) -> str:
    """The `[FACHSPRACHE]` block body from an agent's domain-language dict."""
    lines = ["Aktionen: " + ", ".join(domain.get("aktionen", []))]
    for phrase, action in (domain.get("umgangssprache") or {}).items():
        lines.append(f'"{phrase}" → {action}')
    return "\n".join(lines)


def now_from(deps: GraphDeps) -> datetime:
    """The injected clock as an aware datetime in the configured zone."""
    return datetime.fromtimestamp(deps.clock(), tz=deps.settings.tz)


def fail(node: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"status": "fehler", "error": message, "steps": step(node, "fehler", **extra)}


def ask(node: str, question: str, parameter: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """A question to the person. Its step names the question's `frage_typ`, so what the run
    reports outwards can tell a yes/no question from a choice (agents/questions.py)."""
    return {
        "status": "rueckfrage",
        "question": question,
        "parameter": parameter,
        "steps": step(node, "rueckfrage", frage_typ=parameter.get("frage_typ"), **extra),
    }


def confirm_node(state: AgentState) -> dict[str, Any]:
    """Final node: done unless a question or fault was already set."""
    if decided(state):
        return {}
    return {"status": "abgeschlossen", "steps": step("bestaetigen", "abgeschlossen")}


def validate_node(state: AgentState) -> dict[str, Any]:
    """First node of every workflow agent: a user and a non-empty task are required."""
    if not (state.get("context") or {}).get("user_id"):
        return fail("validieren", "Kein Nutzer angegeben.")
    if not (state.get("task") or "").strip():
        return fail("validieren", "Die Aufgabe ist leer.")
    return {"steps": step("validieren", "ok")}


def resume_or_classify(state: AgentState) -> str:
    return "resume" if (state.get("parameter") or {}).get("resume") else "classify"


def create_or_search(state: AgentState) -> str:
    return "execute" if (state.get("parameter") or {}).get("aktion") == "create" else "search"


NodeFn = Callable[..., Any]


def _start(deps: GraphDeps, classify: NodeFn, resume: NodeFn, execute: NodeFn) -> StateGraph:
    graph = StateGraph(AgentState)
    graph.add_node("validate", validate_node)
    graph.add_node("resume", partial(resume, deps=deps))
    graph.add_node("classify", partial(classify, deps=deps))
    graph.add_node("execute", partial(execute, deps=deps))
    graph.add_node("confirm", confirm_node)
    graph.add_edge(START, "validate")
    graph.add_conditional_edges("validate", unless_decided(resume_or_classify))
    graph.add_edge("execute", "confirm")
    graph.add_edge("confirm", END)
    return graph


def search_workflow(
    deps: GraphDeps, *, classify: NodeFn, search: NodeFn, execute: NodeFn, resume: NodeFn
) -> Any:
    """validate → (resume | classify) → (create → execute | search → execute) → confirm
    (notes, timeline: agents that find a container before they change it)."""
    graph = _start(deps, classify, resume, execute)
    graph.add_node("search", partial(search, deps=deps))
    graph.add_conditional_edges("resume", unless_decided("execute"))
    graph.add_conditional_edges("classify", unless_decided(create_or_search))
    graph.add_conditional_edges("search", unless_decided("execute"))
    return graph.compile()


def read_or_validate(state: AgentState) -> str:
    return "execute" if (state.get("parameter") or {}).get("aktion") == "read" else "db_validate"


class Workflow:
    """An agent's subgraph as a declaration: the shape (`search_workflow`, `rule_workflow`)
    and its node functions; `BaseAgent.build_graph` compiles it."""

    def __init__(self, shape: Callable[..., Any], **nodes: Callable[..., Any]) -> None:
        self.shape = shape
        self.nodes = nodes

    def compile(self, deps: GraphDeps) -> Any:
        return self.shape(deps, **self.nodes)


def rule_workflow(
    deps: GraphDeps,
    *,
    classify: NodeFn,
    db_validate: NodeFn,
    execute: NodeFn,
    resume: NodeFn,
    after_resume: Callable[[AgentState], str],
) -> Any:
    """validate → (resume → …) | classify → [db_validate → gate question] → execute → confirm
    (directives, identity: every change passes the mandatory confirmation gate)."""
    graph = _start(deps, classify, resume, execute)
    graph.add_node("db_validate", partial(db_validate, deps=deps))
    graph.add_conditional_edges("resume", unless_decided(after_resume))
    graph.add_conditional_edges("classify", unless_decided(read_or_validate))
    graph.add_conditional_edges("db_validate", unless_decided("confirm"))
    return graph.compile()
