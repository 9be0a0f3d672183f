"""Knowledge gaps through the real CharacterGraph: an answer admitting one leaves a
`wissensluecken` task; later turns are offered it (and the stack entries made of gaps) and
the answer that takes one up closes it (uptake hook)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, cast

from graph_helpers import script_human
from test_character_graph import PAIR, script_character, user_turn

from novaberg.graph.character_graph import build_character_graph
from novaberg.graph.contract import GraphDeps
from novaberg.graph.knowledge_gaps import open_questions
from novaberg.graph.nodes.uptake import uptake
from novaberg.graph.runner import GraphRuntime
from novaberg.graph.state import ConversationState
from novaberg.impulses import shadow_queue
from novaberg.impulses import stack as impulse_stack
from novaberg.impulses.shadow_queue import ShadowTask
from novaberg.impulses.stack import StackEntry
from novaberg.impulses.turn_tasks import task_question
from novaberg.llm.scripted import ScriptedLLM

QUESTION = "Wie hoch ist eigentlich der Mount Everest?"


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


async def test_a_gap_admitted_is_offered_and_closed_when_an_answer_takes_it_up(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted, answer="Das weiß ich leider nicht genau.")
    _, _, payload = await user_turn(runtime, QUESTION)
    [gap] = await _gaps(deps)
    assert gap["kontext"] == QUESTION and gap["bezug_id"] == payload["turn_id"]
    assert gap["grund"].startswith("nicht gewusst:")

    # an unrelated answer: offered, not taken up, the gap stays
    script_character(scripted, answer="Erzähl mir lieber von deinem Wochenende!")
    await user_turn(runtime, "Egal. Was machst du so?")
    first = (await _uptake_rows(deps))[-1]
    assert first["angeboten"] == 1 and first["aufgegriffen"] is False
    assert len(await _gaps(deps)) == 1

    # the answer takes the open question up: the hook closes the task
    script_character(scripted, answer=task_question(gap))
    await user_turn(runtime, "Und, weißt du es inzwischen?")
    taken = (await _uptake_rows(deps))[-1]
    assert taken["aufgegriffen"] is True and taken["frage_id"] == f"auftrag-{gap['id']}"
    assert await _gaps(deps) == []


async def test_stack_entries_of_gaps_are_offered_and_leave_when_taken_up(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    vector = (await deps.model.embed(["Everest"]))[0]
    gap = StackEntry("wissensluecken", "Everest", "Der Mount Everest ist 8849 Meter hoch.", vector)
    other = StackEntry("nachfragen", "Streit", "Wie geht es mit dem Streit?", vector)
    await impulse_stack.push(deps.redis, PAIR, gap)
    await impulse_stack.push(deps.redis, PAIR, other)
    async with deps.pool.connection() as conn:
        offers = await open_questions(deps, PAIR, conn)
    assert [o["id"] for o in offers] == [f"stapel-{gap.id}"], "only knowledge entries"

    script_human(scripted)
    script_character(scripted, answer="Everest: Der Mount Everest ist 8849 Meter hoch.")
    await user_turn(runtime, QUESTION)
    left = [e.id for e in await impulse_stack.entries(deps.redis, PAIR)]
    assert left == [other.id], "the conversation covered it: no impulse needed"


async def test_uptake_reads_its_offers_and_writes_its_row_on_one_connection(
    deps: GraphDeps, pg_trips: Any
) -> None:
    """Nothing offered: the gaps are read and the row written on one checkout. Offered:
    the connection is given back while the answer is embedded, the row written after."""
    build_character_graph(deps)  # registers the knowledge gaps as an offer source
    state = cast(
        ConversationState,
        {
            "user_id": PAIR.user_id,
            "character_id": PAIR.character_id,
            "turn_id": "t-1",
            "response": "Heute scheint die Sonne.",
        },
    )
    await uptake(state, deps)
    assert pg_trips.checkouts == 1 and len(pg_trips.trips) == 2, pg_trips.trips
    assert (await _uptake_rows(deps))[-1]["angeboten"] == 0

    await shadow_queue.push(
        deps.pool,
        ShadowTask(PAIR.user_id, PAIR.character_id, "wissensluecken", "Everest", QUESTION),
        datetime.now(UTC),
    )
    pg_trips.checkouts, pg_trips.trips = 0, []
    await uptake(cast(ConversationState, {**state, "turn_id": "t-2"}), deps)
    assert pg_trips.checkouts == 2 and len(pg_trips.trips) == 2, pg_trips.trips
    assert (await _uptake_rows(deps))[-1]["angeboten"] == 1
