"""The compact profile's CharacterGraph on the real stores (docs/behaviour/llm.md#profiles):
one tribunal call, no query rewrite, the short hypothesis — and the same outcomes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from graph_helpers import script_human
from test_character_graph import (
    ANSWER,
    reject_all,
    script_character,
    user_turn,
)

from novaberg.config import Settings
from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedLLM

FIXED_NOW = 1_790_000_000.0


@pytest.fixture
async def compact(
    settings: Settings, redis: Any, db: Any, model: ModelLayer
) -> AsyncIterator[GraphRuntime]:
    deps = GraphDeps(
        settings=settings.model_copy(update={"profile": "compact", "query_rewrite": None}),
        redis=redis,
        pool=db,
        model=model,
        clock=lambda: FIXED_NOW,
    )
    yield GraphRuntime(deps)
    assert deps.log is not None
    await deps.log.close()


def tribunal_schemas(scripted: ScriptedLLM) -> list[str]:
    judged = {"TribunalPanel", "JuristVerdict", "PsychologistVerdict", "EthicistVerdict"}
    return [c["schema"] for c in scripted.calls if c["schema"] in judged]


async def test_a_plain_turn_judges_in_one_call_and_searches_with_the_raw_text(
    compact: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    await user_turn(compact, "Ich ziehe nächste Woche nach Köln!")
    scripted.calls.clear()
    _, final, _ = await user_turn(compact, "Wie geht's dir?")

    assert final["response"] == ANSWER
    assert final["tribunal_verdict"] == "ok" and final["evaluate_decision"] == "ok"
    assert [v["role"] for v in final["tribunal_votes"]] == ["jurist", "psychologe", "ethiker"]
    assert tribunal_schemas(scripted) == ["TribunalPanel"]
    # the second turn has history, yet no rewrite call: the raw text is the search text
    assert final["search_text_source"] == "abgeschaltet"
    assert not [
        c for c in scripted.calls if "[AUFGABE]" in c["prompt"] and "Suchtext" in c["prompt"]
    ]
    # the hypothesis, if any, in its one-sentence form
    assert final["hypothesis_detail"]["laenge"] <= 1
    assert all("SPRUNG" not in c["prompt"] for c in scripted.calls)


async def test_a_rejected_answer_is_corrected_as_in_the_full_profile(
    compact: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted, answer="Du bist doch selbst schuld.")
    reject_all(scripted, r"Antwort: Du bist doch selbst schuld")
    nodes, final, _ = await user_turn(compact, "Mir geht es schlecht.")

    assert "corrector" in nodes
    assert final["response"] == "Korrigierte freundliche Antwort."
    assert final["tribunal_verdict"] == "ok"
    # two panel calls: the draft's and the corrected text's
    assert tribunal_schemas(scripted) == ["TribunalPanel", "TribunalPanel"]
