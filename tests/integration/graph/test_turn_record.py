"""The raw turn (`turn_roh`) says afterwards how the turn went: what the memory was
searched with, and which judgement failed — the channels that carry it have this reader."""

from __future__ import annotations

from graph_helpers import script_human
from test_character_graph import script_character, user_turn

from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store.pipeline_log import read_turn


async def _raw_turn(deps: GraphDeps, turn_id: str) -> dict:
    await deps.log.flush()  # type: ignore[union-attr]
    (raw,) = [r for r in await read_turn(deps.pool, turn_id) if r["art"] == "turn_roh"]
    return dict(raw["inhalt"])


async def test_raw_turn_keeps_the_search_text_and_no_failure_on_a_clean_turn(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    _, final, payload = await user_turn(runtime, "Wie geht's dir heute?")
    raw = await _raw_turn(deps, payload["turn_id"])
    assert raw["suchtext"] == final["search_text"] != ""
    assert raw["suchtext_herkunft"] == final["search_text_source"] != ""
    assert "ausfaelle" not in raw
    assert "gedanke_level" not in raw  # a user turn: no impulse arousal to apply


async def test_raw_turn_names_the_router_and_the_judge_that_failed(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    scripted.add(".*", schema="RouterDecision", fault="malformed")
    scripted.add(".*", schema="EthicistVerdict", fault="malformed")
    _, final, payload = await user_turn(runtime, "Wie geht's dir heute?")
    assert final["router_failure"] and final["tribunal_failures"]
    raw = await _raw_turn(deps, payload["turn_id"])
    assert raw["ausfaelle"]["router"] == final["router_failure"]
    assert raw["ausfaelle"]["tribunal"] == list(final["tribunal_failures"])
    assert "pfad1_nachlauf" not in raw["ausfaelle"]
