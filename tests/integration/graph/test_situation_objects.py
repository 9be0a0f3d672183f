"""The situation's objects last beyond the 4 h bubble (seed 002 §3.2 row 4a) and the memory
anchor reads their bound entities (row 4b) — through the real CharacterGraph (scripted
model, real Redis and PostgreSQL)."""

from __future__ import annotations

from typing import Any

from graph_helpers import anchor_groups, script_human
from test_character_graph import PAIR, script_character, user_turn

from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store import keys
from novaberg.store.entities import resolve_entities
from novaberg.store.pipeline_log import read_turn

UTTERANCE = "Mein Fahrrad quietscht."


def bike(colour: str) -> dict[str, Any]:
    return {
        "gegenstand": "das quietschende Fahrrad",
        "nutzerziel": "das Quietschen loswerden",
        "objekte": [
            {"name": "Fahrrad", "eigenschaften": {"farbe": colour}, "offen": ["alter"]},
        ],
        "objekt_bezug": "Fahrrad",
        "angebot": "",
        "angebot_angenommen": False,
        "offen": [],
    }


def situation_prompts(scripted: ScriptedLLM) -> list[str]:
    return [c["prompt"] for c in scripted.calls if c["schema"] == "SituationReading"]


async def stored_values(deps: GraphDeps) -> list[tuple[str, str, str, str | None]]:
    async with deps.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT e.eigenschaft, e.wert, e.turn_id, e.abgeloest_von_turn"
            " FROM sachlage_eigenschaft e JOIN sachlage_objekt o ON o.id = e.objekt_id"
            " WHERE o.user_id = %s AND o.character_id = %s ORDER BY e.id",
            (PAIR.user_id, PAIR.character_id),
        )
        rows = await cur.fetchall()
    return [(r["eigenschaft"], r["wert"], r["turn_id"], r["abgeloest_von_turn"]) for r in rows]


async def situation_log(
    deps: GraphDeps, turn_id: str, node: str = "situation_node"
) -> dict[str, Any]:
    await deps.log.flush()  # type: ignore[union-attr]
    rows = [r for r in await read_turn(deps.pool, turn_id) if r["node"] == node]
    assert rows, f"{node} writes a pipeline_log row"
    content: dict[str, Any] = rows[-1]["inhalt"]
    return content


async def test_values_are_stored_superseded_and_offered_after_the_bubble_expired(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)

    # turn 1: the colour is understood and stored
    scripted.add(".*", bike("rot"), schema="SituationReading")
    _, _, first = await user_turn(runtime, UTTERANCE)
    assert await stored_values(deps) == [("farbe", "rot", first["turn_id"], None)]
    log = await situation_log(deps, first["turn_id"])
    assert log["neue_werte"] == ["Fahrrad.farbe"] and log["abgeloest"] == []
    assert log["gebunden"] == ["Fahrrad"]

    # turn 2: a new colour supersedes the old one, which stays as history
    scripted.add(".*", bike("blau"), schema="SituationReading")
    _, _, second = await user_turn(runtime, "Es ist übrigens blau, nicht rot.")
    assert await stored_values(deps) == [
        ("farbe", "rot", first["turn_id"], second["turn_id"]),
        ("farbe", "blau", second["turn_id"], None),
    ]
    log = await situation_log(deps, second["turn_id"])
    assert log["neue_werte"] == ["Fahrrad.farbe"] and log["abgeloest"] == ["Fahrrad.farbe"]
    # the bubble was there: nothing stored was offered
    assert "[GESPEICHERTE WERTE]" not in situation_prompts(scripted)[-1]

    # the 4 h bubble expires: the next call is offered the stored, current value
    await deps.redis.delete(keys.situation(PAIR), keys.situation_history(PAIR))
    scripted.add(".*", bike("blau"), schema="SituationReading")
    _, _, third = await user_turn(runtime, "Was war nochmal mit meinem Rad?")
    prompt = situation_prompts(scripted)[-1]
    assert "[BISHERIGER STAND]" not in prompt
    block = prompt.split("[GESPEICHERTE WERTE]", 1)[1].split("\n\n", 1)[0]
    assert "Objekt Fahrrad: farbe=blau" in block and "rot" not in block
    # the reading is Path 1's (it runs before the router): its row names what was offered
    reading_log = await situation_log(deps, third["turn_id"], "situation_reader")
    assert reading_log["angeboten"] == ["Fahrrad"]
    log = await situation_log(deps, third["turn_id"])
    # the same value again writes nothing
    assert log["neue_werte"] == [] and len(await stored_values(deps)) == 2


async def test_the_anchor_reads_the_bound_entity_not_the_name(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """The object "Fahrrad" is bound to the pair's entity "Omas Fahrrad"; a memory of that
    entity that never says "Fahrrad" is anchored, also on a turn whose situation call
    failed (the binding is stored)."""
    (entity,) = (await resolve_entities(deps.pool, PAIR, ["Omas Fahrrad"])).ids
    vector = (await deps.model.embed(["x"]))[0]
    async with deps.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO lzg_knoten (user_id, character_id, inhalt, embedding, gewicht_roh,"
            " gewicht_absolut, gewicht_decay, themen, entitaet_ids)"
            " VALUES (%s, %s, %s, %s, 1, 3, 3, %s, %s)",
            (
                PAIR.user_id,
                PAIR.character_id,
                "Grete hat es ihr 1998 geschenkt.",
                vector,
                ["geschenk"],
                [entity],
            ),
        )
    script_human(scripted)
    script_character(scripted)
    scripted.add(".*", bike("rot"), schema="SituationReading")
    _, final, first = await user_turn(runtime, UTTERANCE)

    assert final["object_entities"] == [{"objekt": "Fahrrad", "entitaet_id": entity}]
    groups = anchor_groups(final)
    assert list(groups) == ["Fahrrad"]
    assert "Grete hat es ihr 1998 geschenkt." in groups["Fahrrad"]
    assert "Fahrrad: farbe = rot" in final["memory_context_composer"]
    log = await situation_log(deps, first["turn_id"])
    assert log["objekt_entitaeten"] == [{"objekt": "Fahrrad", "entitaet_id": entity}]

    # a failed situation call: the kept bubble's acute object keeps its stored binding
    scripted.add(".*", schema="SituationReading", fault="timeout")
    _, final, second = await user_turn(runtime, UTTERANCE)
    assert final["situation"]["stand"] == "ausfall"
    assert final["object_entities"] == [{"objekt": "Fahrrad", "entitaet_id": entity}]
    groups = anchor_groups(final)
    assert list(groups) == ["Fahrrad"] and groups["Fahrrad"][0] == "Fahrrad: farbe = rot"
    log = await situation_log(deps, second["turn_id"])
    assert log["entitaeten"] == ["Fahrrad"]
