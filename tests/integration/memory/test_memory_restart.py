"""A fact told in one session is in `memory_context` of a turn after the embedded
services were stopped and started again (issue 5: memory survives restarts)."""

from __future__ import annotations

from pathlib import Path

from novaberg.config import load_settings
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime, run_turn_inprocess
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedEmbedder, ScriptedLLM
from novaberg.pair import Pair
from novaberg.runtime.services import EmbeddedServices
from novaberg.store.postgres import create_pool
from novaberg.store.redis_client import create_redis

FACT = "Mein Hund heißt Bello und ist ein Beagle."
KERN = "Der Hund des Nutzers heißt Bello und ist ein Beagle."


def _model() -> ModelLayer:
    scripted = ScriptedLLM()
    scripted.add(
        r"Verdichte die Äußerung des Nutzers",
        KERN,
    )
    # the second turn's query rewrite keeps the question (the default scripted sentence
    # would search with an unrelated text)
    scripted.add(r"Suchanfrage für das Gedächtnis", "Wie heißt eigentlich mein Hund Bello?")
    scripted.add(
        r"Bello",
        {
            "salienz": 0.8,
            "themen": ["hund"],
            "emotionen": {"explizit": [], "implizit": [], "valenz": "positiv"},
            "gedaechtnistyp": "lang",
            "dimension": "kontext",
            "intentionen": ["information_teilen"],
            "entitaeten_roh": ["Bello"],
            "zeitausdruck_roh": "",
            "begruendung": "ein Fakt über das Haustier",
        },
        schema="SalienceScore",
    )
    return ModelLayer(scripted, ScriptedEmbedder(384))


async def _turn(home: Path, text: str) -> dict:
    settings = load_settings(home=home, llm="scripted", pixie=False)
    services = EmbeddedServices(settings)
    endpoints = services.start()
    redis = create_redis(endpoints.redis_url)
    pool = await create_pool(endpoints.database_url)
    deps = GraphDeps(settings, redis, pool, _model())
    try:
        result = await run_turn_inprocess(GraphRuntime(deps), Pair("anna", "nova"), text)
        return result.character_state
    finally:
        assert deps.log is not None
        await deps.log.close()
        await pool.close()
        await redis.aclose()
        services.stop()


async def test_fact_survives_a_restart(tmp_path: Path) -> None:
    await _turn(tmp_path, FACT)
    # a new process would see exactly this: the servers were stopped and restarted
    later = await _turn(tmp_path, "Wie heißt eigentlich mein Hund Bello?")
    kzg_hits = [e for e in later["memory_entries_raw"] if e.get("quelle") == "kzg"]
    assert any("Bello" in e["inhalt"] and "Beagle" in e["inhalt"] for e in kzg_hits)
    assert "Beagle" in later["memory_context"]
