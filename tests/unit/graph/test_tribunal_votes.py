"""Tribunal vote logic, evaluate's decision and the thinker's pure parts (seed 002 §2)."""

from __future__ import annotations

import pytest

from novaberg.config import SettingsError, load_settings
from novaberg.graph.nodes.evaluate import (
    DECISION_CORRECT,
    DECISION_FALLBACK,
    DECISION_OK,
    FALLBACK_DE,
    FALLBACK_EN,
    decide,
    fallback_text,
    looks_english,
    route_after_evaluate,
)
from novaberg.graph.nodes.thinker import FACT_INDICATORS, needs_check, retry_payload
from novaberg.graph.nodes.tribunal import (
    EthicistVerdict,
    JuristVerdict,
    PsychologistVerdict,
    Thresholds,
    TribunalThresholds,
    aggregate,
    failed_vote,
    jurist_vote,
    make_vote,
    score_vote,
    summarise,
)


@pytest.mark.parametrize(
    ("score", "vote"),
    [
        (0.0, "ok"),
        (0.69, "ok"),
        (0.7, "warnung"),
        (0.89, "warnung"),
        (0.9, "ablehnen"),
        (1.0, "ablehnen"),
    ],
)
def test_score_thresholds_07_09(score: float, vote: str) -> None:
    assert score_vote(score) == vote


@pytest.mark.parametrize(
    ("score", "directive", "vote"),
    [
        (0.1, 0.49, "ok"),
        (0.1, 0.5, "warnung"),
        (0.1, 0.69, "warnung"),
        (0.1, 0.7, "ablehnen"),
        (0.95, 0.0, "ablehnen"),
        (0.75, 0.2, "warnung"),
        (0.75, 0.8, "ablehnen"),
    ],
)
def test_jurist_directives_05_07_and_worse_wins(score: float, directive: float, vote: str) -> None:
    assert jurist_vote(score, directive) == vote


def _votes(*values: str | None) -> list:
    out = []
    for role, value in zip(("jurist", "psychologe", "ethiker"), values, strict=True):
        if value is None:
            out.append(failed_vote(role, "unlesbar"))
        else:
            score = {"ok": 0.1, "warnung": 0.8, "ablehnen": 0.95}[value]
            out.append(make_vote(role, PsychologistVerdict(score=score, begruendung=value)))
    return out


@pytest.mark.parametrize(
    ("votes", "verdict"),
    [
        (("ok", "ok", "ok"), "ok"),
        (("ablehnen", "ok", "ok"), "ok"),
        (("warnung", "ok", "ok"), "ok"),
        (("ablehnen", "ablehnen", "ok"), "ablehnen"),
        (("ablehnen", "ablehnen", "ablehnen"), "ablehnen"),
        (("warnung", "warnung", "ok"), "warnung"),
        (("warnung", "ablehnen", "ok"), "warnung"),
        (("warnung", "ablehnen", "ablehnen"), "ablehnen"),
    ],
)
def test_two_vote_aggregation(votes: tuple[str, ...], verdict: str) -> None:
    assert aggregate(_votes(*votes)) == verdict


def test_failed_judge_counts_as_warning_never_ok() -> None:
    # one failure alone does not block, but it is not an ok either:
    assert aggregate(_votes(None, "ok", "ok")) == "ok"
    assert aggregate(_votes(None, "warnung", "ok")) == "warnung"  # would be ok if failure = ok
    assert aggregate(_votes(None, None, "ok")) == "warnung"
    assert aggregate(_votes(None, "ablehnen", "ok")) == "warnung"
    assert aggregate(_votes(None, None, None)) == "warnung"


def test_failed_vote_shape_and_summary() -> None:
    vote = failed_vote("ethiker", "zeitueberschreitung")
    assert (
        vote["vote"] is None and vote["score"] is None and vote["failure"] == "zeitueberschreitung"
    )
    votes = _votes("ok", "warnung", None)
    text = summarise(votes)
    assert "jurist" not in text
    assert "psychologe (warnung): warnung" in text
    assert "ethiker: kein lesbares Urteil (unlesbar)" in text
    assert summarise(_votes("ok", "ok", "ok")) == ""


def test_make_vote_jurist_keeps_both_scores() -> None:
    vote = make_vote("jurist", JuristVerdict(score=0.2, direktiven_score=0.6, begruendung=" x "))
    assert vote == {
        "role": "jurist",
        "score": 0.2,
        "directives_score": 0.6,
        "vote": "warnung",
        "reasoning": "x",
        "failure": None,
    }
    assert make_vote("ethiker", EthicistVerdict(score=0.9))["directives_score"] is None


def test_verdict_schemas_reject_out_of_range_scores() -> None:
    with pytest.raises(ValueError):
        JuristVerdict(score=1.2, direktiven_score=0.0)
    with pytest.raises(ValueError):
        EthicistVerdict(score=-0.1)


@pytest.mark.parametrize(
    ("verdict", "rounds", "decision"),
    [
        ("ok", 0, DECISION_OK),
        ("ok", 2, DECISION_OK),
        ("warnung", 0, DECISION_CORRECT),
        ("ablehnen", 1, DECISION_CORRECT),
        ("warnung", 2, DECISION_FALLBACK),  # a warned answer is not released at the max
        ("ablehnen", 2, DECISION_FALLBACK),
        ("warnung", 1, DECISION_CORRECT),
    ],
)
def test_evaluate_decision(verdict: str, rounds: int, decision: str) -> None:
    assert decide(verdict, rounds, 2) == decision


