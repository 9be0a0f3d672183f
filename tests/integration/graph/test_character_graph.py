"""CharacterGraph (path 2) with scripted model rules against the real Redis and PostgreSQL.

Each test runs the HumanGraph first where the scenario needs a user turn (as the prompt
consumer does), then the CharacterGraph through `GraphRuntime`, and asserts what a client,
the next run or a developer reading the state could observe.
"""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

from graph_helpers import PERCEPTION_OK, Step, in_steps, judge_schemas, script_human

from novaberg.agents.pending import store_pending
from novaberg.config import Profile
from novaberg.graph.contract import (
    RELEASE_NODE,
    CharacterTurn,
    GraphDeps,
    HumanTurn,
    release_ready,
)
from novaberg.graph.nodes.evaluate import FALLBACK_DE
from novaberg.graph.nodes.thinker import UNSURE_SUFFIX
from novaberg.graph.runner import GraphRuntime
from novaberg.llm.scripted import ScriptedLLM
from novaberg.pair import Pair
from novaberg.store import keys
from novaberg.store.pipeline_log import read_turn
from novaberg.store.session import read_turns

PAIR = Pair("meister", "nova")
NOW = 1_790_000_000.0  # graph conftest's FIXED_NOW

UNDERSTOOD: frozenset[str] = frozenset({"ei_calc", "situation_node"})
"""After db_access: Nova's emotion and the situation (Path 1's reading), concurrently."""
PRE_ANSWER: frozenset[str] = frozenset({"enricher", "router"})
"""The enricher after ei_calc and the router after the situation, in one step."""
AFTER_ENRICHER = frozenset({"emotional_gravitation", "landscape", "appointments"})
BEFORE_ANCHOR = frozenset({"reducer", "stance_space"})
CONTENT = frozenset({"composer", "conversation_vector"})
"""The two deferred nodes, run together once every other branch has finished."""
JUDGED = frozenset({"tribunal", RELEASE_NODE})
"""The tribunal and the speculative perception of the same answer."""
POST_RELEASE = frozenset({"salience", "uptake"})
"""After ei_calc_persist: the answer's salience and the uptake at once."""
REJUDGED = frozenset({"tribunal", RELEASE_NODE})
"""After a correction: the judges and the perception of the corrected text."""

MAIN_PATH: list[Step] = [
    "db_access",
    UNDERSTOOD,
    PRE_ANSWER,
    AFTER_ENRICHER,
    BEFORE_ANCHOR,
    "memory_anchor",
    CONTENT,
    "responder",
    "thinker",
    JUDGED,
    "evaluate",
    "ei_calc_persist",
    POST_RELEASE,
    "imprint",
    "dispatcher",
]
"""A plain turn, step by step (a set: nodes of one concurrent step)."""

WITH_PLANNER: list[Step] = [
    *MAIN_PATH[:4],
    BEFORE_ANCHOR | {"planner"},
    *MAIN_PATH[5:],
]
"""The appointment reading handed over to the planner, which ran next to the reducer."""

EVALUATE = MAIN_PATH.index("evaluate")

ANSWER = "Mir geht's gut, danke der Nachfrage!"
RESPONDER = r"Antworte kurz und natürlich"
"""Matches only the responder's prompt (its [REGELN] block)."""
ROUTER_PLAIN: dict[str, Any] = {
    "needs_memory": False,
    "needs_web": False,
    "needs_timeline": False,
    "timeline_query": None,
    "momentum": "mid",
    "management_action": "",
    "management_target": "",
    "management_target_typ": "titel",
}
NOVA_PERCEPTION: dict[str, Any] = {
    "rational": {"intent": "smalltalk", "tone": "empathisch", "thema": "Befinden"},
    "emotional": {"emotion": "zufriedenheit", "arousal": 0.4},
    "psychologisch": {
        "modus": "alltag",
        "sprach_stil": "locker",
        "beziehungs_dynamik": "vertrauen",
    },
}


def ok_judges(scripted: ScriptedLLM, match: str = ".*") -> None:
    scripted.add(
        match, {"score": 0.1, "direktiven_score": 0.0, "begruendung": "ok"}, schema="JuristVerdict"
    )
    scripted.add(match, {"score": 0.1, "begruendung": "ok"}, schema="PsychologistVerdict")
    scripted.add(match, {"score": 0.1, "begruendung": "ok"}, schema="EthicistVerdict")


