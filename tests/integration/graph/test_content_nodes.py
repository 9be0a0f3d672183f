"""Composer, objection verdict, thinker tools, imprint, uptake and the dispatcher's
snapshots through the real CharacterGraph, scripted model, real Redis and PostgreSQL."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest
from graph_helpers import SCORE_OK, script_human
from redis.asyncio.client import Pipeline
from searxng_double import SearxngDouble, searxng_server
from test_character_graph import (
    AFTER,
    ANSWER,
    NOVA_PERCEPTION,
    NOW,
    PAIR,
    RESPONDER,
    ROUTER_PLAIN,
    human_turn,
    responder_calls,
    run_human,
    script_character,
    user_turn,
)

from novaberg.graph.contract import CharacterTurn, GraphDeps
from novaberg.graph.runner import GraphRuntime
from novaberg.impulses import shadow_queue
from novaberg.impulses.shadow_queue import ShadowTask
from novaberg.llm.scripted import ScriptedLLM
from novaberg.store import keys
from novaberg.store.pipeline_log import read_turn
from novaberg.store.short_term import ShortTermStore
from novaberg.websearch import SearxngProvider

ROME_QUESTION = "wie war dein Urlaub in Rom?"
NEVER_IN_ROME = "Nova war noch nie in Rom."
COMPOSER = r"Du bereitest den Inhalt einer Antwort vor"
"""Matches only the composer's prompt."""
ROME_VERDICT = """EINWAND: ja
GEPRUEFT: Laut Erinnerung war Person B noch nie in Rom.
BEWERTUNG: trifft_nicht_zu
STAERKE: 0.9
QUELLE: fakt
---
Person B war nie in Rom und sagt das offen. Sie fragt, wie Person A darauf kommt."""
OBJECTING_ANSWER = "Ich war noch nie in Rom – wie kommst du darauf?"


async def remember(deps: GraphDeps, text: str, like: str) -> str:
    """A short-term memory `text` whose vector is that of `like` (so a turn saying `like`
    finds it whatever the embedder makes of the words)."""
    vector = (await deps.model.embed([like]))[0]
    fields = {
        "user_id": PAIR.user_id,
        "character_id": PAIR.character_id,
        "inhalt": text,
        "salienz": "0.8",
        "beobachter": "assistant",
        "themen": "reise",
    }
    store = ShortTermStore(deps.redis)
    return await store.create(
        PAIR, fields, vector, ttl_seconds=3600, epoch_ms=int(NOW * 1000) - 60_000
    )


def script_rome(scripted: ScriptedLLM) -> None:
    script_human(scripted)
    script_character(scripted)
    # the composer objects only when the memory it is shown says Nova was never in Rome
    scripted.add(COMPOSER + r".*\[ERINNERUNG\][^\[]*noch nie in Rom", ROME_VERDICT)
    # the responder contradicts only when it is told to ([EINWAND] carries the check)
    scripted.add(r"\[EINWAND\]\n[^\n]*noch nie in Rom.*" + RESPONDER, OBJECTING_ANSWER)


def composer_calls(scripted: ScriptedLLM) -> list[dict[str, Any]]:
    return [
        c
        for c in scripted.calls
        if c["schema"] is None and "Du bereitest den Inhalt" in c["prompt"]
    ]


