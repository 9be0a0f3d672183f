"""What the situation understands steers the router, and an impulse is said in the context
that caused it (docs/behaviour/nodes.md#situation): the real HumanGraph and CharacterGraph,
scripted model, real Redis and PostgreSQL.

- Path 1 makes the situation's call next to perception; the CharacterGraph's situation node
  writes it forward before the router, which sees the acute objects as `[LAGE]`.
- An impulse's bridge to its triggering turn reaches the composer as `[SACHLAGE-BRUECKE]`;
  without a usable `ausloeser_turn_id` the trigger is found by vector search in the
  archive and marked so.
"""

from __future__ import annotations

from typing import Any

from graph_helpers import script_human
from test_character_graph import PAIR, run_character, script_character, user_turn
from test_understanding import SITUATION_BELLO, composer_calls, script_situation

from novaberg.cli.turn import understanding_lines
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store import keys
from novaberg.store.pipeline_log import read_turn

SITUATION_RENT: dict[str, Any] = {
    **SITUATION_BELLO,
    "objekte": [
        {"name": "Miete", "eigenschaften": {"hoehe": "900 Euro"}, "offen": []},
        {"name": "Bello", "eigenschaften": {"rasse": "Dackel"}, "offen": ["alter"]},
    ],
    "objekt_bezug": "Miete",
}


def router_prompts(scripted: ScriptedLLM) -> list[str]:
    return [c["prompt"] for c in scripted.calls if c["schema"] == "RouterDecision"]


def lage_block(prompt: str) -> str:
    """The `[LAGE]` block's lines after its guidance line ("" when there is none)."""
    if "[LAGE]" not in prompt:
        return ""
    block = prompt.split("[LAGE]\n", 1)[1].split("\n\n", 1)[0]
    return "\n".join(block.splitlines()[1:])


async def rows_of(deps: GraphDeps, turn_id: str) -> dict[str, dict[str, Any]]:
    await deps.log.flush()  # type: ignore[union-attr]
    return {row["node"]: row for row in await read_turn(deps.pool, turn_id) if row["art"] == "node"}


# --- item 1: the situation before the router ----------------------------------------------------


