"""The bundled models for real: SmolLM2-135M via llama.cpp and MiniLM embeddings.

Slow-ish (two model loads, once per process), so marked `model`.
"""

from __future__ import annotations

import math
from typing import Literal

import pytest
from pydantic import BaseModel

from novaberg.config import Role, load_settings
from novaberg.llm import local
from novaberg.llm.accounting import track_calls
from novaberg.llm.embeddings import TORCH_THREADS, LocalEmbedder
from novaberg.llm.errors import ModelTimeout
from novaberg.llm.local import LocalLLM
from novaberg.llm.repetition import repetition_cut
from novaberg.prompts import render

pytestmark = pytest.mark.model


class Mood(BaseModel):
    mood: Literal["happy", "sad"]
    score: float


async def test_structured_returns_a_valid_object() -> None:
    llm = LocalLLM(load_settings(llm="local", llm_timeout=120))
    messages = [
        {"role": "system", "content": "Answer with JSON: mood (happy or sad) and score 0-1."},
        {"role": "user", "content": "I just won the lottery!"},
    ]
    with track_calls() as stats:
        result = await llm.structured(Role.ANALYSIS, messages, Mood, temperature=0.0)
    assert isinstance(result, Mood)
    assert stats.calls == 1  # grammar-constrained: valid at the first attempt
    assert stats.prompt_tokens > 0 and stats.completion_tokens > 0
    assert stats.models == ["SmolLM2-135M-Instruct"]


async def test_chat_and_timeout_free_the_worker() -> None:
    llm = LocalLLM(load_settings(llm="local", llm_timeout=120))
    text = await llm.chat(Role.CHAT, [{"role": "user", "content": "Say hello."}], max_tokens=24)
    assert text
    impatient = LocalLLM(load_settings(llm="local", llm_timeout=0.05))
    with pytest.raises(ModelTimeout):
        await impatient.chat(
            Role.CHAT, [{"role": "user", "content": "Write a long story."}], max_tokens=2000
        )
    # the cancelled generation stopped; the single worker thread serves the next call
    assert await llm.chat(Role.CHAT, [{"role": "user", "content": "Hi"}], max_tokens=8)
    assert len(local._models) == 1  # one load per process, shared by every instance


async def test_a_free_text_answer_that_loops_is_stopped_after_its_first_round() -> None:
    """Asked to condense a greeting (a real prompt of the pipeline), SmolLM2 at
    temperature 0 repeats the same sentence to its token limit; the backend stops at the
    first repeat and answers the sentence once."""
    prompt = render(
        "short_term_condense",
        variant="user",
        charakter="Nova",
        themen="smalltalk",
        hinweise="",
        aussage="Wie geht's dir?",
    )
    llm = LocalLLM(load_settings(llm="local", llm_timeout=120))
    with track_calls() as stats:
        text = await llm.chat(
            Role.ANALYSIS, [{"role": "user", "content": prompt}], temperature=0.0, max_tokens=256
        )
    assert text.strip()
    assert repetition_cut(text) is None, "the answer holds no loop"
    assert stats.completion_tokens < 256, "generation stopped before the token limit"


async def test_local_embedder_gives_384_normalized_floats() -> None:
    embedder = LocalEmbedder(load_settings(embed="local"))
    dog, puppy, tax = await embedder.embed(
        ["The dog sleeps on the sofa.", "A puppy is napping on the couch.", "Tax law changed."]
    )
    assert len(dog) == 384 and all(isinstance(x, float) for x in dog)
    assert math.isclose(sum(x * x for x in dog), 1.0, rel_tol=1e-4)

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(dog, puppy) > cosine(dog, tax)


async def test_the_embedder_leaves_the_cores_to_the_chat_model() -> None:
    """torch's thread pool beside llama.cpp's threads cut the chat model's generation
    from ~70 to under 20 tokens/s here; the embedder keeps to `TORCH_THREADS`."""
    import torch

    embedder = LocalEmbedder(load_settings(embed="local"))
    await embedder.embed(["Ein Satz."])
    assert torch.get_num_threads() == TORCH_THREADS


async def test_a_prompt_resumes_from_an_older_call_that_shares_its_head() -> None:
    """The kept states (`NOVABERG_LOCAL_PREFIX_CACHE_MB`): the third call shares its long
    head with the first, not with the second just before it, and evaluates only its own
    tail. llama.cpp alone keeps the last call's state and would evaluate the head again."""
    import llama_cpp

    settings = load_settings(llm="local", llm_timeout=300)
    assert settings.local_prefix_cache_mb > 0
    llm = LocalLLM(settings)
    head = "Regeln: " + "Antworte kurz und sachlich auf Deutsch. " * 8
    evaluated = []
    for text in (head + "Frage eins?", "Etwas ganz anderes.", head + "Frage zwei?"):
        await llm.warm_up()
        model = local._models[llm.model_path]
        before = llama_cpp.llama_perf_context(model._ctx.ctx).n_p_eval
        await llm.chat(Role.CHAT, [{"role": "user", "content": text}], max_tokens=2)
        evaluated.append(llama_cpp.llama_perf_context(model._ctx.ctx).n_p_eval - before)
    assert evaluated[0] > 100  # the whole head, once
    assert evaluated[2] < 20, f"the head was evaluated again: {evaluated}"