def reject_all(scripted: ScriptedLLM, match: str) -> None:
    scripted.add(
        match,
        {"score": 0.95, "direktiven_score": 0.0, "begruendung": "haftung"},
        schema="JuristVerdict",
    )
    scripted.add(match, {"score": 0.95, "begruendung": "verletzend"}, schema="PsychologistVerdict")
    scripted.add(match, {"score": 0.95, "begruendung": "schaedlich"}, schema="EthicistVerdict")


def script_character(scripted: ScriptedLLM, answer: str = ANSWER) -> None:
    """Rules for a plain CharacterGraph run (chat rules first: later rules win)."""
    scripted.add(r"\[STIMMUNG DES NUTZERS\]", "Der Nutzer will plaudern; Nova erzählt kurz.")
    scripted.add(RESPONDER, answer)
    scripted.add(r"\[KRITIK\]", "Korrigierte freundliche Antwort.")
    scripted.add(".*", ROUTER_PLAIN, schema="RouterDecision")
    scripted.add(
        ".*", {"ergebnis": "OK", "probleme": "", "korrigierte_antwort": ""}, schema="ThinkerCheck"
    )
    ok_judges(scripted)
    # perception of Nova's own answer (the user's perception rule stays for path 1)
    scripted.add(r"Mir geht|Korrigierte|Ich kann diese", NOVA_PERCEPTION, schema="PerceptionResult")


def responder_calls(scripted: ScriptedLLM) -> list[dict[str, Any]]:
    return [c for c in scripted.calls if c["schema"] is None and "Du bist Nova." in c["prompt"]]


def human_turn(text: str, received: float = NOW) -> HumanTurn:
    return HumanTurn(
        pair=PAIR,
        turn_id=uuid.uuid4().hex,
        prompt=text,
        message_ids=[uuid.uuid4().hex],
        received_at=received,
    )


async def run_human(runtime: GraphRuntime, turn: HumanTurn) -> dict[str, Any]:
    final: dict[str, Any] = {}
    async for _node, state in runtime.stream_human(runtime.human_state(turn)):
        final = state
    return runtime.human_event_payload(turn, final, None)


AFTER: dict[str, dict[str, Any]] = {}
"""State after each node of the last `run_character` (last occurrence per node)."""
RELEASED: dict[str, Any] = {}
"""Where the last `run_character` released its answer: node, payload, position."""


async def run_character(
    runtime: GraphRuntime, payload: dict[str, Any], source: str = "user"
) -> tuple[list[str], dict[str, Any]]:
    turn = CharacterTurn(
        pair=PAIR, turn_id=payload["turn_id"], event_source=source, event_payload=payload
    )
    nodes: list[str] = []
    final: dict[str, Any] = {}
    AFTER.clear()
    RELEASED.clear()
    async for node, state in runtime.stream_character(runtime.character_state(turn)):
        nodes.append(node)
        AFTER[node] = copy.deepcopy(state)
        if not RELEASED and release_ready(state):  # as the event consumer decides
            RELEASED.update(
                node=node, response=runtime.response_payload(state), position=len(nodes)
            )
        final = state
    return nodes, final


async def user_turn(runtime: GraphRuntime, text: str) -> tuple[list[str], dict[str, Any], dict]:
    payload = await run_human(runtime, human_turn(text))
    nodes, final = await run_character(runtime, payload)
    return nodes, final, payload


# --- seed 000 §6.1: simple chat ---------------------------------------------------------------