async def test_premise_the_memory_contradicts_reaches_the_answer_as_an_objection(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    await remember(deps, NEVER_IN_ROME, ROME_QUESTION)
    script_rome(scripted)
    nodes, final, payload = await user_turn(runtime, ROME_QUESTION)

    # the composer ran in the step right before the responder (next to the vector's call)
    assert nodes.index("responder") - nodes.index("composer") in (1, 2)
    assert set(nodes[nodes.index("responder") - 2 : nodes.index("responder")]) == {
        "composer",
        "conversation_vector",
    }
    (composer_call,) = composer_calls(scripted)
    assert "Person B war noch nie in Rom." in composer_call["prompt"]
    verdict = final["objection_verdict"]
    assert verdict["geliefert"] and verdict["einwand"] and verdict["bewertung"] == "trifft_nicht_zu"
    assert final["response_content"].startswith("Person B war nie in Rom")

    (responder_call,) = responder_calls(scripted)
    prompt = responder_call["prompt"]
    assert "[INHALT]" in prompt and "Person B war nie in Rom und sagt das offen." in prompt
    assert "[EINWAND]\nDie Voraussetzung des Nutzers stimmt nicht:" in prompt
    # the responder no longer reads memory itself
    assert "[ERINNERUNG]" not in prompt and NEVER_IN_ROME not in prompt
    assert final["response"] == OBJECTING_ANSWER
    # the tribunal is told about the contested premise
    assert any("Einwand (trifft_nicht_zu" in note for note in final["node_annotations"])
    # stored: the raw turn keeps the composer's content next to the answer
    await deps.log.flush()  # type: ignore[union-attr]
    rows = await read_turn(deps.pool, payload["turn_id"])
    (raw,) = [r for r in rows if r["art"] == "turn_roh"]
    assert raw["inhalt"]["antwort_inhalt"] == final["response_content"]
    (logged,) = [r for r in rows if r["node"] == "composer"]
    assert logged["inhalt"]["einwandsurteil"]["bewertung"] == "trifft_nicht_zu"


async def test_without_the_memory_there_is_no_objection(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_rome(scripted)
    scripted.add(
        COMPOSER,
        "EINWAND: nein\nGEPRUEFT: nichts bekannt\nBEWERTUNG: trifft_zu\n"
        "STAERKE: 0.3\nQUELLE: fakt\n---\nPerson B erzählt nichts Erfundenes.",
    )
    scripted.add(COMPOSER + r".*\[ERINNERUNG\][^\[]*noch nie in Rom", ROME_VERDICT)  # stays first
    _, final, _ = await user_turn(runtime, ROME_QUESTION)
    assert final["objection_verdict"]["einwand"] is False
    (responder_call,) = responder_calls(scripted)
    assert "[EINWAND]" not in responder_call["prompt"]
    assert final["response"] != OBJECTING_ANSWER


async def test_unreadable_composer_output_keeps_the_prose_and_the_turn(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    scripted.add(COMPOSER, "Person B freut sich und erzählt vom Tag.")
    _, final, _ = await user_turn(runtime, "Wie geht's dir?")
    assert final["objection_verdict"]["geliefert"] is False
    assert final["objection_verdict"]["ausfall"] == "ohne_trenner"
    assert final["response_content"] == "Person B freut sich und erzählt vom Tag."
    (responder_call,) = responder_calls(scripted)
    assert "Person B freut sich und erzählt vom Tag." in responder_call["prompt"]
    assert final["response"]


async def test_failed_composer_call_leaves_empty_content_and_the_answer_comes(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    scripted.add(COMPOSER, fault="timeout")
    _, final, _ = await user_turn(runtime, "Wie geht's dir?")
    assert final["response_content"] == ""
    assert final["objection_verdict"] == {
        "geliefert": False, "einwand": False, "geprueft": "", "bewertung": "", "staerke": None,
        "quelle": "", "ausfall": "aufruf_gescheitert", "ausfall_feld": None,
    }  # fmt: skip
    (responder_call,) = responder_calls(scripted)
    assert "[INHALT]" not in responder_call["prompt"]
    assert final["response"]


# --- thinker with tools -------------------------------------------------------------------------

CAPITAL_ANSWER = "Die Hauptstadt von Australien ist am Ende Sydney."
THINK = "ThinkerCheck"


def tool_step(call: str) -> dict[str, Any]:
    return {"ergebnis": "WERKZEUG", "werkzeug": call, "probleme": "", "korrigierte_antwort": ""}


def thinker_prompts(scripted: ScriptedLLM) -> list[str]:
    return [c["prompt"] for c in scripted.calls if c["schema"] == THINK]


async def test_thinker_searches_the_web_and_corrects_the_answer(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    hits = [
        {"url": "", "title": "x", "content": "ohne Adresse"},
        {"url": "PAGE", "title": "Canberra", "content": "Canberra ist die Hauptstadt Australiens."},
    ]
    with searxng_server(SearxngDouble(pages={"/canberra": "<p>Seit 1913 Hauptstadt.</p>"})) as web:
        hits[1]["url"] = web.base_url + "/canberra"
        web.results = hits
        deps.web = SearxngProvider(web.base_url)
        script_human(scripted)
        script_character(scripted, answer=CAPITAL_ANSWER)
        scripted.add(".*", tool_step("web_search(Hauptstadt Australien)"), schema=THINK)
        scripted.add(
            r"\[BEOBACHTUNG 1\].*Canberra ist die Hauptstadt.*Seit 1913",
            {
                "ergebnis": "KORREKTUR",
                "werkzeug": "",
                "probleme": "Sydney ist falsch",
                "korrigierte_antwort": "Die Hauptstadt von Australien ist Canberra.",
            },
            schema=THINK,
        )
        _, final, _ = await user_turn(runtime, "Was ist die Hauptstadt von Australien am Montag?")
    assert web.queries() == ["Hauptstadt Australien"]
    first, second = thinker_prompts(scripted)
    assert "web_search(" in first and "web_fetch(" in first, "web tools offered with a provider"
    assert "[BEOBACHTUNG 1] web_search(Hauptstadt Australien)" in second
    assert final["thinker_result"] == "korrektur"
    assert final["response"] == "Die Hauptstadt von Australien ist Canberra."


async def test_without_a_provider_no_web_tool_is_offered_or_run(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    assert deps.web is None  # NOVABERG_SEARCH_URL is unset in the tests
    script_human(scripted)
    script_character(scripted, answer=CAPITAL_ANSWER)
    scripted.add(".*", tool_step("web_search(Hauptstadt)"), schema=THINK)
    scripted.add(r"\[BEOBACHTUNG 1\]", {"ergebnis": "OK"}, schema=THINK)
    _, final, _ = await user_turn(runtime, "Was ist die Hauptstadt am Montag?")
    first, second = thinker_prompts(scripted)
    assert "web_search(" not in first and "timeline_check(" in first
    assert "Werkzeug 'web_search' gibt es hier nicht" in second
    assert final["thinker_result"] == "ok" and final["response"] == CAPITAL_ANSWER


async def test_thinker_checks_the_timeline_and_a_repeated_call_hits_the_cache(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    async with deps.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO timeline (user_id, event_time, event_type, title) VALUES"
            " (%s, '2026-12-07 14:00+01', 'termin', 'Zahnarzt Dr. Weiss')",
            (PAIR.user_id,),
        )
    script_human(scripted)
    script_character(scripted, answer="Dein Zahnarzt ist am Montag um 9 Uhr.")
    scripted.add(".*", tool_step("timeline_check(2026-12-07)"), schema=THINK)
    scripted.add(
        r"\[BEOBACHTUNG 1\]", tool_step("TOOL: timeline_check('2026-12-07')"), schema=THINK
    )
    scripted.add(
        r"\[BEOBACHTUNG 2\]",
        {"ergebnis": "KORREKTUR", "probleme": "14 Uhr", "korrigierte_antwort": "Um 14 Uhr."},
        schema=THINK,
    )
    _, final, payload = await user_turn(runtime, "Wann ist mein Zahnarzt am Montag?")
    prompts = thinker_prompts(scripted)
    assert len(prompts) == 3
    assert "2026-12-07 14:00 Zahnarzt Dr. Weiss (termin)" in prompts[1]
    assert "schon gestellt" in prompts[2]
    assert final["response"] == "Um 14 Uhr."
    await deps.log.flush()  # type: ignore[union-attr]
    rows = await read_turn(deps.pool, payload["turn_id"])
    (logged,) = [r for r in rows if r["node"] == "thinker"]
    assert logged["inhalt"]["werkzeuge"] == [
        "timeline_check(2026-12-07)",
        "timeline_check(2026-12-07) [cache]",
    ]


async def test_the_loop_stops_after_five_steps(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted, answer=CAPITAL_ANSWER)
    scripted.add(".*", tool_step("memory_search(Australien)"), schema=THINK)
    _, final, _ = await user_turn(runtime, "Hauptstadt am Montag?")
    prompts = thinker_prompts(scripted)
    # four tool steps, then the last step may not call a tool: three refusals end the check
    assert sum("[BEOBACHTUNG" in p.split("[ANLASS]")[0] for p in prompts) >= 4
    assert len(prompts) == 4 + 3
    assert "Keine Werkzeuge mehr" in prompts[-1]
    assert final["thinker_result"] == "ausfall" and final["self_trigger"] is True


async def test_composer_gets_the_search_context_when_the_router_asks_for_the_web(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    hits = [{"url": "http://127.0.0.1:1/x", "title": "Canberra", "content": "Hauptstadt seit 1913"}]
    with searxng_server(SearxngDouble(results=hits)) as web:
        deps.web = SearxngProvider(web.base_url)
        script_human(scripted)
        script_character(scripted)
        scripted.add(".*", {**ROUTER_PLAIN, "needs_web": True}, schema="RouterDecision")
        scripted.add(".*", {"ergebnis": "OK"}, schema=THINK)
        _, final, _ = await user_turn(runtime, "Was ist die Hauptstadt von Australien?")
    assert web.queries() == ["Was ist die Hauptstadt von Australien?"]
    (call,) = composer_calls(scripted)
    assert (
        "[SUCHKONTEXT]\n- Canberra (http://127.0.0.1:1/x): Hauptstadt seit 1913" in call["prompt"]
    )
    assert "Canberra" in final["web_context"]


# --- post-answer: imprint, uptake, drive snapshot ------------------------------------------------


async def test_imprint_strengthens_a_thread_only_through_an_open_gate(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    moved = {**NOVA_PERCEPTION, "emotional": {"emotion": "begeisterung", "arousal": 0.8}}
    scripted.add(r"Mir geht", moved, schema="PerceptionResult")
    # the character's answer scores high on the theme "sterne"
    scripted.add(
        r"Mir geht", {**SCORE_OK, "themen": ["Sterne"], "salienz": 0.9}, schema="SalienceScore"
    )
    await user_turn(runtime, "Wie geht's dir?")
    await user_turn(runtime, "Wie geht's dir?")
    async with deps.pool.connection() as conn:
        cur = await conn.execute("SELECT thema, staerke, anzahl FROM praegung_faden")
        rows = await cur.fetchall()
    assert len(rows) == 1 and rows[0]["thema"] == "sterne" and rows[0]["anzahl"] == 2
    assert rows[0]["staerke"] > 0

    # a calm answer: the gate stays shut, the check is logged anyway
    scripted.add(r"Mir geht", NOVA_PERCEPTION, schema="PerceptionResult")  # arousal 0.4
    _, _, payload = await user_turn(runtime, "Wie geht's dir?")
    await deps.log.flush()  # type: ignore[union-attr]
    (row,) = [r for r in await read_turn(deps.pool, payload["turn_id"]) if r["node"] == "imprint"]
    assert row["inhalt"]["schritt"] == "praegung_tor"
    assert row["inhalt"]["offen"] is False and row["inhalt"]["grund"] == "nicht_bewegt"
    async with deps.pool.connection() as conn:
        cur = await conn.execute("SELECT anzahl FROM praegung_faden")
        assert (await cur.fetchone())["anzahl"] == 2


async def test_uptake_writes_one_row_per_turn_and_tells_the_hook(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    from novaberg.graph.nodes.uptake import register_uptake_hook, unregister_uptake_hook

    closed: list[tuple[str | None, str]] = []

    async def hook(_deps: GraphDeps, _pair: Any, question: Any, turn_id: str) -> None:
        closed.append((question.id, turn_id))

    register_uptake_hook(hook)
    try:
        script_human(scripted)
        script_character(scripted)
        payload = await run_human(runtime, human_turn("Wie geht's dir?"))
        # two open questions the composer offers; the answer takes the first up
        for topic, context, salience in ((ANSWER, "", 0.9), ("Musik", "Was hört Person A?", 0.5)):
            task = ShadowTask(
                PAIR.user_id, PAIR.character_id, "wissensluecken", topic, context, salience=salience
            )
            await shadow_queue.push(deps.pool, task, datetime.now(UTC))
        rows = await shadow_queue.for_pair(deps.pool, PAIR.user_id, PAIR.character_id)
        taken_id = f"auftrag-{next(r['id'] for r in rows if r['thema'] == ANSWER)}"
        final = await run_character_with(runtime, payload)
        for row in await shadow_queue.for_pair(deps.pool, PAIR.user_id, PAIR.character_id):
            await shadow_queue.dismiss(deps.pool, PAIR.user_id, PAIR.character_id, row["id"])
        plain = await run_character_with(runtime, await run_human(runtime, human_turn("Hallo")))
    finally:
        unregister_uptake_hook(hook)
    assert closed == [(taken_id, payload["turn_id"])]
    async with deps.pool.connection() as conn:
        cur = await conn.execute(
            "SELECT turn_id, angeboten, aufgegriffen, frage_id, cosinus FROM offene_fragen_aufgriff"
            " ORDER BY id"
        )
        rows = await cur.fetchall()
    assert [r["turn_id"] for r in rows] == [payload["turn_id"], plain["turn_id"]]
    assert rows[0]["angeboten"] == 2 and rows[0]["aufgegriffen"] is True
    assert rows[0]["frage_id"] == taken_id and rows[0]["cosinus"] == pytest.approx(1.0)
    assert rows[1]["angeboten"] == 0 and rows[1]["aufgegriffen"] is None
    assert final["response"] == ANSWER


async def test_dispatcher_writes_the_drive_snapshot(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    await user_turn(runtime, "Wie geht's dir?")
    raw = await deps.redis.get(keys.drive_snapshot(PAIR))
    assert raw is not None
    snapshot = json.loads(raw)
    assert set(snapshot) == {"conversation_vector", "activated_goals", "gravity_term", "timestamp"}
    assert snapshot["timestamp"] == NOW and snapshot["activated_goals"] == []
    assert (
        snapshot["conversation_vector"] == AFTER["dispatcher"]["external"].emotion.emotions_vector
    )


async def test_dispatcher_side_writes_share_one_round_trip(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """The snapshot, the trace and the momentum go out in one pipeline, all stored."""
    script_human(scripted)
    script_character(scripted)
    executed: list[list[str]] = []
    original = Pipeline.execute

    async def counting(self: Pipeline, raise_on_error: bool = True) -> list[Any]:
        executed.append([str(args[1]) for args, _ in self.command_stack if len(args) > 1])
        return await original(self, raise_on_error)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Pipeline, "execute", counting)
        await user_turn(runtime, "Wie geht's dir?")
    side = [keys.drive_snapshot(PAIR), keys.hypothesis_detail(PAIR), keys.previous_turn(PAIR)]
    side.append(keys.momentum(PAIR))
    assert [sorted(batch) for batch in executed if keys.momentum(PAIR) in batch] == [sorted(side)]
    assert await deps.redis.get(keys.momentum(PAIR)) == AFTER["router"]["momentum"]
    assert 0 < await deps.redis.ttl(keys.momentum(PAIR)) <= keys.MOMENTUM_TTL
    assert json.loads(await deps.redis.get(keys.previous_turn(PAIR)))["antwort"]


async def run_character_with(
    runtime: GraphRuntime, payload: dict[str, Any], **channels: Any
) -> dict[str, Any]:
    """A CharacterGraph run whose initial state carries extra `channels`."""
    turn = CharacterTurn(
        pair=PAIR, turn_id=payload["turn_id"], event_source="user", event_payload=payload
    )
    state = {**runtime.character_state(turn), **channels}
    final: dict[str, Any] = {}
    async for _node, current in runtime.stream_character(state):
        final = current
    return final


async def test_composer_is_skipped_on_a_task_context_cut(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    scripted.add(COMPOSER, ROME_VERDICT)
    payload = await run_human(runtime, human_turn("Wie geht's dir?"))
    final = await run_character_with(
        runtime, payload, task_context_cut=True, task_block="[AUFGABE]\nNotiz gespeichert."
    )
    assert composer_calls(scripted) == []
    assert final["response_content"] == "" and "objection_verdict" not in final
    (responder_call,) = responder_calls(scripted)
    assert (
        "[INHALT]" not in responder_call["prompt"] and "[EINWAND]" not in responder_call["prompt"]
    )
    await deps.log.flush()  # type: ignore[union-attr]
    rows = await read_turn(deps.pool, payload["turn_id"])
    (logged,) = [r for r in rows if r["node"] == "composer"]
    assert logged["inhalt"] == {"uebersprungen": "task_context_cut"}


async def test_a_failed_web_search_gives_no_search_context_and_says_so(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    with searxng_server(SearxngDouble(results=[], status=502)) as web:
        deps.web = SearxngProvider(web.base_url)
        script_human(scripted)
        script_character(scripted)
        scripted.add(".*", {**ROUTER_PLAIN, "needs_web": True}, schema="RouterDecision")
        scripted.add(".*", {"ergebnis": "OK"}, schema=THINK)
        _, final, payload = await user_turn(runtime, "Was gibt es Neues?")
    assert len(web.queries()) == 1
    (call,) = composer_calls(scripted)
    assert "[SUCHKONTEXT]" not in call["prompt"]
    assert final["web_context"] == ""
    await deps.log.flush()  # type: ignore[union-attr]
    (logged,) = [
        r for r in await read_turn(deps.pool, payload["turn_id"]) if r["node"] == "composer"
    ]
    assert "HTTP 502" in logged["inhalt"]["suche_ausfall"]
