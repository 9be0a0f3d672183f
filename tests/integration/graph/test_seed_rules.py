"""Small rules of the seeds, each seen downstream through the real CharacterGraph: the
tribunal's thresholds per role (settings), the origin gate of the emotional gravitation,
and the ungated goal pull on the salience of Nova's answer."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest
from graph_helpers import PERCEPTION_OK, SCORE_OK, script_human
from test_character_graph import (
    AFTER,
    PAIR,
    RELEASED,
    run_character,
    script_character,
    user_turn,
)

from novaberg.graph.contract import GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store import goals
from novaberg.store.pipeline_log import read_turn
from novaberg.store.short_term import ShortTermStore

FIXED_NOW = 1_790_000_000.0

# --- tribunal thresholds per role (seed 002 §2.5) ---------------------------------------------

EDGY = "Naja, das hättest du dir auch denken können."
"""A draft every judge scores 0.5: fine by the defaults (warn from 0.7)."""


def middling_judges(scripted: ScriptedLLM) -> None:
    match = "Antwort: Naja, das hättest"
    scripted.add(
        match, {"score": 0.1, "direktiven_score": 0.0, "begruendung": "ok"}, schema="JuristVerdict"
    )
    scripted.add(match, {"score": 0.5, "begruendung": "spitz"}, schema="PsychologistVerdict")
    scripted.add(match, {"score": 0.5, "begruendung": "herablassend"}, schema="EthicistVerdict")


@pytest.fixture
async def strict_deps(deps: GraphDeps) -> AsyncIterator[GraphDeps]:
    """The same services with a psychologist and an ethicist who warn from 0.4."""
    settings = deps.settings.model_copy(
        update={"tribunal_psychologist_warn": 0.4, "tribunal_ethicist_warn": 0.4}
    )
    strict = GraphDeps(
        settings=settings, redis=deps.redis, pool=deps.pool, model=deps.model, clock=deps.clock
    )
    yield strict
    assert strict.log is not None
    await strict.log.close()


async def test_default_thresholds_let_a_middling_answer_pass(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted, answer=EDGY)
    middling_judges(scripted)
    nodes, final, payload = await user_turn(runtime, "Ich habe den Zug verpasst.")

    assert "corrector" not in nodes
    assert final["tribunal_verdict"] == "ok" and RELEASED["response"]["nachricht"] == EDGY
    await deps.log.flush()  # type: ignore[union-attr]
    (row,) = [r for r in await read_turn(deps.pool, payload["turn_id"]) if r["node"] == "tribunal"]
    assert row["inhalt"]["schwellen"]["psychologe"] == [0.7, 0.9]
    assert row["inhalt"]["schwellen"]["jurist_direktiven"] == [0.5, 0.7]
    assert row["inhalt"]["werte"]["psychologe"] == 0.5


async def test_stricter_psychologist_and_ethicist_send_the_same_answer_to_the_corrector(
    strict_deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """Same scores, thresholds lowered by settings: two warnings, so the answer is rewritten
    and the rewrite (judged ok) is what the person gets."""
    script_human(scripted)
    script_character(scripted, answer=EDGY)
    middling_judges(scripted)
    nodes, final, payload = await user_turn(GraphRuntime(strict_deps), "Ich habe den Zug verpasst.")

    votes = {v["role"]: v["vote"] for v in AFTER["corrector"]["tribunal_votes"]}
    assert votes == {"jurist": "ok", "psychologe": "warnung", "ethiker": "warnung"}
    assert "corrector" in nodes and final["correction_round"] == 1
    assert RELEASED["response"]["nachricht"] == "Korrigierte freundliche Antwort."
    await strict_deps.log.flush()  # type: ignore[union-attr]
    rows = [r for r in await read_turn(strict_deps.pool, payload["turn_id"])]
    first = next(r for r in rows if r["node"] == "tribunal")
    assert first["inhalt"]["urteil"] == "warnung"
    assert first["inhalt"]["schwellen"]["psychologe"] == [0.4, 0.9]
    assert first["inhalt"]["schwellen"]["jurist"] == [0.7, 0.9]


# --- origin gate of the emotional gravitation (seed 000 §7a) -----------------------------------

SAD = "Mein Hund Bello ist gestern gestorben."


def script_sad_memory(scripted: ScriptedLLM) -> None:
    """Turn 1 leaves a sad short-term memory whose words the later stimulus repeats."""
    sad = {**PERCEPTION_OK, "emotional": {"emotion": "traurigkeit", "arousal": 0.8}}
    script_human(scripted, perception=sad)
    script_character(scripted)
    scripted.add(r"Verdichte die Äußerung des Nutzers", "Sein Hund Bello ist gestern gestorben.")
    scripted.add(r"als eigenständige Suchanfrage", SAD)


def weights(node: str) -> dict[str, float]:
    return {e["emotion"]: e["gewicht"] for e in AFTER[node]["nova_emotion_history"]}


async def test_own_thought_closes_the_origin_gate_of_the_emotional_gravitation(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """The same sad memory near the same words: a user turn is pulled toward traurigkeit,
    Nova's own thought is not — her emotion after the node is the one before it."""
    script_sad_memory(scripted)
    await user_turn(runtime, SAD)
    await user_turn(runtime, SAD)  # the user turn: the gate is open
    assert AFTER["enricher"]["gravitation_points"]
    assert weights("emotional_gravitation")["traurigkeit"] > weights("ei_calc").get(
        "traurigkeit", 0.0
    )

    impulse = {
        "turn_id": uuid.uuid4().hex,
        "eigener_gedanke": SAD,
        "reiz_herkunft": "eigener_impuls",
        "gedanke_arousal": 0.5,
    }
    _, final = await run_character(runtime, impulse, source="character")
    points = AFTER["enricher"]["gravitation_points"]
    assert points and points[0]["emotion"] == "traurigkeit"  # found, as on the user turn
    assert weights("emotional_gravitation") == weights("ei_calc")  # but not applied
    assert (
        AFTER["emotional_gravitation"]["internal"].emotion == AFTER["ei_calc"]["internal"].emotion
    )
    await deps.log.flush()  # type: ignore[union-attr]
    rows = await read_turn(deps.pool, final["turn_id"])
    (row,) = [r for r in rows if r["node"] == "emotional_gravitation"]
    assert row["inhalt"] == {"punkte": len(points), "tor": "eigener_gedanke"}


