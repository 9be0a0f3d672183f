"""Nova's own decay plus empathy toward the user (spec emotion §7, §14.7)."""

import logging

import pytest

from novaberg.ei.empathy import (
    apply_empathy,
    character_emotion_update,
    empathy_alpha,
    transfer_dominant,
)


def nova(emotion: str, arousal: object = None) -> dict:
    return {"rolle": "assistant", "inhalt": "…", "emotion": emotion, "arousal": arousal}


def user(emotion: str, arousal: object = None) -> dict:
    return {"rolle": "user", "inhalt": "…", "emotion": emotion, "arousal": arousal}


FREUDE_BASE = [{"emotion": "freude", "gewicht": 0.77, "arousal": 0.6}]


def test_alpha_by_circular_distance() -> None:
    assert [empathy_alpha(d) for d in range(5)] == [0.20, 0.30, 0.45, 0.70, 0.85]
    assert empathy_alpha(-1) == 0.30


def test_spec_example_sad_user_against_joyful_nova() -> None:
    history, conflict = apply_empathy(FREUDE_BASE, "traurigkeit", 0.8)
    assert history == [
        {"emotion": "freude", "gewicht": 0.77, "arousal": 0.6},
        {"emotion": "traurigkeit", "gewicht": 0.68, "arousal": 0.68},
    ]
    assert conflict is True


@pytest.mark.parametrize(
    ("user_emotion", "weight"),
    [("dankbarkeit", 0.3), ("stress", 0.45), ("ueberrascht", 0.7), ("verzweiflung", 0.85)],
)
def test_distant_user_pulls_harder(user_emotion: str, weight: float) -> None:
    history, _ = apply_empathy(FREUDE_BASE, user_emotion, 1.0)
    injected = next(entry for entry in history if entry["emotion"] == user_emotion)
    assert injected == {"emotion": user_emotion, "gewicht": weight, "arousal": weight}


def test_present_emotion_is_raised_and_capped() -> None:
    history, conflict = apply_empathy(FREUDE_BASE, "freude", 1.0)
    # d = 0 → α 0.20: gewicht 0.77 + 0.2, arousal max(0.6, 0.2)
    assert history == [{"emotion": "freude", "gewicht": 0.97, "arousal": 0.6}]
    assert conflict is False
    history, _ = apply_empathy(
        [{"emotion": "freude", "gewicht": 0.9, "arousal": 0.1}], "glueck", 1.0
    )
    assert history == [{"emotion": "freude", "gewicht": 1.0, "arousal": 0.2}]


def test_injection_resorts_the_history() -> None:
    base = [{"emotion": "freude", "gewicht": 0.5, "arousal": 0.6}]
    history, _ = apply_empathy(base, "traurigkeit", 0.8)
    assert [entry["emotion"] for entry in history] == ["traurigkeit", "freude"]


def test_small_or_neutral_user_emotion_is_not_injected() -> None:
    # α 0.20 × 0.2 = 0.04 ≤ 0.05
    assert apply_empathy(FREUDE_BASE, "freude", 0.2)[0] == FREUDE_BASE
    assert apply_empathy(FREUDE_BASE, "neutral", 1.0)[0] == FREUDE_BASE


def test_empty_nova_history_is_sectorless() -> None:
    history, conflict = apply_empathy([], "stress", 0.6)
    assert history == [{"emotion": "stress", "gewicht": 0.18, "arousal": 0.18}]
    assert conflict is False


@pytest.mark.parametrize(
    ("base_arousal", "user_emotion", "user_arousal", "conflict"),
    [
        (0.6, "traurigkeit", 0.8, True),
        (0.4, "frustration", 0.4, True),  # distance 3
        (0.9, "wut", 0.9, False),  # sector 7 is distance 2 from sector 1
        (0.39, "traurigkeit", 0.8, False),
        (0.6, "traurigkeit", 0.39, False),
        (0.9, "stress", 0.9, False),  # distance 2
        (0.9, "neutral", 0.9, False),
    ],
)
def test_conflict_needs_distance_three_and_both_arousals(
    base_arousal: float, user_emotion: str, user_arousal: float, conflict: bool
) -> None:
    base = [{"emotion": "freude", "gewicht": 0.8, "arousal": base_arousal}]
    assert apply_empathy(base, user_emotion, user_arousal)[1] is conflict


def test_missing_nova_arousal_defaults_to_half() -> None:
    base = [{"emotion": "freude", "gewicht": 0.8}]
    assert apply_empathy(base, "traurigkeit", 0.8)[1] is True


def test_base_entries_are_not_mutated() -> None:
    base = [{"emotion": "freude", "gewicht": 0.77, "arousal": 0.6}]
    apply_empathy(base, "freude", 1.0)
    assert base == [{"emotion": "freude", "gewicht": 0.77, "arousal": 0.6}]


def test_character_update_on_user_event() -> None:
    turns = [user("wut", 0.9), nova("freude", 0.6), user("traurigkeit", 0.8)]
    result = character_emotion_update(turns, "traurigkeit", 0.8, "user")
    assert result.history == [
        {"emotion": "freude", "gewicht": 0.77, "arousal": 0.6},
        {"emotion": "traurigkeit", "gewicht": 0.68, "arousal": 0.68},
    ]
    assert result.conflict is True
    assert (result.emotion, result.arousal) == ("freude", 0.6)
    assert result.vector.quelle == "zu_wenig_turns"


def test_character_update_without_user_event_only_decays() -> None:
    turns = [nova("freude", 0.6)]
    result = character_emotion_update(turns, "traurigkeit", 0.8, "character")
    assert result.history == [{"emotion": "freude", "gewicht": 0.77, "arousal": 0.6}]
    assert result.conflict is False


def test_character_vector_reads_assistant_turns_only() -> None:
    turns = [nova("freude", 0.5), user("freude"), nova("wut", 0.5)]
    result = character_emotion_update(turns, "freude", 0.5, "user")
    assert (result.vector.vector, result.vector.quelle) == ("absturz", "gemessen")


def test_character_update_with_empty_history_keeps_current(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG):
        result = character_emotion_update([], None, None, "impuls", "hoffnung", 0.7)
    assert result.history == []
    assert (result.emotion, result.arousal) == ("hoffnung", 0.7)
    assert [r.levelname for r in caplog.records] == ["DEBUG"], "a first turn: expected"


def test_transfer_takes_the_first_entry_and_keeps_missing_arousal() -> None:
    history = [{"emotion": "wut", "gewicht": 0.5}, {"emotion": "freude", "gewicht": 0.4}]
    assert transfer_dominant(history, "neutral", 0.3) == ("wut", 0.3)
