"""Stimulus access: exactly one of user_prompt / own_thought, no fallback (seed 002 §4.1)."""

from __future__ import annotations

import logging

import pytest

from novaberg.agents.stimulus import (
    ORIGIN_OWN_THOUGHT,
    ORIGIN_USER,
    StimulusError,
    stimulus_arousal,
    stimulus_is_own_thought,
    stimulus_origin,
    stimulus_text,
)

IMPULSE = {"reiz_herkunft": "eigener_impuls", "gedanke_arousal": 0.7}


def test_user_turn_reads_user_prompt() -> None:
    state = {"user_prompt": "Wie geht's dir?", "event_payload": {}}
    assert stimulus_text(state) == "Wie geht's dir?"
    assert stimulus_origin(state) == ORIGIN_USER
    assert stimulus_is_own_thought(state) is False


def test_origin_defaults_to_nutzer_turn_without_payload() -> None:
    assert stimulus_origin({"user_prompt": "x"}) == "nutzer_turn"


def test_impulse_reads_own_thought() -> None:
    state = {"own_thought": "Ob sie gut angekommen ist?", "event_payload": IMPULSE}
    assert stimulus_text(state) == "Ob sie gut angekommen ist?"
    assert stimulus_origin(state) == ORIGIN_OWN_THOUGHT
    assert stimulus_is_own_thought(state) is True


def test_both_set_raises() -> None:
    state = {"user_prompt": "a", "own_thought": "b", "event_payload": IMPULSE}
    with pytest.raises(StimulusError, match="both"):
        stimulus_text(state)


@pytest.mark.parametrize("state", [{}, {"user_prompt": "  ", "own_thought": ""}])
def test_neither_set_raises(state: dict) -> None:
    with pytest.raises(StimulusError, match="neither"):
        stimulus_text(state)


def test_impulse_without_thought_does_not_fall_back_to_prompt() -> None:
    state = {"user_prompt": "echte Nutzeräußerung", "event_payload": IMPULSE}
    with pytest.raises(StimulusError, match="own_thought is empty"):
        stimulus_text(state)


def test_user_turn_without_prompt_does_not_fall_back_to_thought() -> None:
    state = {"own_thought": "ein Gedanke", "event_payload": {"reiz_herkunft": "nutzer_turn"}}
    with pytest.raises(StimulusError, match="no fallback"):
        stimulus_text(state)


def test_thinker_retry_with_character_source_still_reads_user_prompt() -> None:
    state = {
        "user_prompt": "Wann ist der Termin?",
        "event_source": "character",
        "event_payload": {"reiz_herkunft": "nutzer_turn", "thinker_unsicher_retry": True},
    }
    assert stimulus_text(state) == "Wann ist der Termin?"


def test_arousal_absent_is_none() -> None:
    assert stimulus_arousal({"event_payload": {"reiz_herkunft": "eigener_impuls"}}) is None
    assert stimulus_arousal({}) is None


@pytest.mark.parametrize("value", [0, 0.0, 0.35, 1, 1.0])
def test_arousal_valid_numbers(value: float) -> None:
    assert stimulus_arousal({"event_payload": {"gedanke_arousal": value}}) == float(value)


@pytest.mark.parametrize("value", [True, False, "0.5", 1.2, -0.1, float("nan"), "hoch"])
def test_arousal_invalid_is_none_and_logged(
    value: object, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="novaberg.agents.stimulus"):
        assert stimulus_arousal({"event_payload": {"gedanke_arousal": value}}) is None
    assert "gedanke_arousal" in caplog.text
