"""Knowledge gaps through the real CharacterGraph: an answer admitting one leaves a
`wissensluecken` task; later turns offer it (and the stack entries made of gaps) to the
composer as `[OFFENE-FRAGEN]`, the uptake node measures the answer against exactly what was
offered, and the answer that takes one up closes it (uptake hook)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from graph_helpers import script_human
from test_character_graph import PAIR, script_character, user_turn

from novaberg.graph.character_graph import build_character_graph
from novaberg.graph.contract import GraphDeps
from novaberg.graph.knowledge_gaps import MAX_OFFERS, OFFER_CHARS
from novaberg.graph.nodes.uptake import uptake
from novaberg.graph.runner import GraphRuntime
from novaberg.graph.state import ConversationState
from novaberg.impulses import shadow_queue
from novaberg.impulses import stack as impulse_stack
from novaberg.impulses.shadow_queue import ShadowTask
from novaberg.impulses.stack import StackEntry
from novaberg.impulses.turn_tasks import task_question
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store.pipeline_log import read_turn

QUESTION = "Wie hoch ist eigentlich der Mount Everest?"
BLOCK = "[OFFENE-FRAGEN]"


async def _uptake_rows(deps: GraphDeps) -> list[dict]:  # type: ignore[type-arg]
    async with deps.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT angeboten, aufgegriffen, frage_id, cosinus FROM offene_fragen_aufgriff"
            " ORDER BY id"
        )
        return list(await cur.fetchall())


async def _gaps(deps: GraphDeps) -> list[dict]:  # type: ignore[type-arg]
    rows = await shadow_queue.for_pair(deps.pool, PAIR.user_id, PAIR.character_id)
    return [r for r in rows if r["aufgabe"] == "wissensluecken"]


def _composer_prompts(scripted: ScriptedLLM) -> list[str]:
    return [
        str(c["prompt"])
        for c in scripted.calls
        if c["schema"] is None and "Du bereitest den Inhalt" in c["prompt"]
    ]


def _block(prompt: str) -> list[str]:
    """The lines of the prompt's `[OFFENE-FRAGEN]` block ([] when there is none)."""
    if BLOCK not in prompt:
        return []
    body = prompt.split(BLOCK, 1)[1].split("\n\n", 1)[0]
    return [line for line in body.splitlines() if line.startswith("- ")]


async def _push_gap(deps: GraphDeps, topic: str, context: str, salience: float = 0.6) -> int:
    row_id, _ = await shadow_queue.push(
        deps.pool,
        ShadowTask(
            PAIR.user_id, PAIR.character_id, "wissensluecken", topic, context, salience=salience
        ),
        datetime.now(UTC),
    )
    return row_id


async def test_a_gap_admitted_is_offered_and_closed_when_an_answer_takes_it_up(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted, answer="Das weiß ich leider nicht genau.")
    _, _, payload = await user_turn(runtime, QUESTION)
    [gap] = await _gaps(deps)
    assert gap["kontext"] == QUESTION and gap["bezug_id"] == payload["turn_id"]
    assert gap["grund"].startswith("nicht gewusst:")
    assert _block(_composer_prompts(scripted)[-1]) == [], "nothing was open yet"

    # an unrelated answer: offered to the composer, not taken up, the gap stays
    script_character(scripted, answer="Erzähl mir lieber von deinem Wochenende!")
    await user_turn(runtime, "Egal. Was machst du so?")
    assert _block(_composer_prompts(scripted)[-1]) == [f"- {task_question(gap)}"]
    first = (await _uptake_rows(deps))[-1]
    assert first["angeboten"] == 1 and first["aufgegriffen"] is False
    assert len(await _gaps(deps)) == 1

    # the answer takes the open question up: the hook closes the task
    script_character(scripted, answer=task_question(gap))
    _, _, last = await user_turn(runtime, "Und, weißt du es inzwischen?")
    taken = (await _uptake_rows(deps))[-1]
    assert taken["aufgegriffen"] is True and taken["frage_id"] == f"auftrag-{gap['id']}"
    assert await _gaps(deps) == []
    # both nodes' rows say what was offered (novaberg turn, the turn inspector)
    await deps.log.flush()  # type: ignore[union-attr]
    rows = {r["node"]: r["inhalt"] for r in await read_turn(deps.pool, last["turn_id"])}
    assert rows["composer"]["offene_fragen"] == [f"auftrag-{gap['id']}"]
    assert rows["uptake"]["angebot_ids"] == [f"auftrag-{gap['id']}"]


