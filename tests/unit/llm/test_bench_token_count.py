"""bench/tokens.py counts what the bundled model evaluates: a tiny scripted "turn" of two
calls made inside two nodes' accounting scopes, recorded below `structured` and counted
with the GGUF's own chat template and tokenizer."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from novaberg.config import Role
from novaberg.llm.accounting import track_calls
from novaberg.llm.layer import ModelLayer
from novaberg.llm.local import bundled_model_path
from novaberg.llm.scripted import Rule, ScriptedEmbedder, ScriptedLLM

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from _token_count import ChatTokenizer, RecordingBackend, shared_prefixes
from tokens import last_line, measure_turn, summarize

HEAD = "[REGELN]\nAntworte kurz und nur mit JSON, wie unten verlangt.\n\n"


class Verdict(BaseModel):
    score: float


@pytest.fixture(scope="module")
def tokenizer() -> ChatTokenizer:
    return ChatTokenizer(bundled_model_path())


def test_shared_prefixes_take_the_longest_run_with_any_earlier_prompt() -> None:
    prompts = [[1, 2, 3], [1, 2, 4], [5], [1, 2, 3, 9], []]
    assert shared_prefixes(prompts) == [0, 2, 0, 3, 0]


async def test_a_scripted_turn_is_recorded_and_counted_exactly(tokenizer: ChatTokenizer) -> None:
    scripted = ScriptedLLM([Rule(match="Jurist", schema="Verdict", output={"score": 0.25})])
    backend = RecordingBackend(scripted)
    model = ModelLayer(backend, ScriptedEmbedder(8))
    first = [{"role": "user", "content": HEAD + "[AUFGABE]\nDu bist Jurist."}]
    second = [
        {"role": "system", "content": "Du bist Nova."},
        {"role": "user", "content": HEAD + "[TEXT]\nWie geht's?"},
    ]
    third = [{"role": "user", "content": HEAD + "[AUFGABE]\nDu bist Ethiker."}]
    with track_calls("character/tribunal"):
        await model.structured(Role.BACKGROUND, first, Verdict)
    with track_calls("character/responder"):
        answer = await model.chat(Role.CHAT, second)
    with track_calls("character/tribunal"):
        await model.structured(Role.BACKGROUND, third, Verdict)

    calls = backend.completions
    assert [(c.source, c.schema) for c in calls] == [
        ("character/tribunal", "Verdict"),
        ("character/responder", "text"),
        ("character/tribunal", "Verdict"),
    ]
    assert calls[0].text == '{"score": 0.25}' and calls[1].text.strip() == answer

    turn = measure_turn(tokenizer, calls)
    rows = turn["calls"]
    # the prompt as llama.cpp evaluates it: SmolLM2's ChatML template, its default system
    # message where the call has none, and the assistant's opening
    chatml = (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging"
        " Face<|im_end|>\n<|im_start|>user\n" + first[0]["content"] + "<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    exact = tokenizer._llama.tokenize(chatml.encode(), add_bos=False, special=True)
    assert turn["prompts"][0] == list(exact)
    assert rows[0]["prompt"] == len(exact)
    assert rows[0]["completion"] == tokenizer.count('{"score": 0.25}') > 0
    # the responder's own system message: it shares only the template's opening
    assert 0 < rows[1]["shared"] <= 3
    # the second judge shares the default system message, the rules' head and "Du bist"
    # with the first, and nothing after
    head = tokenizer._llama.tokenize(chatml.split("[AUFGABE]")[0].encode(), False, True)
    shared = rows[2]["shared"]
    assert len(head) < shared < rows[2]["prompt"]
    assert turn["prompts"][2][:shared] == turn["prompts"][0][:shared]
    assert turn["prompts"][2][shared] != turn["prompts"][0][shared]
    assert turn["shared_prefix_tokens"] == sum(r["shared"] for r in rows)
    assert turn["prompt_tokens"] == sum(len(p) for p in turn["prompts"])

    summary = summarize([turn])
    assert summary["nodes"]["character/tribunal"]["calls"] == 2
    share = round(100 * turn["shared_prefix_tokens"] / turn["prompt_tokens"], 1)
    assert last_line(summary) == (
        f"tokens: {turn['prompt_tokens']} prompt + {turn['completion_tokens']} completion "
        f"per turn, {share} % shared prefix"
    )
