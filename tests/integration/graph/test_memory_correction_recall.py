"""A memory the person corrected is what the next turn reads: the enricher finds the
corrected short-term entry and long-term node, and the composer's prompt carries the new
text, never the old one (the real CharacterGraph with the scripted model)."""

from __future__ import annotations

from typing import Any

from graph_helpers import SCORE_OK, script_human
from psycopg_pool import AsyncConnectionPool
from test_character_graph import NOW, human_turn, run_character, run_human, script_character

from novaberg.graph.runner import GraphRuntime
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM
from novaberg.memory.long_term.edits import correct_node
from novaberg.memory.long_term.promotion import Promotion
from novaberg.memory.short_term.creation import ShortTermWriter
from novaberg.memory.short_term.edits import correct_entry
from novaberg.pair import Pair
from novaberg.store.short_term import ShortTermStore

PAIR = Pair("meister", "nova")
QUESTION = "Thema Wohnort: der Nutzer wohnt in? Die Schwester des Nutzers heisst?"
EARLIER = NOW - 3_600  # the graph's clock is fixed at NOW


async def seed(
    redis: Any, db: AsyncConnectionPool, model: ModelLayer, scripted: ScriptedLLM
) -> tuple[str, int]:
    """A short-term entry and a long-term node, both wrong, as the memory had them."""
    short = ShortTermWriter(redis, model, pool=db, clock=lambda: EARLIER, promotions=False)
    scripted.add("Madrid!", "Der Nutzer wohnt in Madrid.")
    scripted.add("Berta!", "Die Schwester des Nutzers heisst Berta.")
    place = await short.store_salience_write(
        PAIR, {"salienz_obj": {"salienz": 0.9, "themen": ["Wohnort"]}, "segment": "Madrid!"}, "user"
    )
    sister = await short.store_salience_write(
        PAIR, {"salienz_obj": {"salienz": 0.9, "themen": ["Familie"]}, "segment": "Berta!"}, "user"
    )
    assert place is not None and sister is not None
    long_term = Promotion(db, redis, model, clock=lambda: EARLIER)
    node = await long_term.promote(
        {"key": sister.key, "user_id": "meister", "character_id": "nova"}
    )
    assert node.node_id is not None
    await short.store.delete(PAIR, sister.key)  # the sister lives in the long-term memory only
    return place.key, node.node_id


def composer_prompt(scripted: ScriptedLLM) -> str:
    (call,) = [
        c
        for c in scripted.calls
        if c["schema"] is None
        and QUESTION in c["prompt"]
        and "[AUFGABE]\nDu bereitest den Inhalt" in c["prompt"]
    ]
    return str(call["prompt"])


async def test_the_composer_reads_the_corrected_memories(
    runtime: GraphRuntime,
    redis: Any,
    db: AsyncConnectionPool,
    model: ModelLayer,
    scripted: ScriptedLLM,
) -> None:
    key, node_id = await seed(redis, db, model, scripted)
    assert await correct_entry(
        ShortTermStore(redis), model, PAIR, key, "Der Nutzer wohnt in Lissabon."
    )
    corrected = await correct_node(
        db, redis, model, PAIR, node_id, "Die Schwester des Nutzers heisst Clara."
    )
    assert corrected is not None

    script_human(scripted, score={**SCORE_OK, "salienz": 0.2})  # the question is no memory
    script_character(scripted)
    scripted.add(r"als eigenständige Suchanfrage", QUESTION)  # the rewrite keeps the words
    _, final = await run_character(runtime, await run_human(runtime, human_turn(QUESTION)))

    found = {e["quelle"]: e["inhalt"] for e in final["memory_entries_raw"]}
    assert found.get("kzg") == "Der Nutzer wohnt in Lissabon.", final["memory_entries_raw"]
    assert found.get("lzg") == "Die Schwester des Nutzers heisst Clara."
    prompt = composer_prompt(scripted)
    assert "Lissabon" in prompt and "Clara" in prompt
    assert "Madrid" not in prompt and "Berta" not in prompt
