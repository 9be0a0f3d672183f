"""`structured`: pydantic validation, one retry with a hint, then `ModelOutputError`."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from novaberg.config import Role
from novaberg.llm.base import RETRY_HINT
from novaberg.llm.errors import ModelOutputError
from novaberg.llm.scripted import MALFORMED_TEXT, Rule, ScriptedLLM


class Mood(BaseModel):
    mood: Literal["happy", "sad"]
    score: float


PROMPT = [{"role": "user", "content": "Wie fühlst du dich?"}]
VALID = {"mood": "sad", "score": 0.25}


async def test_malformed_then_valid_succeeds_after_one_retry() -> None:
    llm = ScriptedLLM(
        [Rule(match="fühlst", fault="malformed", times=1), Rule(match="fühlst", output=VALID)]
    )
    assert await llm.structured(Role.ANALYSIS, PROMPT, Mood) == Mood(**VALID)
    assert len(llm.calls) == 2
    retry_prompt = llm.calls[1]["prompt"]
    assert MALFORMED_TEXT in retry_prompt  # the model sees what it said ...
    assert RETRY_HINT in retry_prompt  # ... and why it must answer again


async def test_schema_violation_counts_as_invalid() -> None:
    llm = ScriptedLLM(
        [
            Rule(match="fühlst", output={"mood": "wütend", "score": 1}, times=1),
            Rule(match="fühlst", output=VALID),
        ]
    )
    assert (await llm.structured(Role.CHAT, PROMPT, Mood)).mood == "sad"
    assert len(llm.calls) == 2


async def test_malformed_twice_raises_model_output_error_with_raw_text() -> None:
    llm = ScriptedLLM([Rule(match="fühlst", fault="malformed")])
    with pytest.raises(ModelOutputError) as caught:
        await llm.structured(Role.CHAT, PROMPT, Mood)
    assert caught.value.raw == MALFORMED_TEXT
    assert "Mood" in str(caught.value)
    assert len(llm.calls) == 2  # exactly one retry


async def test_json_in_a_code_fence_is_accepted() -> None:
    llm = ScriptedLLM([Rule(match=".", output='```json\n{"mood": "happy", "score": 1}\n```')])
    assert (await llm.structured(Role.CHAT, PROMPT, Mood)).mood == "happy"
    assert len(llm.calls) == 1