# --- the ungated goal pull lifts the salience of Nova's answer (seed 002 §3.2) ---------------

CELLO = "Ich lerne gerade Cello spielen."


def script_scores(scripted: ScriptedLLM) -> None:
    """The person's utterance scores 0.2 (a small duty), Nova's answer 0.5."""
    script_human(scripted, score={**SCORE_OK, "salienz": 0.2})
    script_character(scripted)
    scripted.add("die eigene Antwort von", {**SCORE_OK, "salienz": 0.5}, schema="SalienceScore")


async def nova_memory(deps: GraphDeps, turn_id: str) -> dict[str, str]:
    store = ShortTermStore(deps.redis)
    (key,) = await store.keys_of_turn(PAIR, turn_id, "assistant")
    entry = await store.get(key)
    assert entry is not None
    return entry.fields


async def test_a_goal_below_the_threshold_still_lifts_what_nova_says(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """The same turn twice; before the second, Nova holds a goal close to the utterance but
    too weak to activate (0.3 < 0.40). No goal is activated and the gravitation term stays
    0 — yet her answer's salience rises by the pull's share of the headroom."""
    script_scores(scripted)
    _, _, first = await user_turn(runtime, CELLO)
    assert AFTER["enricher"]["raw_goal_pull"] == 0.0
    plain = AFTER["salience"]["pending_writes"][0]["data"]["salienz_obj"]

    vector = (await deps.model.embed([CELLO]))[0]
    async with deps.pool.connection() as conn:
        await goals.insert_goal(
            conn,
            PAIR,
            statement="Nova will mehr über Musik erfahren",
            embedding=vector,
            motivation=0.3,
            now=datetime.fromtimestamp(FIXED_NOW, UTC),
        )
    _, final, second = await user_turn(runtime, CELLO)

    assert AFTER["enricher"]["activated_goals"] == [] and final["gravitation_term"] == 0.0
    assert final["raw_goal_pull"] == pytest.approx(0.3)
    pulled = AFTER["salience"]["pending_writes"][0]["data"]["salienz_obj"]
    assert plain["salienz_roh"] == pulled["salienz_roh"] == 0.5
    arousal = 1 + 0.3 * pulled["arousal"]
    assert plain["salienz"] == pytest.approx(0.5 * arousal)
    assert pulled["salienz"] == pytest.approx((0.5 + 0.3 * 0.5) * arousal)
    assert pulled["zielsog"] == pytest.approx(0.3)
    # the stored memory of Nova's answer carries the lifted salience
    before = await nova_memory(deps, first["turn_id"])
    after = await nova_memory(deps, second["turn_id"])
    assert float(after["salienz_eingang"]) > float(before["salienz_eingang"])
    await deps.log.flush()  # type: ignore[union-attr]
    rows = await read_turn(deps.pool, second["turn_id"])
    (row,) = [r for r in rows if r["node"] == "salience" and r["quelle"] == "character"]
    assert row["inhalt"]["zielsog"] == pytest.approx(0.3)