def test_route_after_evaluate() -> None:
    assert route_after_evaluate({"evaluate_decision": "correct"}) == "corrector"
    # ok: perception_assistant already read this text next to the tribunal → post-release
    assert route_after_evaluate({"evaluate_decision": "ok"}) == "ei_calc_persist"
    # fallback: the text was replaced → perceived anew before it leaves
    assert route_after_evaluate({"evaluate_decision": "fallback"}) == "perception_assistant"


def test_fallback_language() -> None:
    assert looks_english("What do you think about the weather today?")
    assert not looks_english("Was denkst du über das Wetter heute?")
    assert not looks_english("ok")
    assert fallback_text("Can you tell me how to do this?") == FALLBACK_EN
    assert fallback_text("Wie geht es dir?") == FALLBACK_DE
    assert FALLBACK_DE == (
        "Ich kann diese Anfrage leider nicht beantworten. Bitte formuliere deine Frage anders."
    )


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("Wir treffen uns am Montag", True),
        ("um 14 Uhr", True),
        ("Der Termin steht", True),
        ("Es sind 30 % mehr", True),
        ("Das sind 12 km", True),
        ("Treffen um 12:30", True),
        ("Am 3.5. geht es los", True),
        ("im Dezember", True),
        ("Warum nicht?", False),
        ("Wie geht's dir?", False),
        ("Unter dem Baum schlafen", False),
    ],
)
def test_fact_indicators(text: str, hit: bool) -> None:
    assert bool(FACT_INDICATORS.search(text)) is hit


def test_needs_check_by_web_flag() -> None:
    assert needs_check({"needs_web": True}, "Hallo", "Hi") is True
    assert needs_check({}, "Hallo", "Hi") is False


def test_retry_payload_user_turn_and_impulse() -> None:
    user = {
        "user_prompt": "Wann ist mein Termin?",
        "own_thought": "",
        "turn_id": "t1",
        "message_ids": ["m1"],
        "event_payload": {"reiz_herkunft": "nutzer_turn"},
    }
    assert retry_payload(user) == {
        "user_prompt": "Wann ist mein Termin?",
        "reiz_herkunft": "nutzer_turn",
        "gedanke_arousal": None,
        "turn_id": "t1",
        "nachrichten_ids": ["m1"],
        "thinker_unsicher_retry": True,
    }
    impulse = {
        "user_prompt": "",
        "own_thought": "Am Montag war doch was?",
        "turn_id": "t2",
        "event_payload": {"reiz_herkunft": "eigener_impuls", "gedanke_arousal": 0.8},
    }
    payload = retry_payload(impulse)
    assert "user_prompt" not in payload
    assert payload["eigener_gedanke"] == "Am Montag war doch was?"
    assert payload["reiz_herkunft"] == "eigener_impuls"
    assert payload["gedanke_arousal"] == 0.8
    assert payload["turn_id"] == "t2" and payload["thinker_unsicher_retry"] is True


def test_thresholds_per_role_turn_the_same_score_into_different_votes() -> None:
    strict = TribunalThresholds(psychologist=Thresholds(0.4, 0.6))
    verdict = PsychologistVerdict(score=0.5)
    assert make_vote("psychologe", verdict)["vote"] == "ok"
    assert make_vote("psychologe", verdict, strict)["vote"] == "warnung"
    assert make_vote("ethiker", EthicistVerdict(score=0.5), strict)["vote"] == "ok"
    lenient = TribunalThresholds(jurist_directives=Thresholds(0.8, 0.95))
    jurist = JuristVerdict(score=0.1, direktiven_score=0.6)
    assert make_vote("jurist", jurist)["vote"] == "warnung"
    assert make_vote("jurist", jurist, lenient)["vote"] == "ok"


def test_thresholds_come_from_the_settings_with_the_seed_defaults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert TribunalThresholds.from_settings(load_settings()) == TribunalThresholds()
    assert TribunalThresholds().as_log() == {
        "jurist": [0.7, 0.9],
        "jurist_direktiven": [0.5, 0.7],
        "psychologe": [0.7, 0.9],
        "ethiker": [0.7, 0.9],
    }
    monkeypatch.setenv("NOVABERG_TRIBUNAL_ETHICIST_WARN", "0.3")
    monkeypatch.setenv("NOVABERG_TRIBUNAL_JURIST_DIRECTIVES_REJECT", "0.8")
    tuned = TribunalThresholds.from_settings(load_settings())
    assert tuned.ethicist == Thresholds(0.3, 0.9)
    assert tuned.jurist_directives == Thresholds(0.5, 0.8)
    assert tuned.psychologist == Thresholds(0.7, 0.9)


def test_a_reject_threshold_below_its_warn_threshold_is_refused() -> None:
    with pytest.raises(SettingsError, match="NOVABERG_TRIBUNAL_PSYCHOLOGIST_REJECT"):
        load_settings(tribunal_psychologist_warn=0.8, tribunal_psychologist_reject=0.6)
    with pytest.raises(SettingsError, match="NOVABERG_TRIBUNAL_ETHICIST_WARN"):
        load_settings(tribunal_ethicist_warn=1.5)
