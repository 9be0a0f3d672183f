"""Task agents through the real graphs: router → planner → notes agent → question,
then the next user turn resumes without a router model call (seed 002 §6.2)."""

from __future__ import annotations

from novaberg.agents.pending import pending_question
from novaberg.agents.registry import discover_agents
from novaberg.graph.runner import GraphRuntime, run_turn_inprocess
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair

PAIR = Pair("anna", "nova")


async def test_shopping_list_question_then_yes_creates_it(deps, scripted: ScriptedLLM, db) -> None:  # type: ignore[no-untyped-def]
    runtime = GraphRuntime(deps, registry=discover_agents())
    scripted.add(
        r"Setz Milch auf die Einkaufsliste",
        {"management_action": "agent", "management_target": "notizen"},
        schema="RouterDecision",
    )
    scripted.add(
        r"Äußerung des Nutzers: Setz Milch",
        {"action": "add_content", "target": "Einkaufsliste", "elemente": ["Milch"]},
        schema="NotesClassification",
    )
    first = await run_turn_inprocess(runtime, PAIR, "Setz Milch auf die Einkaufsliste")
    assert "anlegen" in first.character_state["task_block"]
    pending = await pending_question(deps.redis, "anna")
    assert pending is not None and pending["agent_name"] == "notizen"
    async with db.connection() as conn:
        rows = await (await conn.execute("SELECT count(*) AS n FROM notizen")).fetchone()
    assert rows["n"] == 0

    router_calls = sum(1 for c in scripted.calls if c["schema"] == "RouterDecision")
    await run_turn_inprocess(runtime, PAIR, "ja")
    assert sum(1 for c in scripted.calls if c["schema"] == "RouterDecision") == router_calls
    async with db.connection() as conn:
        note = await (await conn.execute("SELECT name, text FROM notizen WHERE aktiv")).fetchone()
    assert note["name"] == "Einkaufsliste" and "Milch" in note["text"]
    assert await pending_question(deps.redis, "anna") is None
