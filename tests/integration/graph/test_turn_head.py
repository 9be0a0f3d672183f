"""Every call of a turn that reads the conversation begins with the same turn head, in the
human and the character graph alike (docs/behaviour/llm.md#turn-head)."""

from __future__ import annotations

from graph_helpers import judge_schemas, script_human
from test_turn_inprocess import script_main_path

from novaberg.config import Settings
from novaberg.graph.runner import GraphRuntime, run_turn_inprocess
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair

PAIR = Pair("kopf", "nova")
FIRST = "Ich ziehe nächste Woche nach Köln!"
SECOND = "Kennst du dort ein gutes Café?"
HEADED = {"PerceptionResult", "SituationReading", "RouterDecision"}
"""Structured calls that read the conversation besides the tribunal's (the composer, the
query rewrite and the conversation vector are text calls and checked by their prompts' own
marks below)."""


def _head(prompt: str) -> str:
    end = prompt.index(f"[AKTUELLER PROMPT]\n{SECOND}") + len(f"[AKTUELLER PROMPT]\n{SECOND}")
    return prompt[:end]


async def test_the_calls_of_one_turn_share_one_head(
    runtime: GraphRuntime, scripted: ScriptedLLM, settings: Settings
) -> None:
    script_human(scripted)
    script_main_path(scripted)
    first = await run_turn_inprocess(runtime, PAIR, FIRST)
    answer = first.response["nachricht"]
    before = len(scripted.calls)
    await run_turn_inprocess(runtime, PAIR, SECOND)
    calls = scripted.calls[before:]

    headed = [c for c in calls if c["prompt"].startswith("[HEUTE]")]
    heads = {_head(c["prompt"]) for c in headed}
    assert len(heads) == 1, "one head, byte for byte, in every call that carries it"
    (head,) = heads
    assert f"[1] USER (freude): {FIRST}" in head and f"[2] NOVA: {answer}" in head
    assert "[3]" not in head, "the current utterance is not history"
    schemas = [c["schema"] for c in headed]
    tribunal = judge_schemas(settings.turn_profile)
    assert set(schemas) >= HEADED | tribunal and schemas.count("PerceptionResult") == 2
    texts = [c["prompt"] for c in headed if c["schema"] is None]
    assert any("[ANLASS]" in t for t in texts), "the composer"
    rewrite = settings.query_rewrite_on
    assert any("Suchanfrage" in t for t in texts) is rewrite, "the query rewrite"
    assert any("Denke" in t or "Worauf läuft" in t for t in texts), "the conversation vector"
    # 2 perceptions, situation, router, vector, composer, the tribunal's calls, the rewrite
    assert len(headed) == 6 + len(tribunal) + rewrite

    salience = [c for c in calls if c["schema"] == "SalienceScore"]
    assert salience and not any(c["prompt"].startswith("[HEUTE]") for c in salience)
    judges = [c for c in headed if c["schema"] in {"JuristVerdict", "EthicistVerdict"}]
    assert all(f"Nutzer: {FIRST}" not in c["prompt"] for c in judges), (
        "the judges' memory does not repeat the session turns the head holds"
    )
