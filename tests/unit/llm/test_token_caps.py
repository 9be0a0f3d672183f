"""Each structured call's `max_tokens` comes from its schema's bounds and is never below
the longest valid answer, counted with the bundled model's own tokenizer."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from novaberg.agents.character_identity.classify import IdentityClassification
from novaberg.agents.directives.classify import DirectiveClassification
from novaberg.agents.notes.classify import NotesClassification
from novaberg.agents.timeline.classify import TimelineClassification
from novaberg.api.doctor import HealthProbe
from novaberg.config import Role
from novaberg.graph.nodes.perception import PerceptionResult
from novaberg.graph.nodes.router import RouterDecision
from novaberg.graph.nodes.salience import SalienceScore, Segmentation
from novaberg.graph.nodes.situation import SituationReading
from novaberg.graph.nodes.thinker import ThinkerCheck
from novaberg.graph.nodes.tribunal import EthicistVerdict, JuristVerdict, PsychologistVerdict
from novaberg.llm.local import STRUCTURED_MAX_TOKENS, bundled_model_path
from novaberg.llm.scripted import ScriptedLLM
from novaberg.llm.token_caps import HEADROOM, cap_for, maximal_json
from novaberg.memory.jobs.character import LastingGoals, ProfileLayers
from novaberg.memory.wheel import SpokeRatings
from novaberg.pixie.research import ResearchStep

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from _token_count import ChatTokenizer

STRUCTURED_SCHEMAS: list[type[BaseModel]] = [
    PerceptionResult,
    SalienceScore,
    Segmentation,
    RouterDecision,
    SituationReading,
    JuristVerdict,
    PsychologistVerdict,
    EthicistVerdict,
    ThinkerCheck,
    IdentityClassification,
    DirectiveClassification,
    NotesClassification,
    TimelineClassification,
    ProfileLayers,
    LastingGoals,
    SpokeRatings,
    ResearchStep,
    HealthProbe,
]
"""Every schema a `structured` call in src/ answers with."""

TURN_SCHEMAS = [PerceptionResult, SalienceScore, RouterDecision, JuristVerdict, PsychologistVerdict]
"""Structured calls of every plain turn: each must have a cap of its own."""


@pytest.fixture(scope="module")
def tokenizer() -> ChatTokenizer:
    return ChatTokenizer(bundled_model_path())


@pytest.mark.parametrize("schema", STRUCTURED_SCHEMAS, ids=lambda s: s.__name__)
def test_the_cap_holds_the_longest_valid_answer(
    tokenizer: ChatTokenizer, schema: type[BaseModel]
) -> None:
    cap = cap_for(schema)
    if cap is None:
        pytest.skip(f"{schema.__name__} has an unbounded part: the backend default applies")
    longest = json.loads(maximal_json(schema.model_json_schema()))
    pretty = "```json\n" + json.dumps(longest, ensure_ascii=False, indent=2) + "\n```"
    needed = tokenizer.count(pretty)
    assert cap >= needed, f"{schema.__name__}: cap {cap} < {needed} tokens of its longest answer"


def test_the_plain_turns_schemas_have_caps_of_their_own() -> None:
    caps = {schema.__name__: cap_for(schema) for schema in TURN_SCHEMAS}
    assert all(cap is not None for cap in caps.values()), caps
    small = [PerceptionResult, JuristVerdict, PsychologistVerdict]
    assert all((cap_for(s) or STRUCTURED_MAX_TOKENS) < STRUCTURED_MAX_TOKENS for s in small), caps


def test_the_routers_bounds_are_advertised_not_enforced() -> None:
    """The bounds shape what a constrained model may write; a longer decision of another
    backend is still read, not refused."""
    schema = RouterDecision.model_json_schema()
    assert schema["properties"]["management_tasks"]["maxItems"] == 3
    long_task = {"target": "notizen", "text": "Brot " * 100}
    decision = RouterDecision.model_validate(
        {"management_action": "agent", "management_tasks": [long_task] * 5}
    )
    assert len(decision.management_tasks) == 5
    assert decision.management_tasks[0].text == long_task["text"]


def test_a_verdict_gets_a_small_cap_and_a_longer_schema_a_larger_one() -> None:
    class Short(BaseModel):
        score: float

    class Longer(BaseModel):
        score: float
        reason: str = Field(json_schema_extra={"maxLength": 400})

    short, longer = cap_for(Short), cap_for(Longer)
    assert short is not None and longer is not None
    assert short < HEADROOM + 20 < longer


def test_an_unbounded_schema_gets_no_cap_of_its_own() -> None:
    class Free(BaseModel):
        text: str

    class FreeList(BaseModel):
        items: list[Literal["a", "b"]]

    class FreeMap(BaseModel):
        values: dict[str, int]

    assert (cap_for(Free), cap_for(FreeList), cap_for(FreeMap)) == (None, None, None)


async def test_structured_calls_send_the_schemas_cap() -> None:
    llm = ScriptedLLM([])
    await llm.structured(Role.ANALYSIS, [{"role": "user", "content": "x"}], JuristVerdict)
    await llm.chat(Role.CHAT, [{"role": "user", "content": "x"}])
    assert [call["max_tokens"] for call in llm.calls] == [cap_for(JuristVerdict), None]
