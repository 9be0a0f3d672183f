"""The conversation vector reads the situation and the open questions: its gv_detail
carries the turn's knowledge gaps, the colour mix (hue) and the curiosity they give, and the
dispatcher stores them in `gv:detail` (real CharacterGraph, scripted model, real Redis and
PostgreSQL)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, cast

import pytest
from graph_helpers import script_human
from test_character_graph import PAIR, script_character, user_turn
from test_understanding import SITUATION_BELLO, script_situation

from novaberg.graph.contract import GraphDeps
from novaberg.graph.nodes.conversation_vector import conversation_vector
from novaberg.graph.personality import Emotion, InternalPersonality, Personality
from novaberg.graph.runner import GraphRuntime
from novaberg.graph.state import ConversationState
from novaberg.impulses import shadow_queue
from novaberg.impulses.shadow_queue import ShadowTask
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store import keys
from novaberg.store.pipeline_log import read_turn

NEW_FIELDS = {"neugier", "neugier_anteile", "wissensluecken", "farbton", "neugier_ausfall"}
QUIET: dict[str, Any] = {**SITUATION_BELLO, "objekte": [], "objekt_bezug": "", "offen": []}


async def _vector_row(deps: GraphDeps, turn_id: str) -> dict[str, Any]:
    await deps.log.flush()  # type: ignore[union-attr]
    rows = [r for r in await read_turn(deps.pool, turn_id) if r["node"] == "conversation_vector"]
    return cast(dict[str, Any], rows[-1]["inhalt"])


async def test_the_situation_gives_the_gaps_and_they_raise_the_curiosity_stored(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    script_situation(scripted)  # Bello: an open question, the flat (acute) with two gaps
    _, open_turn, _ = await user_turn(runtime, "Wie geht's dir?")
    detail = open_turn["hypothesis_detail"]
    assert set(detail) >= NEW_FIELDS
    assert [(g["frage"], g["quelle"]) for g in detail["wissensluecken"]] == [
        ("Darf Bello in die Wohnung?", "sachlage"),
        ("Wohnung: miete?", "objekt"),
        ("Wohnung: haustiere?", "objekt"),
    ]
    assert detail["neugier_anteile"]["luecken"] == pytest.approx(0.3)
    assert detail["farbton"]["sektor"] is not None  # freude and Nova's mood have a colour
    stored = json.loads(await deps.redis.get(keys.hypothesis_detail(PAIR)))
    assert stored["neugier"] == detail["neugier"]
    assert stored["wissensluecken"] == detail["wissensluecken"]
    assert stored["farbton"] == detail["farbton"]
    row = await _vector_row(deps, open_turn["turn_id"])
    assert row["neugier"] == detail["neugier"] and len(row["wissensluecken"]) == 3

    # the same turn with nothing open: no gaps, less curiosity
    script_situation(scripted, QUIET)
    _, quiet_turn, _ = await user_turn(runtime, "Wie geht's dir?")
    quiet = quiet_turn["hypothesis_detail"]
    assert quiet["wissensluecken"] == [] and quiet["neugier_anteile"]["luecken"] == 0.0
    assert quiet["neugier"] < detail["neugier"]
    stored = json.loads(await deps.redis.get(keys.hypothesis_detail(PAIR)))
    assert stored["wissensluecken"] == [] and stored["neugier"] == quiet["neugier"]


async def test_an_open_knowledge_gap_of_the_pair_raises_the_curiosity(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    script_situation(scripted, QUIET)
    _, before, _ = await user_turn(runtime, "Wie geht's dir?")
    row_id, _ = await shadow_queue.push(
        deps.pool,
        ShadowTask(PAIR.user_id, PAIR.character_id, "wissensluecken", "Everest", "Wie hoch?"),
        datetime.now(UTC),
    )
    _, after, _ = await user_turn(runtime, "Wie geht's dir?")
    [gap] = after["hypothesis_detail"]["wissensluecken"]
    assert gap == {
        "frage": "Everest: Wie hoch?",
        "quelle": "wissensluecken",
        "id": f"auftrag-{row_id}",
        "ziel_naehe": None,  # no goal is active: nothing to be close to
    }
    # the moods differ from turn to turn; the gap's share is what the open gap adds
    shares = before["hypothesis_detail"]["neugier_anteile"]
    assert shares["luecken"] == 0.0
    shares, curious = (after["hypothesis_detail"][k] for k in ("neugier_anteile", "neugier"))
    assert shares["luecken"] == pytest.approx(0.1)
    assert curious == pytest.approx(shares["farbe"] + shares["luecken"] + shares["ziele"])


def _state(deps: GraphDeps, goal_vectors: dict[int, list[float]]) -> ConversationState:
    """A greeting (no hypothesis call) by a curious counterpart with the Bello situation."""
    external, internal = Personality(), InternalPersonality()
    external.emotion = Emotion(emotion="neugierig", arousal=0.6, intent="begruessung")
    internal.emotion = Emotion(emotion="freude", arousal=0.4)
    return cast(
        ConversationState,
        {
            "user_id": PAIR.user_id,
            "character_id": PAIR.character_id,
            "turn_id": "t-ziel",
            "external": external,
            "internal": internal,
            "situation": SITUATION_BELLO,
            "object_judgement": [{"objekt": "Wohnung", "strecke": 2, "status": "offen"}],
            "goal_vectors": goal_vectors,
        },
    )


async def test_a_gap_close_to_an_active_goal_gives_the_goal_boost(
    deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    near = (await deps.model.embed(["Wohnung: haustiere?"]))[0]
    far = (await deps.model.embed(["Segeln auf der Ostsee im Sommer"]))[0]
    without = (await conversation_vector(_state(deps, {}), deps))["hypothesis_detail"]
    assert scripted.calls == [], "a greeting makes no hypothesis call; no goals, no embedding"
    with_far = (await conversation_vector(_state(deps, {1: far}), deps))["hypothesis_detail"]
    with_near = (await conversation_vector(_state(deps, {1: near}), deps))["hypothesis_detail"]

    assert without["neugier_anteile"]["ziele"] == 0.0
    assert with_near["neugier_anteile"]["ziele"] == pytest.approx(0.3)
    assert with_near["neugier"] > without["neugier"]
    assert with_far["neugier"] < with_near["neugier"]
    closeness = {g["frage"]: g["ziel_naehe"] for g in with_near["wissensluecken"]}
    assert closeness["Wohnung: haustiere?"] == pytest.approx(1.0)
    # the colour: a curious counterpart and a glad Nova mix between sectors 8 and 1
    assert with_near["farbton"]["sektor"] in (8, 1) and with_near["neugier_anteile"]["farbe"] > 0


async def test_a_failed_embedding_leaves_the_boost_unmeasured(
    deps: GraphDeps, monkeypatch: pytest.MonkeyPatch
) -> None:
    from novaberg.llm.errors import ModelError

    async def broken(_texts: list[str]) -> list[list[float]]:
        raise ModelError("embedder down")

    monkeypatch.setattr(deps.model, "embed", broken)
    detail = (await conversation_vector(_state(deps, {1: [1.0] * 384}), deps))["hypothesis_detail"]
    assert detail["neugier_anteile"]["ziele"] is None
    assert detail["neugier_ausfall"].startswith("embedding_gescheitert")
    assert detail["neugier"] == pytest.approx(
        detail["neugier_anteile"]["farbe"] + detail["neugier_anteile"]["luecken"]
    )