async def test_the_router_sees_the_situations_acute_objects_as_lage(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    script_situation(scripted)
    nodes, _, payload = await user_turn(runtime, "Darf Bello mit in die neue Wohnung?")

    # the situation is written forward before the router, from Path 1's reading
    assert nodes.index("situation_node") < nodes.index("router")
    assert payload["sachlage_lesung"]["lesung"]["objekt_bezug"] == "Wohnung"
    assert lage_block(router_prompts(scripted)[-1]) == (
        "- Bello: offen, 1 bekannt, 1 offen (alter)\n"
        "- Wohnung (Bezug der Äußerung): offen, 1 bekannt, 2 offen (miete, haustiere)"
    )
    rows = await rows_of(deps, payload["turn_id"])
    assert rows["situation_node"]["modell_aufrufe"] == 0
    assert rows["situation_node"]["inhalt"]["quelle"] == "pfad1"
    assert rows["router"]["inhalt"]["lage"] == ["Bello", "Wohnung"]
    human_rows = [
        r for r in await read_turn(deps.pool, payload["turn_id"]) if r["quelle"] == "human"
    ]
    (reading_row,) = [r for r in human_rows if r["node"] == "situation_reader"]
    assert reading_row["modell_aufrufe"] == 1
    assert reading_row["inhalt"]["bezug"] == "Wohnung"
    # `novaberg turn` prints it under the stages
    lines = understanding_lines(await read_turn(deps.pool, payload["turn_id"]))
    assert "situation reading (path 1): objects ['Bello', 'Wohnung'], about Wohnung" in lines
    assert "situation: neu from pfad1, acute ['Bello', 'Wohnung']" in lines
    assert "router saw [LAGE]: Bello, Wohnung" in lines

    # the understanding moves on: the router's [LAGE] follows it
    script_situation(scripted, SITUATION_RENT)
    await user_turn(runtime, "Und die Miete für die Wohnung mit Bello?")
    assert lage_block(router_prompts(scripted)[-1]) == (
        "- Miete (Bezug der Äußerung): geklaert, 1 bekannt, 0 offen\n"
        "- Bello: offen, 1 bekannt, 1 offen (alter)"
    )

    # nothing acute: no [LAGE] block (a plain message's prompt does not grow)
    script_situation(scripted, {**SITUATION_BELLO, "objekte": [], "objekt_bezug": ""})
    await user_turn(runtime, "Wie geht's dir?")
    assert "[LAGE]" not in router_prompts(scripted)[-1]


async def test_without_path_1s_reading_the_situation_node_calls_itself(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    script_situation(scripted)
    _, _, payload = await user_turn(runtime, "Darf Bello mit in die neue Wohnung?")
    calls = sum(1 for c in scripted.calls if c["schema"] == "SituationReading")
    event = {k: v for k, v in payload.items() if k != "sachlage_lesung"}
    event["turn_id"] = "ohne-lesung"
    nodes, final = await run_character(runtime, event)
    assert sum(1 for c in scripted.calls if c["schema"] == "SituationReading") == calls + 1
    assert nodes.index("situation_node") < nodes.index("router")
    assert "[LAGE]" in router_prompts(scripted)[-1]
    assert final["situation"]["stand"] == "neu"
    rows = await rows_of(deps, "ohne-lesung")
    assert rows["situation_node"]["inhalt"]["quelle"] == "eigener_aufruf"


# --- item 3: the bridge of an impulse ----------------------------------------------------------

THOUGHT = "Ich suche für Bello eine neue Wohnung, in die er darf."


def impulse(trigger: str | None, turn_id: str = "impuls-1") -> dict[str, Any]:
    return {
        "turn_id": turn_id,
        "eigener_gedanke": THOUGHT,
        "reiz_herkunft": "eigener_impuls",
        "gedanke_arousal": 0.5,
        "ausloeser_turn_id": trigger,
    }


def bridge_block(prompt: str) -> str:
    if "[SACHLAGE-BRUECKE]" not in prompt:
        return ""
    return prompt.split("[SACHLAGE-BRUECKE]\n", 1)[1].split("\n\n", 1)[0]


async def test_the_composer_says_an_impulse_in_its_triggering_context(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    script_situation(scripted)
    _, _, first = await user_turn(runtime, "Darf Bello mit in die neue Wohnung?")
    assert bridge_block(composer_calls(scripted)[-1]["prompt"]) == ""  # a user turn: none

    _, final = await run_character(runtime, impulse(first["turn_id"]), source="character")
    assert final["situation_bridge"]["gefunden_durch"] == "ausloeser_turn_id"
    block = bridge_block(composer_calls(scripted)[-1]["prompt"])
    assert "Damals ging es um: Bello soll mit umziehen" in block
    assert "Dinge damals: Bello, Wohnung" in block
    assert "Noch derselbe Gegenstand: ja" in block
    assert "Ähnlichkeit" not in block
    rows = await rows_of(deps, "impuls-1")
    assert rows["composer"]["inhalt"]["bruecke"] == {
        "ausloeser_turn_id": first["turn_id"],
        "gefunden_durch": "ausloeser_turn_id",
    }


async def test_an_expired_or_missing_trigger_is_found_by_similarity_and_marked(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    script_situation(scripted)
    _, _, first = await user_turn(runtime, "Darf Bello mit in die neue Wohnung?")
    script_situation(scripted, {**SITUATION_BELLO, "objekte": [], "objekt_bezug": ""})
    await user_turn(runtime, "Wie war eigentlich dein Wochenende?")
    # hours later the per-turn record has expired
    await deps.redis.delete(keys.situation_history(PAIR))

    for trigger, turn_id in ((first["turn_id"], "impuls-abgelaufen"), (None, "impuls-ohne")):
        _, final = await run_character(runtime, impulse(trigger, turn_id), source="character")
        link = final["situation_bridge"]
        assert link["gefunden"] is True and link["gefunden_durch"] == "aehnlichkeit"
        assert link["ausloeser_turn_id"] == first["turn_id"]  # not the weekend turn
        assert link["gemeldete_ausloeser_turn_id"] == trigger
        assert link["ausloeser_text"] == "Darf Bello mit in die neue Wohnung?"
        assert link["aehnlichkeit"] >= 0.3
        block = bridge_block(composer_calls(scripted)[-1]["prompt"])
        assert "Person A sagte damals" in block
        assert "„Darf Bello mit in die neue Wohnung?“" in block
        assert "(Der Zusammenhang ist nach Ähnlichkeit gefunden, nicht sicher.)" in block
        row = (await rows_of(deps, turn_id))["situation_node"]["inhalt"]
        assert row["bruecke_durch"] == "aehnlichkeit"
        assert row["ausloeser_turn_id"] == first["turn_id"]
        lines = understanding_lines(await read_turn(deps.pool, turn_id))
        assert f"composer [SACHLAGE-BRUECKE]: {first['turn_id']} by aehnlichkeit" in lines


async def test_an_unrelated_archive_gives_no_bridge(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    await user_turn(runtime, "Wie war eigentlich dein Wochenende?")
    _, final = await run_character(runtime, impulse(None), source="character")
    assert final["situation_bridge"]["gefunden"] is False
    assert "[SACHLAGE-BRUECKE]" not in composer_calls(scripted)[-1]["prompt"]
