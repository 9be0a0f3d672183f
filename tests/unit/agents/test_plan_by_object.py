"""The planner orders its agents by the situation's object judgement (`objekt_urteil`,
docs/behaviour/agents.md#several-tasks-in-one-message): the task about the acute object
runs first; without one the order said stands."""

from __future__ import annotations

from typing import Any

from test_agent_framework import build_loop, fake_registry, turn
from test_multi_task import BOTH, BREAD, MEETING, tasks

from novaberg.agents.registry import discover_agents
from novaberg.agents.task_plan import PlannedTask, object_priority, plan_tasks
from novaberg.cli.turn import understanding_lines
from novaberg.graph.contract import GraphDeps
from novaberg.graph.nodes.planner import planner


def judged(*rows: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"objekt": name, "bekannt": 1, "strecke": 0, "status": status} for name, status in rows]


def test_the_referenced_object_then_open_then_settled() -> None:
    rows = judged(("Liste", "geklaert"), ("Meeting", "offen"), ("Bello", "geklaert"))
    assert object_priority(rows) == ["Meeting", "Liste", "Bello"]
    assert object_priority(rows, reference="bello") == ["Bello", "Meeting", "Liste"]
    assert object_priority([]) == []


def test_the_acute_objects_task_runs_first() -> None:
    registry = discover_agents()
    said = tasks(("notizen", BREAD), ("timeline", MEETING))
    assert plan_tasks(said, BOTH, registry) == [
        PlannedTask("notizen", BREAD),
        PlannedTask("timeline", MEETING),
    ]
    assert plan_tasks(said, BOTH, registry, ["Meeting"]) == [
        PlannedTask("timeline", MEETING),
        PlannedTask("notizen", BREAD),
    ]
    assert plan_tasks(said, BOTH, registry, ["Einkaufsliste", "Meeting"]) == [
        PlannedTask("notizen", BREAD),
        PlannedTask("timeline", MEETING),
    ]
    # an object no task names changes nothing
    assert [t.agent for t in plan_tasks(said, BOTH, registry, ["Bello"])] == [
        "notizen",
        "timeline",
    ]


async def test_the_agents_run_in_the_order_of_the_object_judgement(deps: GraphDeps) -> None:
    text = "sag Brot und sag Milch"
    said = tasks(("echo", "sag Brot"), ("echo", "sag Milch"))
    loop = build_loop(deps, fake_registry())
    plain = await loop.ainvoke(turn(text, management_tasks=said))
    assert [r.result for r in plain["agent_results"]] == ["echo: sag Brot", "echo: sag Milch"]
    acute = await loop.ainvoke(
        turn(
            text,
            management_tasks=said,
            object_judgement=judged(("Brot", "geklaert"), ("Milch", "offen")),
            object_reference="Milch",
        )
    )
    assert [r.result for r in acute["agent_results"]] == ["echo: sag Milch", "echo: sag Brot"]


async def test_the_planners_row_names_the_plan_and_the_objects(deps: GraphDeps) -> None:
    state = turn(
        "sag Brot und sag Milch",
        management_tasks=tasks(("echo", "sag Brot"), ("echo", "sag Milch")),
        object_judgement=judged(("Milch", "offen")),
        object_reference="Milch",
    )
    update = await planner(state, deps, fake_registry())  # type: ignore[arg-type]
    assert update["agent_name"] == "echo" and update["agent_task"] == "sag Milch"
    assert update["_log"] == {
        "plan": [{"agent": "echo", "teil": "sag Milch"}, {"agent": "echo", "teil": "sag Brot"}],
        "nach_objekt": ["Milch"],
    }
    row = {"node": "planner", "art": "node", "inhalt": update["_log"]}
    assert understanding_lines([row]) == [
        "plan: echo(sag Milch) → echo(sag Brot) (acute first: Milch)"
    ]