async def test_stack_entries_of_gaps_are_offered_and_leave_when_taken_up(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    vector = (await deps.model.embed(["Everest"]))[0]
    gap = StackEntry("wissensluecken", "Everest", "Der Mount Everest ist 8849 Meter hoch.", vector)
    other = StackEntry("nachfragen", "Streit", "Wie geht es mit dem Streit?", vector)
    await impulse_stack.push(deps.redis, PAIR, gap)
    await impulse_stack.push(deps.redis, PAIR, other)

    script_human(scripted)
    script_character(scripted, answer="Everest: Der Mount Everest ist 8849 Meter hoch.")
    await user_turn(runtime, QUESTION)
    assert _block(_composer_prompts(scripted)[-1]) == [
        "- Everest: Der Mount Everest ist 8849 Meter hoch."
    ], "only knowledge entries are offered"
    left = [e.id for e in await impulse_stack.entries(deps.redis, PAIR)]
    assert left == [other.id], "the conversation covered it: no impulse needed"


async def test_the_block_is_bounded_and_offers_the_best_questions(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """A few questions, best first, each short; what uptake measures is exactly those."""
    long_context = "Warum " + "sehr " * 60 + "lange Frage?"
    ids = [
        await _push_gap(deps, f"Thema {n}", long_context if n == 4 else f"Frage {n}?", 0.5 + n / 20)
        for n in range(5)
    ]
    script_human(scripted)
    script_character(scripted)
    _, final, payload = await user_turn(runtime, "Was machst du heute?")
    lines = _block(_composer_prompts(scripted)[-1])
    assert len(lines) == MAX_OFFERS
    assert lines[0].startswith("- Thema 4: Warum sehr") and len(lines[0]) <= OFFER_CHARS + 2
    assert lines[1:] == ["- Thema 3: Frage 3?", "- Thema 2: Frage 2?"]
    offered = [o["id"] for o in final["uptake_offers"]]
    assert offered == [f"auftrag-{i}" for i in (ids[4], ids[3], ids[2])]
    assert (await _uptake_rows(deps))[-1]["angeboten"] == MAX_OFFERS
    assert payload["turn_id"] == final["turn_id"]


async def test_uptake_measures_what_was_offered_not_what_is_stored(
    deps: GraphDeps, pg_trips: Any
) -> None:
    """The same answer and the same stored gap: offered nothing, uptake counts nothing;
    offered the gap, it is taken up; offered another question, it is not. One checkout per
    row, none while embedding."""
    build_character_graph(deps)  # registers the hook that closes a question taken up
    gap_id = await _push_gap(deps, "Everest", QUESTION)
    state = cast(
        ConversationState,
        {
            "user_id": PAIR.user_id,
            "character_id": PAIR.character_id,
            "turn_id": "t-1",
            "response": f"Everest: {QUESTION}",
        },
    )
    pg_trips.checkouts, pg_trips.trips = 0, []
    await uptake(state, deps)
    assert pg_trips.checkouts == 1, pg_trips.trips
    assert (await _uptake_rows(deps))[-1]["angeboten"] == 0, "stored, but never offered"

    offered = {"id": f"auftrag-{gap_id}", "frage": f"Everest: {QUESTION}", "quelle": "x"}
    other = {"id": "auftrag-999", "frage": "Welche Musik hört Person A gern?", "quelle": "x"}
    await uptake(
        cast(ConversationState, {**state, "turn_id": "t-2", "uptake_offers": [offered]}), deps
    )
    await uptake(
        cast(ConversationState, {**state, "turn_id": "t-3", "uptake_offers": [other]}), deps
    )
    with_gap, with_other = (await _uptake_rows(deps))[-2:]
    assert with_gap["aufgegriffen"] is True and with_gap["frage_id"] == f"auftrag-{gap_id}"
    assert with_other["angeboten"] == 1 and with_other["aufgegriffen"] is False
    assert await _gaps(deps) == [], "the gap offered and taken up is closed"
