"""HumanGraph (path 1) with scripted model rules against the real Redis and PostgreSQL."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from graph_helpers import HUMAN_STEPS, PERCEPTION_OK, SCORE_OK, in_steps, script_human

from novaberg.graph.contract import GraphDeps, HumanTurn
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store.pipeline_log import read_turn
from novaberg.store.session import read_turns

PAIR = Pair("meister", "nova")
SHORT = "Ich ziehe nach Köln!"
SESSION_FIELDS = {
    "rolle", "inhalt", "zeit", "intentionen", "emotion", "arousal", "modus", "kern",
    "emotions_vektor", "sprach_stil", "beziehungs_dynamik", "tone", "herkunft", "themen",
    "embedding", "turn_id", "nachrichten_ids",
}  # fmt: skip


def _turn(text: str) -> HumanTurn:
    return HumanTurn(
        pair=PAIR,
        turn_id=uuid.uuid4().hex,
        prompt=text,
        message_ids=[uuid.uuid4().hex, uuid.uuid4().hex],
        received_at=1_790_000_000.0,
    )


async def _run(runtime: GraphRuntime, turn: HumanTurn) -> tuple[list[str], dict[str, Any]]:
    nodes: list[str] = []
    final: dict[str, Any] = {}
    async for node, state in runtime.stream_human(runtime.human_state(turn)):
        nodes.append(node)
        final = state
    return nodes, final


async def _pending_rows(deps: GraphDeps, turn_id: str) -> list[dict[str, Any]]:
    async with deps.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT * FROM pending_writes_log WHERE turn_id = %s ORDER BY id", (turn_id,)
        )
        return list(await cur.fetchall())


async def _links(deps: GraphDeps, turn_id: str) -> list[str]:
    async with deps.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT kzg_id FROM verbindung WHERE turn_id = %s ORDER BY id", (turn_id,)
        )
        return [r["kzg_id"] for r in await cur.fetchall()]


async def test_short_text_complete_turn_two_calls_and_logs(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    turn = _turn(SHORT)
    nodes, final = await _run(runtime, turn)
    assert in_steps(nodes, HUMAN_STEPS) == HUMAN_STEPS

    # perception and the situation's reading at once, one salience score (short text, one
    # segment), then the short-term memory condenses the accepted segment (a chat call)
    schemas = [call["schema"] for call in scripted.calls]
    assert set(schemas[:2]) == {"PerceptionResult", "SituationReading"}
    assert schemas[2:] == ["SalienceScore", None]

    (stored,) = await read_turns(deps.redis, PAIR)
    assert set(stored) == SESSION_FIELDS
    assert stored["rolle"] == "user" and stored["inhalt"] == SHORT
    assert stored["emotion"] == "freude" and stored["arousal"] == 0.7
    assert stored["tone"] == "empathisch" and stored["beziehungs_dynamik"] == "vertrauen"
    assert stored["themen"] == ["Umzug nach Köln"]
    assert stored["intentionen"] == ["information_teilen", "emotionaler_ausdruck"]
    assert stored["herkunft"] == "nutzer_turn"
    assert stored["turn_id"] == turn.turn_id
    assert stored["nachrichten_ids"] == turn.message_ids
    assert len(stored["embedding"]) == deps.settings.embed_dim
    assert stored["emotions_vektor"] == final["external"].emotion.emotions_vector != ""
    assert stored["zeit"] == 1_790_000_000.0

    assert final["human_salience"] == 0.8
    assert final["salience_failure"] is None
    (write,) = final["pending_writes"]
    assert write["target"] == "kzg" and write["action"] == "create"
    assert write["data"]["segment"] == SHORT
    assert (write["data"]["segment_index"], write["data"]["segment_gesamt"]) == (0, 1)
    assert write["data"]["salienz_obj"]["salienz"] == 0.8
    assert write["data"]["salienz_obj"]["emotion"] == "freude"

    (row,) = await _pending_rows(deps, turn.turn_id)
    assert (row["ziel"], row["aktion"], row["quelle"]) == ("kzg", "create", "human")
    assert row["ergebnis"].startswith("kzg:{meister}:nova:")  # stored in short-term memory
    assert row["daten"]["segment"] == SHORT
    assert await _links(deps, turn.turn_id) == [row["ergebnis"]]  # written with the log row

    await deps.log.flush()  # type: ignore[union-attr]
    rows = await read_turn(deps.pool, turn.turn_id)
    node_rows = [r for r in rows if r["art"] == "node"]
    assert [r["node"] for r in node_rows] == nodes
    assert {r["node"]: r["modell_aufrufe"] for r in node_rows} == {
        "perception": 1, "situation_reader": 1, "enricher": 0, "ei_calc": 0,
        "session_turn": 0, "salience": 1, "dispatcher": 1,
    }  # fmt: skip
    assert all(r["ergebnis"] == "ok" and r["dauer_ms"] is not None for r in node_rows)
    assert all(r["quelle"] == "human" for r in node_rows)


async def test_unreadable_salience_writes_nothing_and_salienz_human_none(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted, score={**SCORE_OK, "salienz": "ziemlich hoch"})
    turn = _turn(SHORT)
    _, final = await _run(runtime, turn)
    assert final["human_salience"] is None
    assert final["pending_writes"] == []
    assert "unlesbar" in final["salience_failure"]
    assert await _pending_rows(deps, turn.turn_id) == []
    # the utterance still reaches the session, complete
    (stored,) = await read_turns(deps.redis, PAIR)
    assert stored["inhalt"] == SHORT and stored["emotion"] == "freude"
    # one perception call and the situation's reading + the salience call and its retry
    schemas = [c["schema"] for c in scripted.calls]
    assert set(schemas[:2]) == {"PerceptionResult", "SituationReading"}
    assert schemas[2:] == ["SalienceScore", "SalienceScore"]


async def test_unreadable_perception_uses_fallbacks_visibly(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    scripted.add(".*", schema="PerceptionResult", fault="malformed")
    turn = _turn(SHORT)
    _, final = await _run(runtime, turn)
    emotion = final["external"].emotion
    assert (emotion.emotion, emotion.arousal, emotion.intent, emotion.tone) == (
        "neutral", 0.5, "smalltalk", "sachlich",
    )  # fmt: skip
    await deps.log.flush()  # type: ignore[union-attr]
    rows = {r["node"]: r for r in await read_turn(deps.pool, turn.turn_id)}
    assert rows["perception"]["inhalt"]["ausfall"] == "unlesbar"
    assert rows["perception"]["inhalt"]["fallback"] is True
    assert rows["perception"]["modell_aufrufe"] == 2  # the call and its retry


async def test_long_text_is_segmented_and_scored_per_segment(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    scripted.add(".*", schema="SalienceScore", output={**SCORE_OK, "salienz": 0.4}, times=1)
    scripted.add(
        ".*",
        schema="Segmentation",
        output={
            "segmente": [
                {"segment": "Morgen ziehe ich nach Köln.", "thema_kurz": "umzug"},
                {"segment": "Meine Schwester hilft mir dabei.", "thema_kurz": "familie"},
            ]
        },
    )
    text = "Morgen ziehe ich nach Köln. Meine Schwester hilft mir dabei, das wird anstrengend."
    _, final = await _run(runtime, _turn(text))
    assert [c["schema"] for c in scripted.calls].count("SalienceScore") == 2
    assert len(final["pending_writes"]) == 2
    assert sorted(w["data"]["segment_index"] for w in final["pending_writes"]) == [0, 1]
    assert {w["data"]["segment_gesamt"] for w in final["pending_writes"]} == {2}
    assert final["human_salience"] == 0.8  # max of the raw segment saliences (0.4, 0.8)


async def test_gravitation_boosts_salience_but_not_salienz_human(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    vector = (await deps.model.embed([SHORT]))[0]
    async with deps.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO ziele (user_id, character_id, zielsatz, motivation, embedding)"
            " VALUES ('nova', 'meister', 'Mehr über Köln erfahren', 1.0, %s)",
            (vector,),
        )
    script_human(scripted, score={**SCORE_OK, "salienz": 0.3})
    _, final = await _run(runtime, _turn(SHORT))
    assert final["gravitation_term"] == 0.5  # 0.5 × strength 1.0
    assert len(final["activated_goals"]) == 1
    (write,) = final["pending_writes"]
    assert write["data"]["salienz_obj"]["salienz"] == 0.8  # round(min(1, 0.3 + 0.5), 2)
    assert final["human_salience"] == 0.3


async def test_event_payload_carries_path1_results(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    turn = _turn(SHORT)
    _, final = await _run(runtime, turn)
    payload = runtime.human_event_payload(turn, final, None)
    assert payload["current_emotion"] == PERCEPTION_OK["emotional"]["emotion"]
    assert payload["salienz_human"] == 0.8
    assert payload["user_intentionen"] == ["information_teilen", "emotionaler_ausdruck"]
    assert payload["nachrichten_ids"] == turn.message_ids
    assert payload["prompt_thema"] == "Umzug nach Köln"
    assert "pfad1_ausfall" not in payload
    failed = runtime.human_event_payload(turn, None, "RuntimeError: weg")
    assert failed["pfad1_ausfall"] == "RuntimeError: weg"
    assert failed["salienz_human"] is None and failed["current_emotion"] is None


async def test_a_failed_link_does_not_cost_the_write_log(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    turn = _turn(SHORT)
    async with deps.pool.connection() as conn:  # every link insert fails from now on
        await conn.execute(
            "ALTER TABLE verbindung ADD CONSTRAINT nie CHECK (kzg_id = '') NOT VALID"
        )
    try:
        await _run(runtime, turn)
        (row,) = await _pending_rows(deps, turn.turn_id)
        assert row["ergebnis"].startswith("kzg:{meister}:nova:")
        assert await _links(deps, turn.turn_id) == []
        (stored,) = await read_turns(deps.redis, PAIR)
        assert stored["inhalt"] == SHORT
    finally:
        async with deps.pool.connection() as conn:
            await conn.execute("ALTER TABLE verbindung DROP CONSTRAINT nie")


async def test_a_failed_memory_write_keeps_the_session_turn_and_the_write(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """Storing in short-term memory fails (here: Redis refuses, the pair's index key holds
    the wrong type): the turn goes on, the session has what was said, and the write is
    logged as failed with its data."""
    from novaberg.store.keys import short_term_index

    script_human(scripted)
    await deps.redis.set(short_term_index(PAIR), "kein Set")  # WRONGTYPE for the create script
    turn = _turn(SHORT)
    nodes, final = await _run(runtime, turn)
    assert in_steps(nodes, HUMAN_STEPS) == HUMAN_STEPS
    (stored,) = await read_turns(deps.redis, PAIR)
    assert stored["inhalt"] == SHORT and stored["turn_id"] == turn.turn_id
    assert final["session_turn_written"] is True
    (row,) = await _pending_rows(deps, turn.turn_id)
    assert row["ergebnis"] == "fehlgeschlagen" and row["daten"]["segment"] == SHORT


async def _xmin(deps: GraphDeps, table: str, turn_id: str) -> list[str]:
    """The transaction ids that wrote the turn's rows of `table` (test-owned table names)."""
    async with deps.pool.connection() as conn:
        cur = await conn.execute(
            f"SELECT xmin::text AS x FROM {table} WHERE turn_id = %s",
            (turn_id,),
        )
        return [r["x"] for r in await cur.fetchall()]


