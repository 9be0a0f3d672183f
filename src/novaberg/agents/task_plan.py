"""The turn's agent plan: which task agents run, in which order, each on which part of the
utterance (docs/behaviour/agents.md#several-tasks-in-one-message).

Why a plan fixed before the first agent runs: one message may ask for several things ("Schreib
Brot auf die Einkaufsliste und erinnere mich übermorgen an das Meeting"). The planner runs
them one after the other, returning to itself after each, and a list made once is what ends
that loop — every task runs exactly once, however its agent ends (a question asked again
cannot recurse). Pure Python over the router's tasks and the registry: no model call, no
storage.

- The router names each task (`management_tasks`: target agent and the words of the
  utterance that ask for it). A task is one action on one thing: several items on one list
  are one task, two lists are two — so an agent runs once per task, and a notes run
  handles all the items of its list (its classification names one list and its items).
- A target that matches no registered agent is dropped (logged), as a lone target is.
- Order: the acute object first, then the order the person said them in. The situation
  node judges the acute objects before the router (`objekt_urteil`); a task whose part
  names one of them runs before the tasks that name none, the object the utterance is
  about first, then open objects before settled ones (`object_priority`) — what the
  conversation is about right now is done first, and its result is what the answer leads
  with. Among the rest, when every part is found in the utterance, its position decides;
  otherwise the router's order stands.
- The cut: the agent's task text is its part. A part not found in the utterance (the model
  paraphrased) is not trusted as the person's words: that agent gets the whole utterance,
  as a lone agent does, and its classification finds its share.
- At most `MAX_TASKS` run; any further task is planned as `over_limit` and reported as not
  done, never silently dropped.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from novaberg.agents.base import AgentResult
from novaberg.agents.registry import AgentRegistry

log = logging.getLogger(__name__)

__all__ = [
    "MAX_TASKS",
    "PlannedTask",
    "object_priority",
    "over_limit_result",
    "plan_tasks",
    "single_task",
]

MAX_TASKS: Final = 4
"""Agent runs per turn. Each run is a model round the answer waits for (its classification);
a person rarely asks more than three things at once."""

_EDGE = " \t\n.,;:!?\"'„“”‚‘’«»()-–—"
"""Characters stripped around a part before it is looked up in the utterance."""


@dataclass(frozen=True)
class PlannedTask:
    """One agent run of this turn. `text` is the agent's part of the utterance; "" means
    the whole stimulus (a lone task, a resume, or a part not found in the utterance)."""

    agent: str
    text: str = ""
    over_limit: bool = False


def single_task(agent: str) -> list[PlannedTask]:
    """The plan of a turn with one agent (a lone router target, or a resume)."""
    return [PlannedTask(agent)]


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip(_EDGE)).lower()


def _position(part: str, utterance: str) -> int | None:
    wanted = _normal(part)
    if not wanted:
        return None
    found = _normal(utterance).find(wanted)
    return None if found < 0 else found


def object_priority(judgements: Iterable[Mapping[str, Any]], reference: str = "") -> list[str]:
    """The acute objects (`objekt_urteil` rows) most urgent first: the object the utterance
    is about, then the open ones, then the settled ones (each group in judgement order)."""
    rows = [(str(j.get("objekt") or ""), str(j.get("status") or "")) for j in judgements]
    ranked = sorted(
        (name for name, _ in rows if name),
        key=lambda name: (
            name.lower() != reference.lower(),
            dict(rows).get(name) != "offen",
        ),
    )
    return ranked


def _acute_rank(part: str, acute: Sequence[str]) -> int:
    lowered = _normal(part)
    for rank, name in enumerate(acute):
        if name and name.lower() in lowered:
            return rank
    return len(acute)


def plan_tasks(
    tasks: Iterable[Mapping[str, Any]],
    utterance: str,
    registry: AgentRegistry,
    acute: Sequence[str] = (),
) -> list[PlannedTask]:
    """The ordered plan from the router's tasks (`{target, text}`); [] when none matches an
    agent. Duplicates (same agent, same part) run once. `acute`: the acute objects, most
    urgent first (`object_priority`); a task naming one runs before those naming none."""
    matched: list[tuple[str, str, int | None]] = []
    for task in tasks:
        target = str(task.get("target") or "")
        name = registry.match_target(target)
        if name is None:
            log.info("planner: task target %r matches no agent; dropped", target)
            continue
        part = str(task.get("text") or "").strip()
        entry = (name, part, _position(part, utterance))
        if all((n, p) != (name, part) for n, p, _ in matched):
            matched.append(entry)
    if matched and all(position is not None for _, _, position in matched):
        matched.sort(key=lambda entry: entry[2] or 0)
    if acute and len(matched) > 1:  # stable: the said order stands within each rank
        matched.sort(key=lambda entry: _acute_rank(entry[1], acute))
    plan: list[PlannedTask] = []
    for name, part, position in matched:
        if position is None and part:
            log.warning("planner: part %r of %s not in the utterance; whole utterance", part, name)
        text = part if position is not None and len(matched) > 1 else ""
        plan.append(PlannedTask(name, text, over_limit=len(plan) >= MAX_TASKS))
    return plan


def over_limit_result(task: PlannedTask) -> AgentResult:
    """The result of a task beyond `MAX_TASKS`: not run, said so."""
    what = f" ('{task.text}')" if task.text else ""
    return AgentResult(
        agent_name=task.agent,
        result=None,
        status="fehler",
        error=f"Nicht ausgeführt{what}: mehr als {MAX_TASKS} Aufträge in einer Nachricht.",
        meta={"over_limit": True},
    )
