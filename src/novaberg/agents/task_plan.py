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
- Order: the order the person said them in. When every part is found in the utterance, its
  position decides; otherwise the router's order stands.
- The cut: the agent's task text is its part. A part not found in the utterance (the model
  paraphrased) is not trusted as the person's words: that agent gets the whole utterance,
  as a lone agent does, and its classification finds its share.
- At most `MAX_TASKS` run; any further task is planned as `over_limit` and reported as not
  done, never silently dropped.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from novaberg.agents.base import AgentResult
from novaberg.agents.registry import AgentRegistry

log = logging.getLogger(__name__)

__all__ = ["MAX_TASKS", "PlannedTask", "over_limit_result", "plan_tasks", "single_task"]

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


def plan_tasks(
    tasks: Iterable[Mapping[str, Any]], utterance: str, registry: AgentRegistry
) -> list[PlannedTask]:
    """The ordered plan from the router's tasks (`{target, text}`); [] when none matches an
    agent. Duplicates (same agent, same part) run once."""
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
