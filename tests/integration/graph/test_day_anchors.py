"""Day anchors and the salience guard through the real graphs (docs/behaviour/memory.md#day-anchors,
nodes.md#salience): a segment's `zeitausdruck_roh` anchors its memory to a day; "was war
am Dienstag?" then brings that day's memories into the turn, and another day others.
When a task agent carried out a task this turn, salience plans no timeline write."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from graph_helpers import PERCEPTION_OK, SCORE_OK
from test_character_graph import script_character

from novaberg.agents.registry import discover_agents
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime, TurnResult, run_turn_inprocess
from novaberg.llm.scripted import ScriptedLLM
from novaberg.memory.search.hybrid import search_memory
from novaberg.memory.search.results import LAYER_LONG_TERM, LAYER_SHORT_TERM, SearchOptions
from novaberg.pair import Pair
from novaberg.store.long_term_nodes import NewNode, insert_node
from novaberg.store.pipeline_log import read_turn
from novaberg.store.short_term import ShortTermStore
from novaberg.store.short_term_fields import EntryFields

PAIR = Pair("meister", "nova")
BERLIN = ZoneInfo("Europe/Berlin")
# the graph conftest's clock: Monday 21.09.2026, 16:13 in Berlin
DENTIST = "Am Dienstag war ich beim Zahnarzt."
CINEMA = "Am Sonntag war ich im Kino."


def _score(expression: str, themes: list[str]) -> dict[str, Any]:
    return {**SCORE_OK, "themen": themes, "entitaeten_roh": [], "zeitausdruck_roh": expression}


def script_memories(scripted: ScriptedLLM) -> None:
    """Both utterances: perception, their scores (with the time expression the scorer
    read) and their condensed cores."""
    script_character(scripted)
    scripted.add(r"Verdichte die Äußerung des Nutzers.*Zahnarzt", "Der Nutzer war beim Zahnarzt.")
    scripted.add(r"Verdichte die Äußerung des Nutzers.*Kino", "Der Nutzer war im Kino.")
    scripted.add(".*", PERCEPTION_OK, schema="PerceptionResult")
    scripted.add(".*", _score("", ["alltag"]), schema="SalienceScore")
    user = r"Äußerung des Nutzers unter \[TEXT\].*"
    scripted.add(user + "Zahnarzt", _score("am Dienstag", ["zahnarzt"]), schema="SalienceScore")
    scripted.add(user + "Kino", _score("am Sonntag", ["kino"]), schema="SalienceScore")


async def _anchors(deps: GraphDeps) -> dict[int, datetime]:
    async with deps.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT id, event_time FROM timeline WHERE user_id = %s"
            " AND event_type = 'erinnerungs_anker' ORDER BY event_time",
            (PAIR.user_id,),
        )
        return {int(r["id"]): r["event_time"] for r in await cur.fetchall()}


async def _writes(deps: GraphDeps, turn_id: str) -> list[tuple[str, str, str]]:
    async with deps.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT quelle, ziel, ergebnis FROM pending_writes_log WHERE turn_id = %s ORDER BY id",
            (turn_id,),
        )
        return [(r["quelle"], r["ziel"], r["ergebnis"]) for r in await cur.fetchall()]


async def _node_row(deps: GraphDeps, turn: TurnResult, node: str, source: str) -> dict[str, Any]:
    await deps.log.flush()  # type: ignore[union-attr]
    rows = [
        r
        for r in await read_turn(deps.pool, turn.turn_id)
        if r["node"] == node and r["quelle"] == source and r["art"] == "node"
    ]
    assert rows, f"no {source}/{node} row"
    return dict(rows[-1]["inhalt"])


FILLING = "Der Nutzer bekam beim Zahnarzt eine Füllung."


async def _long_term(deps: GraphDeps, text: str, timeline_id: int) -> int:
    """A long-term node of the pair linked to `timeline_id`, said now (Monday)."""
    said = datetime.fromtimestamp(deps.clock(), UTC)
    (vector,) = await deps.model.embed([text])
    async with deps.pool.connection() as conn:
        ident = await insert_node(
            conn,
            NewNode(
                source_key=f"kzg:test:{timeline_id}",
                user_id=PAIR.user_id,
                character_id=PAIR.character_id,
                observer="user",
                text=text,
                embedding=vector,
                dimension="kontext",
                raw_weight=1.0,
                absolute_weight=1.0,
                decayed_weight=1.0,
                frequency=1,
                created_at=said,
                reinforced_at=said,
                short_term_created_at=said,
                timeline_id=timeline_id,
            ),
        )
    assert ident is not None
    return ident


def _day_entries(turn: TurnResult) -> list[str]:
    return [
        e["inhalt"] for e in turn.character_state["memory_entries_raw"] if e.get("subtyp") == "tag"
    ]


async def test_a_named_day_anchors_the_memory_and_a_question_about_that_day_finds_it(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    runtime = GraphRuntime(deps)
    script_memories(scripted)
    dentist = await run_turn_inprocess(runtime, PAIR, DENTIST)
    cinema = await run_turn_inprocess(runtime, PAIR, CINEMA)

    anchors = await _anchors(deps)
    days = [moment.astimezone(BERLIN) for moment in anchors.values()]
    assert days == [
        datetime(2026, 9, 15, tzinfo=BERLIN),  # the Tuesday before Monday the 21st
        datetime(2026, 9, 20, tzinfo=BERLIN),
    ]
    tuesday, sunday = anchors
    # salience planned the anchor, the dispatcher made it and says which row it is
    assert ("human", "timeline", f"anker:{tuesday}") in await _writes(deps, dentist.turn_id)
    assert ("human", "timeline", f"anker:{sunday}") in await _writes(deps, cinema.turn_id)
    salience = await _node_row(deps, dentist, "salience", "human")
    assert salience["anker"] == ["2026-09-15"]

    entries = await ShortTermStore(deps.redis).entries(PAIR, with_ttl=False)
    linked = {EntryFields.of(e.fields).text: EntryFields.of(e.fields).timeline_id for e in entries}
    assert linked["Der Nutzer war beim Zahnarzt."] == tuesday
    assert linked["Der Nutzer war im Kino."] == sunday

    # a long-term memory of that Tuesday (promoted from an anchored entry: it keeps the row)
    await _long_term(deps, FILLING, tuesday)

    asked = await run_turn_inprocess(runtime, PAIR, "Was war am Dienstag?")
    assert _day_entries(asked) == [
        "Am Di 15.09.2026: Der Nutzer war beim Zahnarzt.",
        f"Am Di 15.09.2026: {FILLING}",
    ]
    enricher = await _node_row(deps, asked, "enricher", "character")
    assert enricher["tag_erinnerungen"] == {"tag": "2026-09-15", "kzg": 1, "lzg": 1}
    assert "Zahnarzt" in asked.character_state["memory_context"]

    other = await run_turn_inprocess(runtime, PAIR, "Und was war am Sonntag?")
    assert _day_entries(other) == ["Am So 20.09.2026: Der Nutzer war im Kino."]

    plain = await run_turn_inprocess(runtime, PAIR, "Wie geht es dir?")
    assert _day_entries(plain) == []
    assert "tag_erinnerungen" not in await _node_row(deps, plain, "enricher", "character")


async def test_the_memory_search_narrows_to_the_day_a_memory_is_about(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """`novaberg memory search` and the thinker's tool: short- and long-term memories
    of Tuesday, both said on Monday, are found by Tuesday and not by Sunday."""
    runtime = GraphRuntime(deps)
    script_memories(scripted)
    await run_turn_inprocess(runtime, PAIR, DENTIST)
    await run_turn_inprocess(runtime, PAIR, CINEMA)
    tuesday, _ = await _anchors(deps)
    await _long_term(deps, FILLING, tuesday)
    memory = SearchOptions(layers=frozenset({LAYER_SHORT_TERM, LAYER_LONG_TERM}))

    async def found(query: str) -> list[str]:
        now = datetime.fromtimestamp(deps.clock(), UTC)
        result = await search_memory(
            deps.redis, deps.pool, deps.model, PAIR, query, now=now, tz=BERLIN, options=memory
        )
        assert result.window is not None
        return sorted(hit.text for hit in result.hits)

    assert await found("Zahnarzt am Dienstag") == [FILLING, "Der Nutzer war beim Zahnarzt."]
    assert await found("Zahnarzt am Sonntag") == []
    assert await found("Kino am Sonntag") == ["Der Nutzer war im Kino."]


async def test_the_same_day_is_anchored_once(deps: GraphDeps, scripted: ScriptedLLM) -> None:
    runtime = GraphRuntime(deps)
    script_memories(scripted)
    await run_turn_inprocess(runtime, PAIR, DENTIST)
    await run_turn_inprocess(runtime, PAIR, "Am Dienstag war ich außerdem beim Zahnarzt Müller.")
    assert len(await _anchors(deps)) == 1


TASK = "Trag ein: Zahnarzt am Donnerstag um 14 Uhr"


def script_appointment(scripted: ScriptedLLM, *, agent: bool) -> None:
    """A turn about Thursday's dentist, routed to the timeline agent or not; every scored
    text (the user's and Nova's answer) names Thursday."""
    script_character(scripted)
    scripted.add(".*", PERCEPTION_OK, schema="PerceptionResult")
    scripted.add(".*", _score("am Donnerstag", ["zahnarzt"]), schema="SalienceScore")
    if agent:
        scripted.add(
            r"Trag ein",
            {"management_action": "agent", "management_target": "timeline"},
            schema="RouterDecision",
        )
        scripted.add(
            ".*",
            {
                "action": "create",
                "target": "Zahnarzt",
                "zeitausdruck": "am Donnerstag um 14 Uhr",
                "normalisiert": "create: Termin 'Zahnarzt' am Donnerstag 14 Uhr",
            },
            schema="TimelineClassification",
        )


async def test_salience_leaves_timeline_writes_to_an_agent_that_acted(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_appointment(scripted, agent=True)
    runtime = GraphRuntime(deps, registry=discover_agents())
    turn = await run_turn_inprocess(runtime, PAIR, TASK)
    results = [getattr(r, "status", None) for r in turn.character_state["agent_results"]]
    assert results == ["abgeschlossen"]
    appointment = turn.character_state["timeline_id"]

    writes = await _writes(deps, turn.turn_id)
    character = [target for source, target, _ in writes if source == "character"]
    assert character == ["kzg"]  # Nova's answer: no anchor of its own
    salience = await _node_row(deps, turn, "salience", "character")
    assert salience["waechter"] == {"agenten": ["timeline"], "unterdrueckt": ["timeline"]}
    # her memory of the answer links to the appointment the agent wrote
    entries = await ShortTermStore(deps.redis).entries(PAIR, with_ttl=False)
    nova = [EntryFields.of(e.fields) for e in entries if e.fields.get("beobachter") == "assistant"]
    assert [row.timeline_id for row in nova] == [appointment]


async def test_without_an_agent_salience_anchors_the_answer_too(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_appointment(scripted, agent=False)
    runtime = GraphRuntime(deps, registry=discover_agents())
    turn = await run_turn_inprocess(runtime, PAIR, TASK)
    assert not turn.character_state.get("agent_results")

    writes = await _writes(deps, turn.turn_id)
    character = [target for source, target, _ in writes if source == "character"]
    assert character == ["kzg", "timeline"]
    salience = await _node_row(deps, turn, "salience", "character")
    assert "waechter" not in salience and salience["anker"] == ["2026-09-24"]
