"""Several tasks in one message (docs/behaviour/agents.md#several-tasks-in-one-message): the
plan, the planner ⇄ agent loop running each task once on its own part, questions from any
of them, and the task block that confirms every outcome."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from agent_turns import run_turn
from test_agent_framework import build_loop, fake_registry, turn

from novaberg.agents.base import AgentResult
from novaberg.agents.markers import session_marker
from novaberg.agents.pending import pending_question
from novaberg.agents.registry import discover_agents
from novaberg.agents.task_block import QUESTION_HELD, build_task_block
from novaberg.agents.task_plan import MAX_TASKS, PlannedTask, plan_tasks
from novaberg.graph.contract import GraphDeps
from novaberg.graph.nodes.router import RouterDecision, decision_update
from novaberg.llm.scripted import ScriptedLLM

BREAD = "Schreib Brot auf die Einkaufsliste"
MEETING = "erinnere mich übermorgen an das Meeting"
BOTH = f"{BREAD} und {MEETING}"


def tasks(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"target": target, "text": text} for target, text in pairs]


# --- the plan ------------------------------------------------------------------------------


def test_plan_follows_the_utterance_and_cuts_each_part() -> None:
    registry = discover_agents()
    # the router listed them the wrong way round: the utterance's order decides
    plan = plan_tasks(tasks(("timeline", MEETING), ("notizen", BREAD)), BOTH, registry)
    assert plan == [PlannedTask("notizen", BREAD), PlannedTask("timeline", MEETING)]


def test_plan_matches_loosely_drops_unknown_and_runs_duplicates_once() -> None:
    registry = discover_agents()
    plan = plan_tasks(
        tasks(
            ("Notizen", "schreib brot auf die einkaufsliste."),  # case and edge punctuation
            ("wetter", "und sag mir das Wetter"),
            ("notizen", "schreib brot auf die einkaufsliste."),
            ("timeline", MEETING),
        ),
        BOTH,
        registry,
    )
    assert [(t.agent, t.text) for t in plan] == [
        ("notizen", "schreib brot auf die einkaufsliste."),
        ("timeline", MEETING),
    ]


def test_a_paraphrased_part_is_not_trusted_and_the_router_order_stands() -> None:
    registry = discover_agents()
    plan = plan_tasks(
        tasks(("timeline", "Meeting übermorgen eintragen"), ("notizen", BREAD)), BOTH, registry
    )
    assert plan == [PlannedTask("timeline", ""), PlannedTask("notizen", BREAD)]


def test_a_lone_task_keeps_the_whole_utterance() -> None:
    plan = plan_tasks(tasks(("notizen", BREAD)), f"Hallo! {BREAD}", discover_agents())
    assert plan == [PlannedTask("notizen", "")]


def test_tasks_beyond_the_limit_are_planned_as_not_run() -> None:
    parts = [f"Teil {i}" for i in range(MAX_TASKS + 1)]
    plan = plan_tasks(tasks(*(("echo", p) for p in parts)), " und ".join(parts), fake_registry())
    assert [t.over_limit for t in plan] == [False] * MAX_TASKS + [True]


def test_router_hands_its_tasks_on_only_with_an_agent_action() -> None:
    decision = RouterDecision.model_validate(
        {
            "management_action": "agent",
            "management_tasks": tasks(("notizen", BREAD), ("timeline", MEETING)),
        }
    )
    assert decision_update(decision)["management_tasks"] == tasks(
        ("notizen", BREAD), ("timeline", MEETING)
    )
    decision.management_action = ""
    assert decision_update(decision)["management_tasks"] == []


# --- the loop ----------------------------------------------------------------------------


async def test_each_task_runs_once_on_its_part_in_order(deps: GraphDeps) -> None:
    text = "sag Brot und sag Milch"
    out = await build_loop(deps, fake_registry()).ainvoke(
        turn(text, management_tasks=tasks(("echo", "sag Milch"), ("echo", "sag Brot")))
    )
    assert [r.result for r in out["agent_results"]] == ["echo: sag Brot", "echo: sag Milch"]
    block = out["task_block"]
    assert "1. echo — erledigt: echo: sag Brot" in block
    assert "2. echo — erledigt: echo: sag Milch" in block
    assert out["task_context_cut"] is True
    assert out["agent_plan"] == []


async def test_a_question_first_and_a_done_task_both_reach_the_answer(deps: GraphDeps) -> None:
    text = "frag mich das und sag Brot"
    out = await build_loop(deps, fake_registry()).ainvoke(
        turn(text, management_tasks=tasks(("echo", "frag mich das"), ("echo", "sag Brot")))
    )
    assert [r.status for r in out["agent_results"]] == ["rueckfrage", "abgeschlossen"]
    block = out["task_block"]
    assert "1. echo — Rückfrage: Wirklich?" in block
    assert "2. echo — erledigt: echo: sag Brot" in block
    assert "Stelle am Ende genau diese Rückfrage" in block
    assert out["task_context_cut"] is True
    assert out["agent_results"][0].question == "Wirklich?"
    pending = await pending_question(deps.redis, "u1")
    assert pending is not None and pending["agent_name"] == "echo"
    assert session_marker(out["agent_results"]) == "[ERLEDIGT]"

    # the waiting agent takes the answer in the next turn, alone
    out = await build_loop(deps, fake_registry()).ainvoke(turn("ja", action="resume", target=""))
    assert [(r.status, r.result) for r in out["agent_results"]] == [
        ("abgeschlossen", "echo erledigt")
    ]
    assert await pending_question(deps.redis, "u1") is None


async def test_a_second_question_is_held_not_stored_over_the_first(deps: GraphDeps) -> None:
    text = "frag mich das, frag mich immer"
    out = await build_loop(deps, fake_registry()).ainvoke(
        turn(text, management_tasks=tasks(("echo", "frag mich das"), ("echo", "frag mich immer")))
    )
    first, second = out["agent_results"]
    assert not first.meta.get(QUESTION_HELD) and second.meta[QUESTION_HELD] is True
    pending = await pending_question(deps.redis, "u1")
    assert pending is not None and pending["parameter"]["always_ask"] is False  # the first one
    assert "2. echo — noch nicht erledigt" in out["task_block"]
    assert "noch einmal zu sagen" in out["task_block"]
    assert out["task_context_cut"] is False  # questions only: the context stays


async def test_tasks_over_the_limit_are_reported_not_dropped(deps: GraphDeps) -> None:
    parts = [f"sag {i}" for i in range(MAX_TASKS + 1)]
    out = await build_loop(deps, fake_registry()).ainvoke(
        turn(" und ".join(parts), management_tasks=tasks(*(("echo", p) for p in parts)))
    )
    statuses = [r.status for r in out["agent_results"]]
    assert statuses == ["abgeschlossen"] * MAX_TASKS + ["fehler"]
    assert f"mehr als {MAX_TASKS} Aufträge" in out["task_block"]


async def test_notes_and_timeline_in_one_message(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    scripted.add(
        rf"Äußerung des Nutzers: {BREAD}\n",
        {"action": "create", "target": "Einkaufsliste", "elemente": ["Brot"]},
        schema="NotesClassification",
    )
    scripted.add(
        rf"Äußerung des Nutzers: {MEETING}\n",
        {"action": "create", "target": "Meeting", "zeitausdruck": "übermorgen"},
        schema="TimelineClassification",
    )
    out = await run_turn(
        deps,
        BOTH,
        "notizen",
        needs_timeline=True,
        management_tasks=tasks(("notizen", BREAD), ("timeline", MEETING)),
    )
    assert [(r.agent_name, r.status) for r in out["agent_results"]] == [
        ("notizen", "abgeschlossen"),
        ("timeline", "abgeschlossen"),
    ]
    async with deps.pool.connection() as conn:
        note = await (await conn.execute("SELECT name, text FROM notizen WHERE aktiv")).fetchone()
        entry = await (await conn.execute("SELECT title, event_time FROM timeline")).fetchone()
    assert (note["name"], note["text"]) == ("Einkaufsliste", "Brot")
    # spoken Fri 2026-07-31 (agent_turns.NOW): übermorgen is Sun 2 August, local midnight
    assert entry["title"] == "Meeting"
    assert entry["event_time"] == datetime(2026, 8, 1, 22, 0, tzinfo=UTC)
    assert out["timeline_id"] is not None
    # each classifier read its own part, and nothing was drafted: the list and item were named
    called = [c["schema"] for c in scripted.calls]
    assert called == ["NotesClassification", "TimelineClassification"]
    block = out["task_block"]
    assert "notizen — erledigt: Notiz 'Einkaufsliste' angelegt: Brot." in block
    assert "timeline — erledigt: 'Meeting' eingetragen" in block


# --- block and markers ------------------------------------------------------------------


def test_every_outcome_has_its_line_and_its_instruction() -> None:
    from novaberg.agents.base import Correction

    results: list[Any] = [
        AgentResult("notizen", "Brot steht drauf.", "abgeschlossen"),
        AgentResult("timeline", None, "fehler", error="Wann soll 'Meeting' stattfinden?"),
        AgentResult(
            "direktiven",
            None,
            "abgelehnt",
            correction=Correction("Keine Regel.", "Klassifikation: rejected/x", "Sag 'immer'."),
        ),
        AgentResult("charakter_identitaet", "nichts", "dismissed"),
    ]
    block, cut = build_task_block(results)
    assert "1. notizen — erledigt: Brot steht drauf." in block
    assert "2. timeline — fehlgeschlagen: Wann soll 'Meeting' stattfinden?" in block
    assert "3. direktiven — nicht ausgeführt, nichts gespeichert: Keine Regel." in block
    assert "4. charakter_identitaet — vom Nutzer abgelehnt, nichts geändert" in block
    assert "Berichte in der Ich-Form" in block and "behaupte nicht, es sei erledigt" in block
    assert "Rückfrage" not in block and cut is True
    assert session_marker(results) == "[FEHLGESCHLAGEN]"
    assert not any(r.status == "rueckfrage" for r in results)
