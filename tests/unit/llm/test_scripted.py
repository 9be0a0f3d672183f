"""The scripted backend: rules (code and JSON file), first match wins, schema filter,
latency, faults, schema-valid default objects and determinism."""

from __future__ import annotations

import asyncio
import json
import time
from enum import StrEnum
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from novaberg.config import Role, load_settings
from novaberg.llm import scripted
from novaberg.llm.accounting import track_calls
from novaberg.llm.errors import ModelOutputError, ModelTimeout, ModelUnavailable
from novaberg.llm.factory import build_model_layer, build_text_backend
from novaberg.llm.scripted import MALFORMED_TEXT, Rule, ScriptedEmbedder, ScriptedLLM, load_rules

CHAT = Role.CHAT


def ask(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


class Mood(BaseModel):
    mood: Literal["happy", "sad"]
    score: float = Field(ge=0, le=1)


class Colour(StrEnum):
    RED = "rot"
    BLUE = "blau"


class Item(BaseModel):
    label: str = Field(min_length=3, max_length=12)
    weight: int = Field(ge=2, le=5)
    colour: Colour


class Analysis(BaseModel):
    kind: Literal["frage", "aussage", "befehl"]
    arousal: float = Field(gt=0, lt=1)
    valence: float = Field(ge=-1, le=1)
    items: list[Item] = Field(min_length=2, max_length=4)
    tags: list[str]
    note: str | None = None
    parent: Item | None
    flag: bool


async def test_rule_from_code_answers_structured_and_chat() -> None:
    llm = ScriptedLLM()
    llm.add("Lotto", {"mood": "happy", "score": 0.9})
    llm.add("Wetter", "Es regnet.")
    assert await llm.structured(CHAT, ask("Ich habe im Lotto gewonnen"), Mood) == Mood(
        mood="happy", score=0.9
    )
    assert await llm.chat(CHAT, ask("Wie ist das Wetter?")) == "Es regnet."
    assert [c["rule"].match for c in llm.calls] == ["Lotto", "Wetter"]


async def test_first_matching_rule_wins() -> None:
    llm = ScriptedLLM(
        [Rule(match="Hund", output="erste"), Rule(match="Hund|Katze", output="zweite")]
    )
    assert await llm.chat(CHAT, ask("Der Hund bellt")) == "erste"
    assert await llm.chat(CHAT, ask("Die Katze schläft")) == "zweite"


async def test_add_puts_the_new_rule_in_front() -> None:
    llm = ScriptedLLM([Rule(match="Hund", output="alt")])
    llm.add("Hund", "neu")
    assert await llm.chat(CHAT, ask("Hund")) == "neu"


async def test_match_searches_the_whole_prompt_across_messages() -> None:
    llm = ScriptedLLM([Rule(match=r"SYSTEM.*Frage", output="gefunden")])
    messages = [{"role": "system", "content": "SYSTEM"}, {"role": "user", "content": "Frage"}]
    assert await llm.chat(CHAT, messages) == "gefunden"


async def test_schema_filter_limits_a_rule_to_one_schema() -> None:
    llm = ScriptedLLM([Rule(match=".", schema="Mood", output={"mood": "sad", "score": 0.1})])
    assert (await llm.structured(CHAT, ask("x"), Mood)).mood == "sad"
    # chat has no schema and Analysis is another schema: the rule does not apply
    assert await llm.chat(CHAT, ask("x")) != json.dumps({"mood": "sad", "score": 0.1})
    assert llm.calls[-1]["rule"] is None
    await llm.structured(CHAT, ask("x"), Analysis)
    assert llm.calls[-1]["rule"] is None


async def test_times_limits_how_often_a_rule_fires() -> None:
    llm = ScriptedLLM([Rule(match="a", output="einmal", times=1), Rule(match="a", output="sonst")])
    assert [await llm.chat(CHAT, ask("a")) for _ in range(3)] == ["einmal", "sonst", "sonst"]


async def test_rules_from_json_file_named_by_novaberg_script(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "demo.json"
    script.write_text(
        json.dumps(
            [
                {"match": "Lotto", "schema": "Mood", "output": {"mood": "happy", "score": 1.0}},
                {"match": "kaputt", "fault": "error"},
                {"match": ".*", "output": "Hallo aus der Datei."},
            ]
        ),
        encoding="utf-8",
    )
    monkeypatch.setenv("NOVABERG_LLM", "scripted")
    monkeypatch.setenv("NOVABERG_SCRIPT", str(script))
    settings = load_settings()
    llm = build_text_backend(settings)
    assert isinstance(llm, ScriptedLLM)
    assert len(llm.rules) == 3
    assert (await llm.structured(CHAT, ask("Lotto!"), Mood)).score == 1.0
    assert await llm.chat(CHAT, ask("irgendwas")) == "Hallo aus der Datei."
    with pytest.raises(ModelUnavailable):
        await llm.chat(CHAT, ask("alles kaputt"))
    # scripted LLM without NOVABERG_EMBED_URL means scripted embeddings too
    assert isinstance(build_model_layer(settings).embedder, ScriptedEmbedder)


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ({"match": "x"}, "expected a JSON list"),
        ([{"output": "ohne match"}], "needs a 'match'"),
        ([{"match": "x", "answer": "y"}], "unknown keys"),
        ([{"match": "x", "fault": "explode"}], "unknown fault"),
    ],
)
def test_bad_rule_files_are_rejected(tmp_path: Path, rules: object, message: str) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules), encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        load_rules(path)


