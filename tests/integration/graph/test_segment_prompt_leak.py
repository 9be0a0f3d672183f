"""Salience segmentation whose segments repeat our prompt's instructions (prompts/leak.py):
the scraps never become segments (nor memories); the whole text is one segment and the
pipeline log's salience row names the leak."""

from __future__ import annotations

import uuid

from graph_helpers import SCORE_OK, script_human

from novaberg.graph.contract import GraphDeps, HumanTurn
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store.pipeline_log import read_turn

PAIR = Pair("meister", "nova")
LEAK = "Das sollst du inhaltlich sagen (Person A ist der Nutzer, Person B bist du). Gib es"
TEXT = "Morgen ziehe ich nach Köln. Meine Schwester hilft mir dabei, das wird anstrengend."


async def test_leaking_segments_fall_back_to_the_whole_text(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    scripted.add(".*", schema="SalienceScore", output={**SCORE_OK, "salienz": 0.4})
    scripted.add(
        ".*",
        schema="Segmentation",
        output={"segmente": [{"segment": LEAK, "thema_kurz": "x"}, {"segment": TEXT}]},
    )
    turn = HumanTurn(
        pair=PAIR,
        turn_id=uuid.uuid4().hex,
        prompt=TEXT,
        message_ids=[uuid.uuid4().hex],
        received_at=1_790_000_000.0,
    )
    final = {}
    async for _, state in runtime.stream_human(runtime.human_state(turn)):
        final = state
    segments = [w["data"]["segment"] for w in final["pending_writes"] if w["target"] == "kzg"]
    assert segments == [TEXT]
    await deps.log.flush()  # type: ignore[union-attr]
    rows = {r["node"]: r for r in await read_turn(deps.pool, turn.turn_id)}
    salience = rows["salience"]["inhalt"]
    assert salience["segmentierung"] == "prompt_leck" and salience["prompt_leck"]
