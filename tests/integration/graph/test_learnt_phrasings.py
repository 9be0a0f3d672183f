"""Learnt phrasings as the second check of a task classification
(docs/behaviour/agents.md#learnt-phrasings): a word of the person's own, used for the same
action in carried-out tasks, is learnt after `verb_mapping_uses` uses and then changes the
check's `konfidenz`; the rows are capped per person and forgotten when unused."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from test_character_graph import script_character

from novaberg.agents.registry import discover_agents
from novaberg.agents.verb_mappings import learn_from_task, matching_phrasings, phrasings
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime, TurnResult, run_turn_inprocess
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store.pipeline_log import read_turn

PAIR = Pair("anna", "nova")
TASK = "Hau die Milch von der Einkaufsliste runter"
REMOVE = {
    "action": "remove_content",
    "target": "Einkaufsliste",
    "elemente": ["Milch"],
    "normalisiert": "remove_content: Milch von Notiz 'Einkaufsliste' entfernen",
}


def test_the_words_of_the_persons_own_are_the_phrasings() -> None:
    found = phrasings(TASK, REMOVE["normalisiert"], "Einkaufsliste")
    assert found == ["hau", "runter"]  # "die", "der": filler; "Milch", "Liste": the content
    keyword = phrasings(
        "Streich die Milch", "remove_content: Milch entfernen", "", skip=lambda w: w == "streich"
    )
    assert keyword == []


def script_notes(scripted: ScriptedLLM, classification: dict[str, Any]) -> None:
    script_character(scripted)
    scripted.add(
        r"Hau die Milch",
        {"management_action": "agent", "management_target": "notizen"},
        schema="RouterDecision",
    )
    scripted.add(r"Äußerung des Nutzers: Hau", classification, schema="NotesClassification")


async def _note(deps: GraphDeps) -> None:
    """The list with milk on it (again: every turn strikes it)."""
    async with deps.pool.connection() as conn:
        await conn.execute("DELETE FROM notizen WHERE user_id = %s", (PAIR.user_id,))
        await conn.execute(
            "INSERT INTO notizen (user_id, name, typ, text) VALUES (%s, %s, 'einkauf', %s)",
            (PAIR.user_id, "Einkaufsliste", "Milch, Eier, Brot"),
        )


async def _turn(deps: GraphDeps, runtime: GraphRuntime) -> dict[str, Any]:
    await _note(deps)
    return await _dispatch_row(deps, await run_turn_inprocess(runtime, PAIR, TASK))


async def _dispatch_row(deps: GraphDeps, turn: TurnResult) -> dict[str, Any]:
    await deps.log.flush()  # type: ignore[union-attr]
    rows = [
        r
        for r in await read_turn(deps.pool, turn.turn_id)
        if r["node"] == "agent_dispatch" and r["art"] == "node"
    ]
    assert len(rows) == 1
    return dict(rows[0]["inhalt"])


async def test_a_phrasing_used_three_times_raises_the_check(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_notes(scripted, REMOVE)
    runtime = GraphRuntime(deps, registry=discover_agents())

    checks = []
    for _ in range(deps.settings.verb_mapping_uses):
        row = await _turn(deps, runtime)
        assert row["status"] == "abgeschlossen"
        assert row["woerter_gezaehlt"] == {"woerter": ["hau", "runter"], "vergessen": 0}
        checks.append(row["klassifikation"])
    # no keyword of the notes agent in the wording: first nothing checks the model, then
    # the words being learnt agree with it a little
    assert [c["konfidenz"] for c in checks] == ["niedrig", "mittel", "mittel"]
    assert "gelernt" not in checks[0]
    assert checks[2]["gelernt"] == ["hau→remove_content ×2", "runter→remove_content ×2"]

    learnt = await _turn(deps, runtime)
    assert learnt["klassifikation"] == {
        "konfidenz": "hoch",
        "hinweise": [],
        "gelernt": ["hau→remove_content ×3", "runter→remove_content ×3"],
    }

    # the model now reads the same wording as another action: the learnt words disagree
    scripted.add(
        r"Äußerung des Nutzers: Hau",
        {**REMOVE, "action": "add_content", "normalisiert": "add_content: Milch hinzufügen"},
        schema="NotesClassification",
    )
    conflict = await _turn(deps, runtime)
    assert conflict["klassifikation"]["konfidenz"] == "konflikt"

    # another person's tasks taught nothing for this one
    assert await matching_phrasings(deps, "bert", "notizen", TASK) == []


def _task(words: list[str], action: str = "remove_content") -> dict[str, Any]:
    return {"aktion": action, "woerter": words}


async def test_the_cap_keeps_the_most_recently_used(deps: GraphDeps) -> None:
    now = [1_790_000_000.0]
    small = replace(
        deps,
        settings=deps.settings.model_copy(update={"verb_mapping_cap": 3, "verb_mapping_uses": 1}),
        clock=lambda: now[0],
    )
    for index, word in enumerate(["eins", "zwei", "drei", "vier", "fuenf"]):
        now[0] += 60
        learnt = await learn_from_task(small, PAIR.user_id, "notizen", _task([word]))
        assert learnt is not None and learnt.forgotten == (1 if index >= 3 else 0)
    async with deps.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT ausdruck FROM verb_mappings WHERE user_id = %s ORDER BY ausdruck",
            (PAIR.user_id,),
        )
        kept = [row["ausdruck"] for row in await cur.fetchall()]
    assert kept == ["drei", "fuenf", "vier"]


async def test_an_unused_phrasing_fades_and_is_forgotten(deps: GraphDeps) -> None:
    start = datetime(2026, 9, 21, tzinfo=UTC).timestamp()
    now = [start]
    timed = replace(deps, clock=lambda: now[0])
    for _ in range(deps.settings.verb_mapping_uses):
        await learn_from_task(timed, PAIR.user_id, "notizen", _task(["hau"]))
    assert [
        m.expression for m in await matching_phrasings(timed, PAIR.user_id, "notizen", TASK)
    ] == ["hau"]

    # unused for longer than verb_mapping_days: no longer a check, and gone at the next count
    now[0] = start + timedelta(days=deps.settings.verb_mapping_days + 1).total_seconds()
    assert await matching_phrasings(timed, PAIR.user_id, "notizen", TASK) == []
    learnt = await learn_from_task(timed, PAIR.user_id, "notizen", _task(["weg"]))
    assert learnt is not None and learnt.forgotten == 1
    async with deps.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT ausdruck, konfidenz FROM verb_mappings WHERE user_id = %s", (PAIR.user_id,)
        )
        rows = [(r["ausdruck"], r["konfidenz"]) for r in await cur.fetchall()]
    assert rows == [("weg", 1)]