async def test_latency_delays_the_answer() -> None:
    llm = ScriptedLLM([Rule(match="langsam", output="ok", latency_ms=120)], latency_ms=0)
    started = time.perf_counter()
    await llm.chat(CHAT, ask("langsam"))
    assert time.perf_counter() - started >= 0.12
    slow_default = ScriptedLLM(latency_ms=80)
    started = time.perf_counter()
    await slow_default.chat(CHAT, ask("irgendwas"))
    assert time.perf_counter() - started >= 0.08


@pytest.mark.parametrize("seconds", [0.0, 0.0005, 0.002, 0.03])
async def test_a_latency_ends_on_its_deadline_not_a_timer_tick_later(
    seconds: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop's timer would wake the call up to a millisecond late (epoll's resolution);
    the scripted wait sleeps to just short of the deadline and yields to the loop for the
    rest, so a bench counting rounds of L is not off by a tick per round."""
    sleeps: list[float] = []
    real_sleep = scripted.asyncio.sleep
    this_task = asyncio.current_task()

    async def recording_sleep(delay: float) -> None:
        if asyncio.current_task() is this_task:  # not a sleep of another test's leftover task
            sleeps.append(delay)
        await real_sleep(delay)

    monkeypatch.setattr(scripted.asyncio, "sleep", recording_sleep)
    started = time.perf_counter()
    await scripted.wait_exactly(seconds)
    assert time.perf_counter() - started >= seconds  # never early
    timed = [delay for delay in sleeps if delay > 0]
    if seconds > scripted.LOOP_TIMER_SLACK_S:
        assert timed == [pytest.approx(seconds - scripted.LOOP_TIMER_SLACK_S)]
    else:
        assert timed == []  # below the timer's slack it only yields
    assert all(delay == 0 for delay in sleeps[len(timed) :])


async def test_a_delay_only_rule_keeps_every_answer_valid() -> None:
    """`[{"match": ".", "latency_ms": L}]` delays every call and changes no answer: a
    structured call still gets a schema-valid object, a later rule still answers."""
    (delay,) = load_rules_from([{"match": ".", "latency_ms": 60}])
    llm = ScriptedLLM([delay, Rule(match="Wetter", output="Es regnet.")])
    started = time.perf_counter()
    analysis = await llm.structured(CHAT, ask("Analysiere das"), Analysis)
    assert time.perf_counter() - started >= 0.06
    assert isinstance(analysis, Analysis) and 2 <= len(analysis.items) <= 4
    assert llm.calls[-1]["rule"] is None  # answered by the default, not by "null"
    started = time.perf_counter()
    assert await llm.chat(CHAT, ask("Wie ist das Wetter?")) == "Es regnet."
    assert time.perf_counter() - started >= 0.06
    assert delay.used == 2
    # the same as the default answer without the delay rule
    plain = ScriptedLLM([Rule(match="Wetter", output="Es regnet.")])
    assert await plain.structured(CHAT, ask("Analysiere das"), Analysis) == analysis


def load_rules_from(raw: list[dict[str, object]]) -> list[Rule]:
    return [Rule.from_dict(item) for item in raw]


async def test_faults() -> None:
    llm = ScriptedLLM(
        [
            Rule(match="zeit", fault="timeout"),
            Rule(match="fehler", fault="error"),
            Rule(match="müll", fault="malformed"),
        ]
    )
    with pytest.raises(ModelTimeout):
        await llm.structured(CHAT, ask("zeit"), Mood)
    with pytest.raises(ModelUnavailable):
        await llm.chat(CHAT, ask("fehler"))
    with pytest.raises(ModelOutputError) as structured_error:
        await llm.structured(CHAT, ask("müll"), Mood)
    assert structured_error.value.raw == MALFORMED_TEXT
    with pytest.raises(ModelOutputError) as chat_error:
        await llm.chat(CHAT, ask("müll"))
    assert chat_error.value.raw == MALFORMED_TEXT


async def test_default_objects_are_valid_for_a_nested_schema() -> None:
    llm = ScriptedLLM()
    results = [await llm.structured(CHAT, ask(f"Satz Nummer {i}"), Analysis) for i in range(12)]
    for result in results:
        assert isinstance(result, Analysis)  # validated by pydantic, bounds included
        assert 2 <= len(result.items) <= 4
        assert result.parent is not None  # Optional gets a value, not a silent None
    # choices come from the prompt hash, so different prompts explore the enums
    assert len({r.kind for r in results}) > 1
    assert len({item.colour for r in results for item in r.items}) > 1


async def test_same_prompt_same_answer_across_instances() -> None:
    first, second = ScriptedLLM(), ScriptedLLM()
    prompt = ask("Wie geht es dir heute?")
    assert await first.structured(CHAT, prompt, Analysis) == await second.structured(
        CHAT, prompt, Analysis
    )
    assert await first.chat(CHAT, prompt) == await second.chat(CHAT, prompt)
    assert await first.chat(CHAT, prompt) != await first.chat(CHAT, ask("Etwas anderes"))


async def test_calls_are_accounted() -> None:
    llm = ScriptedLLM([Rule(match=".", output="eins zwei drei")])
    with track_calls() as stats:
        await llm.chat(CHAT, ask("vier fünf"))
        await llm.chat(CHAT, ask("sechs"))
    assert stats.calls == 2
    assert stats.prompt_tokens == 3
    assert stats.completion_tokens == 6
    assert stats.models == ["scripted"]


async def test_embeddings_are_accounted_apart_from_chat_calls() -> None:
    from novaberg.llm.layer import ModelLayer

    layer = ModelLayer(ScriptedLLM([Rule(match=".", output="x")]), ScriptedEmbedder(16))
    with track_calls() as stats:
        await layer.embed(["eins", "zwei"])
        await layer.embed_one("drei")
    assert stats.embed_calls == 2
    assert stats.embed_seconds > 0.0
    assert stats.calls == 0


async def test_scripted_embedder_is_deterministic_and_word_based() -> None:
    embedder = ScriptedEmbedder(64)
    a, b, c = await embedder.embed(
        ["Ich mag meinen Hund", "ich mag meinen Hund sehr", "Quantenphysik morgen"]
    )
    assert len(a) == 64
    assert a == (await embedder.embed(["Ich mag meinen Hund"]))[0]
    cos_near = sum(x * y for x, y in zip(a, b, strict=True))
    cos_far = sum(x * y for x, y in zip(a, c, strict=True))
    assert cos_near > 0.7 > cos_far
