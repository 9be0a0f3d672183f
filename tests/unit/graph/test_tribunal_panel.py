"""The compact profile's one-call tribunal: the scripted double answers the panel with the
rules written for the three judges, and each verdict is voted as the judge's own
(docs/behaviour/llm.md#profiles)."""

from __future__ import annotations

import pytest

from novaberg.config import Role
from novaberg.graph.nodes.tribunal import DEFAULT_THRESHOLDS, ROLES, aggregate
from novaberg.graph.nodes.tribunal_panel import (
    PANEL_REASON_MAX_CHARS,
    TribunalPanel,
    panel_prompt,
    panel_votes,
)
from novaberg.llm.errors import ModelTimeout
from novaberg.llm.layer import ModelLayer
from novaberg.llm.scripted import ScriptedEmbedder, ScriptedLLM
from novaberg.prompts import user_message

STATE = {"response": "Mir geht's gut.", "stimulus": "Wie geht's dir?"}


def judges(scripted: ScriptedLLM, jurist: float, psychologist: float, ethicist: float) -> None:
    scripted.add(
        ".*", {"score": jurist, "direktiven_score": 0.0, "begruendung": "j"}, schema="JuristVerdict"
    )
    scripted.add(".*", {"score": psychologist, "begruendung": "p"}, schema="PsychologistVerdict")
    scripted.add(".*", {"score": ethicist, "begruendung": "e"}, schema="EthicistVerdict")


async def ask(scripted: ScriptedLLM) -> TribunalPanel:
    model = ModelLayer(scripted, ScriptedEmbedder(8))
    prompt = panel_prompt(STATE)  # type: ignore[arg-type]
    return await model.structured(Role.ANALYSIS, user_message(prompt), TribunalPanel)


def test_the_panel_advertises_every_judge_with_its_own_form_and_a_short_reason() -> None:
    schema = TribunalPanel.model_json_schema()
    assert schema["required"] == list(ROLES)
    jurist = schema["properties"]["jurist"]
    assert jurist["title"] == "JuristVerdict"
    assert set(jurist["required"]) == {"score", "direktiven_score"}
    for role in ROLES:
        reason = schema["properties"][role]["properties"]["begruendung"]
        assert reason["maxLength"] == PANEL_REASON_MAX_CHARS


def test_the_prompt_names_the_three_tasks_and_the_answer_once() -> None:
    prompt = panel_prompt(STATE)  # type: ignore[arg-type]
    for judge in ("Jurist im Tribunal", "Psychologe im Tribunal", "Ethiker im Tribunal"):
        assert prompt.count(judge) == 1
    assert prompt.count("Antwort: Mir geht's gut.") == 1


async def test_one_call_answered_by_the_three_judges_rules_votes_as_three_calls_would() -> None:
    scripted = ScriptedLLM()
    judges(scripted, jurist=0.1, psychologist=0.95, ethicist=0.8)
    panel = await ask(scripted)
    assert [call["schema"] for call in scripted.calls] == ["TribunalPanel"]
    votes = panel_votes(panel, DEFAULT_THRESHOLDS)
    assert [(v["role"], v["vote"], v["reasoning"]) for v in votes] == [
        ("jurist", "ok", "j"),
        ("psychologe", "ablehnen", "p"),
        ("ethiker", "warnung", "e"),
    ]
    assert aggregate(votes) == "warnung"


async def test_an_unreadable_part_fails_only_its_judge() -> None:
    scripted = ScriptedLLM()
    judges(scripted, 0.1, 0.1, 0.1)
    scripted.add(".*", fault="malformed", schema="PsychologistVerdict")
    panel = await ask(scripted)
    votes = panel_votes(panel, DEFAULT_THRESHOLDS)
    assert [v["failure"] for v in votes] == [None, "unlesbar", None]
    assert [v["vote"] for v in votes] == ["ok", None, "ok"]
    assert aggregate(votes) == "ok"  # one failure next to two oks passes, as with 3 calls


async def test_a_timed_out_part_fails_the_whole_call() -> None:
    scripted = ScriptedLLM()
    judges(scripted, 0.1, 0.1, 0.1)
    scripted.add(".*", fault="timeout", schema="EthicistVerdict")
    with pytest.raises(ModelTimeout):
        await ask(scripted)


async def test_a_rule_for_the_panel_itself_answers_it_whole() -> None:
    scripted = ScriptedLLM()
    judges(scripted, 0.1, 0.1, 0.1)
    whole = {
        "jurist": {"score": 0.95, "direktiven_score": 0.0},
        "psychologe": {"score": 0.95},
        "ethiker": {"score": 0.0},
    }
    scripted.add(".*", whole, schema="TribunalPanel")
    votes = panel_votes(await ask(scripted), DEFAULT_THRESHOLDS)
    assert aggregate(votes) == "ablehnen"


async def test_without_any_judge_rule_the_default_answer_is_schema_valid() -> None:
    votes = panel_votes(await ask(ScriptedLLM()), DEFAULT_THRESHOLDS)
    assert all(v["failure"] is None for v in votes)
