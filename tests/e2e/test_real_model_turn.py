"""One full turn with the real embedded models: SmolLM2-135M (llama.cpp) and MiniLM.

HumanGraph then CharacterGraph, as the prompt and event consumers run them, on the real
Redis and PostgreSQL. The tiny model's words are not judged — only that the path holds:
a non-empty answer leaves, and both perceptions produced valid labels (model output or the
documented fallbacks, never garbage).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from novaberg.config import EmbedBackend, LLMBackend, Settings
from novaberg.ei.labels import INTENTS, LANGUAGE_STYLES, MODES, RELATIONSHIP_DYNAMICS, TONES
from novaberg.graph.contract import RELEASE_NODE, GraphDeps
from novaberg.graph.personality import Emotion
from novaberg.graph.runner import GraphRuntime, run_turn_inprocess
from novaberg.llm.embeddings import LocalEmbedder
from novaberg.llm.layer import ModelLayer
from novaberg.llm.local import LocalLLM
from novaberg.pair import Pair
from novaberg.store.session import read_turns

pytestmark = [pytest.mark.model, pytest.mark.timeout(1800)]
"""Some 20 small-model calls on a shared 2-core machine take minutes, not seconds."""

PAIR = Pair("meister", "nova")
EMOTIONS = {
    "begeisterung", "freude", "dankbarkeit", "zufriedenheit", "stress", "unsicherheit",
    "ueberrascht", "verwundert", "verzweiflung", "traurigkeit", "frustration",
    "enttaeuschung", "wut", "aerger", "hoffnung", "neugierig", "neutral",
}  # fmt: skip
"""The perception's emotion labels (spec pipeline §5 perzeption)."""


@pytest.fixture
async def real_deps(settings: Settings, redis: Any, db: Any) -> AsyncIterator[GraphDeps]:
    local = settings.model_copy(
        update={"llm": LLMBackend.LOCAL, "embed": EmbedBackend.LOCAL, "llm_timeout": 300.0}
    )
    model = ModelLayer(LocalLLM(local), LocalEmbedder(local))
    deps = GraphDeps(settings=local, redis=redis, pool=db, model=model)
    yield deps
    assert deps.log is not None
    await deps.log.close()


def assert_valid_perception(emotion: Emotion) -> None:
    assert emotion.emotion in EMOTIONS
    assert 0.0 <= emotion.arousal <= 1.0
    assert emotion.intent in INTENTS
    assert emotion.tone in TONES
    assert emotion.mode in MODES
    assert emotion.language_style in LANGUAGE_STYLES
    assert emotion.relationship_dynamic in RELATIONSHIP_DYNAMICS


async def test_both_graphs_with_the_real_model(real_deps: GraphDeps) -> None:
    runtime = GraphRuntime(real_deps)
    stages: list[tuple[str, str]] = []

    def on_stage(graph: str, node: str, _state: dict[str, Any], ms: float) -> None:
        stages.append((graph, node))
        print(f"{graph}/{node}: {ms:.0f} ms", flush=True)  # progress with -s

    result = await run_turn_inprocess(runtime, PAIR, "Hallo Nova, wie geht es dir heute?", on_stage)

    assert "pfad1_ausfall" not in result.event_payload
    assert ("character", RELEASE_NODE) in stages
    # Path 1's tail runs concurrently with the CharacterGraph and may end after it
    assert [s for s in stages if s[0] == "character"][-1] == ("character", "dispatcher")
    answer = result.response["nachricht"]
    assert isinstance(answer, str) and answer.strip()
    assert result.character_state["tribunal_verdict"] in {"ok", "warnung", "ablehnen"}
    assert result.character_state["evaluate_decision"] in {"ok", "fallback"}

    assert_valid_perception(result.human_state["external"].emotion)  # the user's utterance
    assert_valid_perception(result.character_state["internal"].emotion)  # Nova's answer

    user, nova = await read_turns(real_deps.redis, PAIR)
    assert user["rolle"] == "user" and nova["rolle"] == "assistant"
    assert nova["inhalt"] == answer