async def test_the_archive_row_is_written_while_the_memory_writes_run(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """The archive row goes out on its own as the dispatcher starts: it is committed while
    short-term condensing (here 300 ms) still runs, in a transaction of its own; the write
    log and the link follow in one transaction once the memory writes are done. The row
    is the turn as `session_turn` stored it (same time), without the late kern."""
    script_human(scripted)
    scripted.add("Verdichte die Äußerung", "Zieht nach Köln.", latency_ms=300)
    turn = _turn(SHORT)
    await _run(runtime, turn)
    async with deps.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT a.archiviert_am, a.zeit, a.inhalt, p.erstellt_am"
            " FROM gespraechsarchiv a JOIN pending_writes_log p USING (turn_id)"
            " WHERE a.turn_id = %s",
            (turn.turn_id,),
        )
        (row,) = await cur.fetchall()
    assert (row["erstellt_am"] - row["archiviert_am"]).total_seconds() >= 0.25
    (archived,) = await _xmin(deps, "gespraechsarchiv", turn.turn_id)
    (logged,) = await _xmin(deps, "pending_writes_log", turn.turn_id)
    assert logged != archived
    assert await _xmin(deps, "verbindung", turn.turn_id) == [logged]
    (stored,) = await read_turns(deps.redis, PAIR)
    assert row["inhalt"] == stored["inhalt"] == SHORT
    assert row["zeit"].timestamp() == pytest.approx(float(stored["zeit"]), abs=1e-6)
    assert stored["kern"] == "Zieht nach Köln."  # completed after the row was written


async def test_a_failed_archive_row_does_not_cost_the_write_log(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    turn = _turn(SHORT)
    async with deps.pool.connection() as conn:  # every archive insert fails from now on
        await conn.execute(
            "ALTER TABLE gespraechsarchiv ADD CONSTRAINT nie CHECK (inhalt = '') NOT VALID"
        )
    try:
        await _run(runtime, turn)
        (row,) = await _pending_rows(deps, turn.turn_id)
        assert row["ergebnis"].startswith("kzg:{meister}:nova:")
        assert await _links(deps, turn.turn_id) == [row["ergebnis"]]
        assert await _xmin(deps, "gespraechsarchiv", turn.turn_id) == []
        await deps.log.flush()  # type: ignore[union-attr]
        (logged,) = [
            r for r in await read_turn(deps.pool, turn.turn_id) if r["node"] == "dispatcher"
        ]
        assert logged["inhalt"]["archiv"] == "fehlgeschlagen"
    finally:
        async with deps.pool.connection() as conn:
            await conn.execute("ALTER TABLE gespraechsarchiv DROP CONSTRAINT nie")