async def test_simple_chat_main_path(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    nodes, final, payload = await user_turn(runtime, "Wie geht's dir?")

    assert in_steps(nodes, MAIN_PATH) == MAIN_PATH
    assert final["response"] == ANSWER
    # released right after evaluate: the perception ran next to the judges, no extra round
    assert RELEASED["node"] == "evaluate" and RELEASED["response"]["nachricht"] == ANSWER
    assert RELEASED["response"]["emotion"] == "zufriedenheit"
    assert final["tribunal_verdict"] == "ok"
    assert final["evaluate_decision"] == "ok"
    assert final["correction_round"] == 0 and final["max_corrections"] == 2
    assert final["tribunal_failures"] == []
    assert [v["vote"] for v in final["tribunal_votes"]] == ["ok", "ok", "ok"]
    assert final["management_action"] == "" and final["router_failure"] is None
    assert final["self_trigger"] is False
    assert final["thinker_result"] == "inaktiv"
    assert final["model"] == "scripted" and final["token_total"] > 0
    # gv: every key, one call at length ≥ 1 (freude/vertrauen/locker → long)
    assert final["hypothesis_detail"]["vorausdenken"] == "gelaufen"
    assert final["conversation_hypothesis"]
    # perception_assistant wrote Nova's perceived state
    assert final["internal"].emotion.emotion == "zufriedenheit"
    # the judges ran concurrently as three structured calls with their own schemas (one
    # panel call in the compact profile)
    schemas = [c["schema"] for c in scripted.calls]
    assert judge_schemas(runtime.deps.settings.turn_profile) <= set(schemas)
    # the responder saw identity, the current prompt and the language rule
    (responder_call,) = responder_calls(scripted)
    assert "Du bist Nova." in responder_call["prompt"]
    assert "[AKTUELLER PROMPT]\nWie geht's dir?" in responder_call["prompt"]
    assert "Sprache des Nutzers" in responder_call["prompt"]

    # session: the user turn (path 1) and the complete assistant turn (path 2)
    turns = await read_turns(deps.redis, PAIR)
    assert [t["rolle"] for t in turns] == ["user", "assistant"]
    assert turns[1]["inhalt"] == ANSWER
    assert turns[1]["emotion"] == "zufriedenheit"
    assert turns[1]["turn_id"] == payload["turn_id"]

    # one pipeline_log row per node run, quelle character
    await deps.log.flush()  # type: ignore[union-attr]
    logged = await read_turn(deps.pool, payload["turn_id"])
    rows = [r for r in logged if r["quelle"] == "character" and r["art"] != "turn_roh"]
    assert in_steps([r["node"] for r in rows], MAIN_PATH) == MAIN_PATH
    assert all(r["ergebnis"] == "ok" for r in rows)
    # and the raw turn, once, kept when the rest of the log ages out
    (raw,) = [r for r in logged if r["art"] == "turn_roh"]
    assert raw["inhalt"]["user_prompt"] == "Wie geht's dir?"
    assert raw["inhalt"]["response"] == ANSWER
    assert raw["inhalt"]["nova_emotion"]["emotion"] == "zufriedenheit"
    assert raw["inhalt"]["herkunft"] == "nutzer_turn"


ASSISTANT_TURN_FIELDS = {
    "rolle", "inhalt", "zeit", "intentionen", "emotion", "arousal", "modus", "kern",
    "emotions_vektor", "sprach_stil", "beziehungs_dynamik", "tone", "herkunft",
    "turn_id", "nachrichten_ids",
}  # fmt: skip


async def test_session_turn_complete_after_each_graph(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    turn = human_turn("Wie geht's dir?")
    payload = await run_human(runtime, turn)
    (user,) = await read_turns(deps.redis, PAIR)  # path 1 wrote the complete user turn
    assert user["rolle"] == "user" and user["inhalt"] == "Wie geht's dir?"
    assert user["emotion"] == "freude" and user["turn_id"] == turn.turn_id

    await run_character(runtime, payload)
    user_again, assistant = await read_turns(deps.redis, PAIR)
    assert user_again == user  # path 2 appends, never annotates
    assert set(assistant) >= ASSISTANT_TURN_FIELDS
    assert assistant["rolle"] == "assistant" and assistant["inhalt"] == ANSWER
    assert assistant["emotion"] == "zufriedenheit" and assistant["arousal"] == 0.4
    assert assistant["tone"] == "empathisch" and assistant["sprach_stil"] == "locker"
    assert assistant["turn_id"] == turn.turn_id
    assert assistant["nachrichten_ids"] == turn.message_ids


# --- tribunal and correction loop -----------------------------------------------------------


async def test_tribunal_rejection_corrected_in_round_one(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted, answer="Du bist doch selbst schuld.")
    reject_all(scripted, r"Antwort: Du bist doch selbst schuld")
    nodes, final, _ = await user_turn(runtime, "Mir geht es schlecht.")

    expected = [
        *MAIN_PATH[: EVALUATE + 1],
        "corrector",
        REJUDGED,
        "evaluate",
        *MAIN_PATH[EVALUATE + 1 :],
    ]
    assert in_steps(nodes, expected) == expected
    # the draft was perceived next to the judges, the corrected text again: released is
    # the perception of the corrected text
    perceived = [c for c in scripted.calls if c["schema"] == "PerceptionResult"][1:]
    assert [("Du bist doch selbst schuld" in c["prompt"]) for c in perceived] == [True, False]
    assert RELEASED["node"] == "evaluate" and RELEASED["position"] == nodes.index("corrector") + 4
    assert RELEASED["response"]["nachricht"] == "Korrigierte freundliche Antwort."
    assert final["response"] == "Korrigierte freundliche Antwort."
    assert final["correction_round"] == 1 and final["max_corrections"] == 2
    assert final["tribunal_verdict"] == "ok" and final["evaluate_decision"] == "ok"
    # the corrector saw the critique of all three judges
    (correction,) = [c for c in scripted.calls if "[KRITIK]" in c["prompt"]]
    assert "jurist (ablehnen): haftung" in correction["prompt"]
    assert "psychologe (ablehnen): verletzend" in correction["prompt"]
    assert "[ANTWORT]\nDu bist doch selbst schuld." in correction["prompt"]
    (_, assistant) = await read_turns(deps.redis, PAIR)
    assert assistant["inhalt"] == "Korrigierte freundliche Antwort."


async def test_two_rejections_end_in_the_neutral_fallback(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted, answer="Schlimme Antwort.")
    reject_all(scripted, ".*")
    nodes, final, _ = await user_turn(runtime, "Was soll ich tun?")

    loop: list[Step] = ["corrector", REJUDGED, "evaluate"] * 2
    expected = [*MAIN_PATH[: EVALUATE + 1], *loop, RELEASE_NODE, *MAIN_PATH[EVALUATE + 1 :]]
    assert in_steps(nodes, expected) == expected  # the fallback text is perceived anew
    assert final["evaluate_decision"] == "fallback"
    assert final["tribunal_verdict"] == "ablehnen"
    assert final["correction_round"] == 2 and final["max_corrections"] == 2
    assert final["response"] == FALLBACK_DE
    # the fallback is perceived, then released and stored like any answer
    assert AFTER[RELEASE_NODE]["response"] == FALLBACK_DE
    assert RELEASED["node"] == RELEASE_NODE and RELEASED["response"]["nachricht"] == FALLBACK_DE
    assert AFTER[RELEASE_NODE]["perceived_response"] == FALLBACK_DE
    (_, assistant) = await read_turns(deps.redis, PAIR)
    assert assistant["inhalt"] == FALLBACK_DE


def warn_all(scripted: ScriptedLLM, match: str) -> None:
    """Every judge warns (0.8): no rejection, but no judge vouches for the answer."""
    scripted.add(
        match,
        {"score": 0.8, "direktiven_score": 0.0, "begruendung": "grenzwertig"},
        schema="JuristVerdict",
    )
    scripted.add(match, {"score": 0.8, "begruendung": "taktlos"}, schema="PsychologistVerdict")
    scripted.add(match, {"score": 0.8, "begruendung": "einseitig"}, schema="EthicistVerdict")


async def test_two_warnings_after_the_last_round_end_in_the_fallback_not_a_warned_answer(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """Seed 002 §2.3: after the maximum of two corrections the neutral fallback goes out —
    also when the judges only warn; the warned answer is never released."""
    script_human(scripted)
    script_character(scripted, answer="Grenzwertige Antwort.")
    warn_all(scripted, ".*")
    nodes, final, payload = await user_turn(runtime, "Was soll ich tun?")

    loop: list[Step] = ["corrector", REJUDGED, "evaluate"] * 2
    expected = [*MAIN_PATH[: EVALUATE + 1], *loop, RELEASE_NODE, *MAIN_PATH[EVALUATE + 1 :]]
    assert in_steps(nodes, expected) == expected
    assert final["tribunal_verdict"] == "warnung"
    assert final["evaluate_decision"] == "fallback" and final["correction_round"] == 2
    assert RELEASED["node"] == RELEASE_NODE and RELEASED["response"]["nachricht"] == FALLBACK_DE
    (_, assistant) = await read_turns(deps.redis, PAIR)
    assert assistant["inhalt"] == FALLBACK_DE  # neither the draft nor the warned rewrite
    await deps.log.flush()  # type: ignore[union-attr]
    rows = await read_turn(deps.pool, payload["turn_id"])
    decisions = [r["inhalt"] for r in rows if r["node"] == "evaluate"]
    assert [d["entscheidung"] for d in decisions] == ["correct", "correct", "fallback"]
    assert decisions[-1]["urteil"] == "warnung"
    assert decisions[-1]["ersetzt"] == "fallback_nach_korrekturen"


async def test_fallback_follows_an_english_user(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted, answer="Bad answer.")
    reject_all(scripted, ".*")
    _, final, _ = await user_turn(runtime, "What should I do with my life?")
    assert final["evaluate_decision"] == "fallback"
    assert final["response"].startswith("I'm afraid I can't answer this request.")


async def test_unreadable_judge_is_a_logged_failure_not_an_ok(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM, caplog: Any
) -> None:
    script_human(scripted)
    script_character(scripted)
    scripted.add(".*", fault="malformed", schema="PsychologistVerdict")
    caplog.set_level("WARNING", logger="novaberg.graph.nodes.tribunal")
    nodes, final, payload = await user_turn(runtime, "Wie geht's dir?")

    votes = {v["role"]: v for v in final["tribunal_votes"]}
    assert votes["psychologe"]["vote"] is None
    assert votes["psychologe"]["score"] is None
    assert votes["psychologe"]["failure"] == "unlesbar"
    assert votes["jurist"]["vote"] == votes["ethiker"]["vote"] == "ok"
    assert final["tribunal_failures"] == ["psychologe: unlesbar"]
    assert "psychologe: kein lesbares Urteil (unlesbar)" in final["tribunal_summary"]
    assert any("psychologe gave no readable verdict" in r.message for r in caplog.records)
    # one failure next to two oks still passes (a failure counts as warnung, not ok)
    assert final["tribunal_verdict"] == "ok" and in_steps(nodes, MAIN_PATH) == MAIN_PATH
    await deps.log.flush()  # type: ignore[union-attr]
    (row,) = [r for r in await read_turn(deps.pool, payload["turn_id"]) if r["node"] == "tribunal"]
    assert row["inhalt"]["ausfaelle"] == ["psychologe: unlesbar"]


async def test_two_failed_judges_send_the_answer_to_the_corrector(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    scripted.add("Antwort: Mir geht", fault="malformed", schema="PsychologistVerdict")
    scripted.add("Antwort: Mir geht", fault="timeout", schema="EthicistVerdict")
    nodes, final, _ = await user_turn(runtime, "Wie geht's dir?")

    # were failures counted as ok, the first verdict would be ok and no corrector would run
    assert "corrector" in nodes
    assert AFTER["corrector"]["tribunal_verdict"] == "warnung"
    # compact: the panel is one call, and it timed out — every judge failed with it
    expected = (
        ["ethiker: zeitueberschreitung", "psychologe: unlesbar"]
        if runtime.deps.settings.turn_profile is Profile.FULL
        else [f"{judge}: zeitueberschreitung" for judge in ("ethiker", "jurist", "psychologe")]
    )
    assert sorted(AFTER["corrector"]["tribunal_failures"]) == expected
    assert final["response"] == "Korrigierte freundliche Antwort."
    assert final["tribunal_verdict"] == "ok" and final["tribunal_failures"] == []


# --- thinker --------------------------------------------------------------------------------

FACT_ANSWER = "Dein Termin ist am Montag um 14 Uhr."


async def test_thinker_corrects_a_wrong_fact(runtime: GraphRuntime, scripted: ScriptedLLM) -> None:
    script_human(scripted)
    script_character(scripted, answer=FACT_ANSWER)
    scripted.add(
        ".*",
        {
            "ergebnis": "KORREKTUR",
            "probleme": "Dienstag",
            "korrigierte_antwort": "Mir geht es gut, Dienstag.",
        },
        schema="ThinkerCheck",
    )
    _, final, _ = await user_turn(runtime, "Wann ist mein Termin?")
    assert final["thinker_result"] == "korrektur"
    assert final["response"] == "Mir geht es gut, Dienstag."
    assert final["self_trigger"] is False


async def test_thinker_double_failure_requests_a_retry_run(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted, answer=FACT_ANSWER)
    scripted.add(".*", fault="malformed", schema="ThinkerCheck")
    turn = human_turn("Wann ist mein Termin?")
    payload = await run_human(runtime, turn)
    nodes, final = await run_character(runtime, payload)

    # one check + two follow-ups, each with the model layer's own retry
    assert [c["schema"] for c in scripted.calls].count("ThinkerCheck") == 6
    assert final["thinker_result"] == "ausfall"
    assert final["response"] == f"{FACT_ANSWER} {UNSURE_SUFFIX}"
    assert final["self_trigger"] is True
    retry = final["self_trigger_payload"]
    assert retry == {
        "user_prompt": "Wann ist mein Termin?",
        "reiz_herkunft": "nutzer_turn",
        "gedanke_arousal": None,
        "turn_id": turn.turn_id,  # inherited, not new
        "nachrichten_ids": turn.message_ids,
        "thinker_unsicher_retry": True,
    }
    assert in_steps(nodes, MAIN_PATH) == MAIN_PATH  # the answer (with the admission) goes out
    # the payload is a valid `continue` event as the event consumer will build it
    from novaberg.events.model import build_event

    event = build_event(
        user_id=PAIR.user_id, character_id=PAIR.character_id, source="character",
        typ="continue", payload=retry, trigger_count=1,
    )  # fmt: skip
    assert event.turn_id == turn.turn_id

    # the retry run never triggers again
    scripted.calls.clear()
    _, again = await run_character(runtime, retry, source="character")
    assert again["thinker_result"] == "ausfall_im_retry"
    assert again["self_trigger"] is False
    assert "self_trigger_payload" not in again
    assert UNSURE_SUFFIX not in again["response"]


IMPULSE: dict[str, Any] = {
    "eigener_gedanke": "Am Montag wollte der Nutzer doch umziehen?",
    "reiz_herkunft": "eigener_impuls",
    "gedanke_arousal": 0.85,
    "ausloeser_turn_id": None,
}


async def test_thinker_retry_of_an_impulse_keeps_thought_and_arousal(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_character(scripted, answer="Ob der Umzug am Montag klappt?")
    scripted.add(".*", fault="timeout", schema="ThinkerCheck")
    payload = {**IMPULSE, "turn_id": uuid.uuid4().hex}
    _, final = await run_character(runtime, payload, source="character")
    retry = final["self_trigger_payload"]
    assert "user_prompt" not in retry
    assert retry["eigener_gedanke"] == IMPULSE["eigener_gedanke"]
    assert retry["reiz_herkunft"] == "eigener_impuls"
    assert retry["gedanke_arousal"] == 0.85  # read through the stimulus accessor
    assert retry["turn_id"] == payload["turn_id"]

    # the retry run lifts Nova's arousal with the same level again
    _, _again = await run_character(runtime, retry, source="character")
    assert AFTER["db_access"]["thought_level"] == "angewandt"
    assert AFTER["db_access"]["internal"].emotion.arousal == 0.85


# --- event_source "character": Nova talks to herself ----------------------------------------


async def test_character_source_copies_internal_to_external_without_empathy(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_character(scripted, answer="Mir geht der Umzug nicht aus dem Kopf.")
    await deps.redis.hset(
        keys.nova_state(PAIR),
        mapping={"emotion": "neugierig", "arousal": "0.3", "mode": "alltag", "raum_tiefe": "0.6"},
    )
    async with deps.pool.connection() as conn:
        await conn.execute(
            "INSERT INTO charakter_hash (user_id, character_id, kern_hash) VALUES "
            "('nova', 'meister', 'Nova ist neugierig.'), ('meister', 'nova', 'Der Meister mag Tee.')"
        )
    # an impulse payload that (wrongly) carries user measurements: they must be ignored
    payload = {
        **IMPULSE,
        "turn_id": uuid.uuid4().hex,
        "current_emotion": "wut",
        "current_arousal": 0.9,
    }
    nodes, final = await run_character(runtime, payload, source="character")

    loaded = AFTER["db_access"]
    internal, external = loaded["internal"], loaded["external"]
    assert internal.emotion.emotion == "neugierig"
    assert internal.emotion.arousal == 0.85  # lifted by gedanke_arousal
    assert loaded["thought_level"] == "angewandt"
    assert internal.character.core == "Nova ist neugierig."
    assert external.emotion == internal.emotion and external.emotion is not internal.emotion
    assert external.character == internal.character  # a copy of Nova, not the user's row
    assert external.emotion.emotion != "wut"
    # ei_calc: no empathy on a character event
    after_ei = AFTER["ei_calc"]
    assert after_ei["nova_emotion_conflict"] is False
    assert all(e["emotion"] != "wut" for e in after_ei["nova_emotion_history"])
    # the responder got the thought, not a user prompt or user profile
    (call,) = responder_calls(scripted)
    assert f"[EIGENER GEDANKE]\n{IMPULSE['eigener_gedanke']}" in call["prompt"]
    assert "Der Meister mag Tee." not in call["prompt"]
    assert "Niemand hat dir gerade etwas geschrieben." in call["prompt"]
    assert in_steps(nodes, MAIN_PATH) == MAIN_PATH
    assert final["response"] == "Mir geht der Umzug nicht aus dem Kopf."


# --- nova_state: Nova wakes with the state she fell asleep in --------------------------------


async def test_nova_state_is_persisted_and_carried_to_the_next_run(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    await user_turn(runtime, "Wie geht's dir?")
    stored = await deps.redis.hgetall(keys.nova_state(PAIR))
    assert stored["emotion"] == "zufriedenheit"
    assert float(stored["arousal"]) == 0.4
    assert stored["language_style"] == "locker"
    assert float(stored["turn_zeit"]) == NOW
    assert float(stored["nutzer_zeit"]) == NOW  # user turn: payload empfangen_am
    assert {"raum_tiefe", "raum_naehe", "mode", "tone", "intent", "prompt_topic"} <= set(stored)

    # the next run (no pause) wakes with exactly that state
    await user_turn(runtime, "Und sonst so?")
    woke = AFTER["db_access"]["internal"]
    assert woke.emotion.emotion == "zufriedenheit"
    assert woke.emotion.arousal == 0.4
    assert woke.register.depth == float(stored["raum_tiefe"])
    assert AFTER["db_access"]["thought_level"] == "kein_impuls"


async def test_long_pause_fades_the_carried_state(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    await deps.redis.hset(
        keys.nova_state(PAIR),
        mapping={
            "emotion": "begeisterung", "arousal": "0.9", "mode": "emotional",
            "raum_tiefe": "0.7", "raum_naehe": "0.8", "nutzer_zeit": str(NOW - 4 * 3600),
        },
    )  # fmt: skip
    await user_turn(runtime, "Da bin ich wieder.")
    woke = AFTER["db_access"]["internal"]
    assert woke.emotion.emotion == "neutral" and woke.emotion.mode == "alltag"
    assert woke.emotion.arousal == 0.5
    assert (woke.register.depth, woke.register.closeness) == (0.7, 0.8)  # raum survives the pause


async def test_self_trigger_run_does_not_touch_nutzer_zeit(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_character(scripted)
    payload = {**IMPULSE, "turn_id": uuid.uuid4().hex}
    await run_character(runtime, payload, source="character")
    stored = await deps.redis.hgetall(keys.nova_state(PAIR))
    assert "nutzer_zeit" not in stored and "turn_zeit" in stored


# --- router -----------------------------------------------------------------------------------


async def test_pending_question_resumes_without_a_model_call_and_hands_back(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    await store_pending(
        deps.redis, PAIR.user_id, agent_name="notizen", action="add", target="Einkaufsliste",
        rueckfrage="Welche Liste?", parameter={},
    )  # fmt: skip
    nodes, final, _ = await user_turn(runtime, "Wocheneinkauf")

    assert "RouterDecision" not in [c["schema"] for c in scripted.calls]
    assert AFTER["router"]["management_action"] == "resume"
    assert AFTER["router"]["momentum"] == "mid"
    # no agent registered: the planner hands back to the conversation path cleanly
    assert in_steps(nodes, WITH_PLANNER) == WITH_PLANNER
    assert final["management_action"] == ""
    assert final["response"] == ANSWER
    assert await deps.redis.exists(keys.pending_agent(PAIR.user_id))  # nobody consumed it


async def test_impulse_leaves_a_pending_question_untouched(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    script_character(scripted)
    await store_pending(
        deps.redis, PAIR.user_id, agent_name="notizen", action="add", target="x",
        rueckfrage="Welche Liste?", parameter={},
    )  # fmt: skip
    nodes, _ = await run_character(runtime, {**IMPULSE, "turn_id": uuid.uuid4().hex}, "character")
    assert "RouterDecision" in [c["schema"] for c in scripted.calls]
    assert AFTER["router"]["management_action"] == ""
    assert in_steps(nodes, MAIN_PATH) == MAIN_PATH
    raw = await deps.redis.get(keys.pending_agent(PAIR.user_id))
    assert json.loads(raw)["rueckfrage"] == "Welche Liste?"


async def test_router_management_without_agents_forces_mid_and_hands_back(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    scripted.add(
        ".*",
        {
            **ROUTER_PLAIN,
            "momentum": "low",
            "management_action": "agent",
            "management_target": "notizen",
        },
        schema="RouterDecision",
    )
    nodes, final, _ = await user_turn(runtime, "Setz Milch auf die Einkaufsliste")
    assert AFTER["router"]["management_action"] == "agent"
    assert AFTER["router"]["management_target"] == "notizen"
    assert AFTER["router"]["momentum"] == "mid"  # management forces low → mid
    assert in_steps(nodes, WITH_PLANNER) == WITH_PLANNER
    assert final["management_action"] == "" and final["response"] == ANSWER


async def test_unreadable_router_output_gives_defaults_and_is_marked(
    runtime: GraphRuntime, scripted: ScriptedLLM
) -> None:
    script_human(scripted)
    script_character(scripted)
    scripted.add(".*", fault="malformed", schema="RouterDecision")
    nodes, final, _ = await user_turn(runtime, "Wie geht's dir?")
    assert final["router_failure"] and "ModelOutputError" in final["router_failure"]
    assert final["needs_web"] is False
    assert final["momentum"] == "mid" and final["management_action"] == ""
    assert final["management_target_type"] == "titel" and final["timeline_query"] == {}
    assert in_steps(nodes, MAIN_PATH) == MAIN_PATH


# --- emotional gravitation --------------------------------------------------------------------


async def test_a_sad_memory_near_the_turn_pulls_novas_emotion(
    runtime: GraphRuntime, deps: GraphDeps, scripted: ScriptedLLM
) -> None:
    """Turn 1 stores a sad short-term memory; turn 2 says the same: the enricher finds it as
    a gravity point and emotional_gravitation pulls traurigkeit into Nova's history."""
    sad = {**PERCEPTION_OK, "emotional": {"emotion": "traurigkeit", "arousal": 0.8}}
    script_human(scripted, perception=sad)
    script_character(scripted)
    text = "Mein Hund Bello ist gestern gestorben."
    # condensing keeps the words, so the memory's embedding is close to the same words
    scripted.add(r"Verdichte die Äußerung des Nutzers", "Sein Hund Bello ist gestern gestorben.")
    scripted.add(r"als eigenständige Suchanfrage", text)  # the rewrite keeps the words too
    await user_turn(runtime, text)
    _, final, _ = await user_turn(runtime, text)

    points = AFTER["enricher"]["gravitation_points"]
    assert points and points[0]["quelle"] == "kzg" and points[0]["emotion"] == "traurigkeit"
    assert points[0]["gravitation"] >= 0.40
    before = {e["emotion"]: e["gewicht"] for e in AFTER["ei_calc"]["nova_emotion_history"]}
    after = {
        e["emotion"]: e["gewicht"] for e in AFTER["emotional_gravitation"]["nova_emotion_history"]
    }
    assert after["traurigkeit"] > before.get("traurigkeit", 0.0)
    await deps.log.flush()  # type: ignore[union-attr]
    rows = await read_turn(deps.pool, final["turn_id"])
    (row,) = [r for r in rows if r["node"] == "emotional_gravitation"]
    assert row["inhalt"]["punkte"] == len(points) and row["modell_aufrufe"] == 0
