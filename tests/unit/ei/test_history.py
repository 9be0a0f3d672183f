"""Emotion history ("Verlauf", spec emotion §4 and §14.1-3)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novaberg.ei import canon
from novaberg.ei.history import emotion_history, smooth, turn_decay


def user(emotion: str, arousal: object = None) -> dict:
    return {"rolle": "user", "inhalt": "x", "emotion": emotion, "arousal": arousal}


def assistant(emotion: str, arousal: object = None) -> dict:
    return {"rolle": "assistant", "inhalt": "y", "emotion": emotion, "arousal": arousal}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(0.1, 0.25), (0.5, 0.56), (1.0, 0.77), (1.5, 0.90), (2.0, 0.98)],
)
def test_smoothing_reference_points(raw: float, expected: float) -> None:
    assert round(smooth(raw), 2) == expected


@pytest.mark.parametrize("raw", [2.5, 3.0, 100.0])
def test_smoothing_saturates_at_one(raw: float) -> None:
    assert smooth(raw) == 1.0


@pytest.mark.parametrize("raw", [0.0, -0.5])
def test_smoothing_is_zero_without_weight(raw: float) -> None:
    assert smooth(raw) == 0.0


@given(st.floats(-1, 4), st.floats(-1, 4))
def test_smoothing_is_monotone(a: float, b: float) -> None:
    low, high = sorted((a, b))
    assert smooth(low) <= smooth(high)


def test_turn_decay_newest_is_full_and_high_arousal_decays_slower() -> None:
    assert turn_decay(0, 0.1) == 1.0
    assert turn_decay(0, 0.9) == 1.0
    assert turn_decay(1, 0.9) > turn_decay(1, 0.1)
    assert turn_decay(5, 0.5) < turn_decay(1, 0.5)
    # eff = 0.8 × (1 − 0.3) = 0.56; 1 / (1 + 0.56 × log10 2)
    assert turn_decay(1, 0.5) == pytest.approx(1 / (1 + 0.56 * math.log10(2)))


def test_single_newest_turn_counts_fully() -> None:
    assert emotion_history([], "freude", 0.6, "user") == [
        {"emotion": "freude", "gewicht": 0.77, "arousal": 0.6}
    ]


def test_older_turn_adds_only_fifteen_percent() -> None:
    # raw = 1 + 0.15 / (1 + 0.56 log10 2) = 1.128 → s = 0.81
    result = emotion_history([user("freude", 0.5), user("freude", 0.5)], None, None, "user")
    assert result == [{"emotion": "freude", "gewicht": 0.81, "arousal": 0.5}]


def test_higher_arousal_older_turn_keeps_more_weight() -> None:
    high = emotion_history([user("begeisterung", 0.9), user("freude", 0.5)], None, None, "user")
    low = emotion_history([user("begeisterung", 0.1), user("freude", 0.5)], None, None, "user")
    assert high[1] == {"emotion": "begeisterung", "gewicht": 0.29, "arousal": 0.77}
    assert low[1]["emotion"] == "begeisterung"
    assert low[1]["gewicht"] == 0.28
    assert high[1]["gewicht"] > low[1]["gewicht"]


def test_damped_arousal_keeps_the_maximum_per_emotion() -> None:
    # freude at index 1 with arousal 0.9 → 0.9 × e^−0.1 = 0.81 beats the newest 0.2
    result = emotion_history([user("freude", 0.9), user("freude", 0.2)], None, None, "user")
    assert result[0]["arousal"] == 0.81


def test_history_drops_neutral_and_canonicalises_synonyms() -> None:
    turns = [user("angst", 0.6), user("neutral", 0.9), user("")]
    assert emotion_history(turns, "neutral", 0.9, "user") == [
        {"emotion": "stress", "gewicht": 0.77, "arousal": 0.6}
    ]


def test_history_only_reads_the_given_role() -> None:
    turns = [assistant("wut", 0.9), user("freude", 0.5)]
    result = emotion_history(turns, None, None, "user")
    assert [entry["emotion"] for entry in result] == ["freude"]


def test_inject_current_false_ignores_the_current_emotion() -> None:
    assert emotion_history([], "freude", 0.6, "user", inject_current=False) == []
    result = emotion_history([user("wut", 0.8)], "freude", 0.6, "user", inject_current=False)
    assert [entry["emotion"] for entry in result] == ["wut"]


def test_missing_turn_arousal_uses_emotion_default() -> None:
    assert emotion_history([user("verzweiflung")], None, None, "user")[0]["arousal"] == 0.8


def test_only_last_hundred_turns_count() -> None:
    turns = [user("wut", 1.0)] + [user("freude", 0.5)] * 100
    assert [entry["emotion"] for entry in emotion_history(turns, None, None, "user")] == ["freude"]
    turns = [user("wut", 1.0)] + [user("freude", 0.5)] * 99
    assert "wut" in [entry["emotion"] for entry in emotion_history(turns, None, None, "user")]


def test_opposite_of_high_arousal_dominant_is_damped_below_neighbour() -> None:
    opposite = emotion_history([user("traurigkeit", 0.4), user("freude", 1.0)], None, None, "user")
    neighbour = emotion_history(
        [user("zufriedenheit", 0.4), user("freude", 1.0)], None, None, "user"
    )
    # both raw 0.1268 → s 0.282; opposite ^1.4 = 0.17, neighbour ^0.7 = 0.41
    assert opposite == [
        {"emotion": "freude", "gewicht": 0.77, "arousal": 1.0},
        {"emotion": "traurigkeit", "gewicht": 0.17, "arousal": 0.39},
    ]
    assert neighbour[1] == {"emotion": "zufriedenheit", "gewicht": 0.41, "arousal": 0.38}


def test_weights_below_threshold_are_dropped_after_damping() -> None:
    # the opposite emotion 30 turns back ends at 0.146 < 0.15; a neighbour stays
    dropped = emotion_history(
        [user("traurigkeit", 1.0)] + [user("freude", 1.0)] * 30, None, None, "user"
    )
    kept = emotion_history(
        [user("zufriedenheit", 1.0)] + [user("freude", 1.0)] * 30, None, None, "user"
    )
    assert [entry["emotion"] for entry in dropped] == ["freude"]
    assert [entry["emotion"] for entry in kept] == ["freude", "zufriedenheit"]


def test_history_is_sorted_by_weight_not_by_effective_value() -> None:
    # stress (newest, arousal 0.1) has the weight; wut dominates s × a² and is listed second
    turns = [user("wut", 1.0), user("stress", 0.1)]
    result = emotion_history(turns, None, None, "user")
    assert [entry["emotion"] for entry in result] == ["stress", "wut"]
    assert result[0]["gewicht"] >= result[1]["gewicht"]


def test_unknown_names_are_kept_and_not_damped() -> None:
    result = emotion_history([user("Weltschmerz", 0.5), user("freude", 1.0)], None, None, "user")
    names = {entry["emotion"]: entry["gewicht"] for entry in result}
    # raw 0.15 × 1/(1 + 0.56 log10 2) = 0.1284 → s = 0.284 (damped at d4 it would be 0.17)
    assert names["Weltschmerz"] == 0.28


turn_strategy = st.fixed_dictionaries(
    {
        "rolle": st.sampled_from(["user", "assistant"]),
        "emotion": st.sampled_from([*sorted(canon.CANON), "angst", "", "Weltschmerz"]),
        "arousal": st.one_of(st.none(), st.floats(-1, 2), st.sampled_from(["high", "x"])),
    }
)


@given(st.lists(turn_strategy, max_size=40), st.sampled_from(sorted(canon.CANON)), st.floats(0, 1))
def test_history_entries_are_bounded_and_sorted(turns: list, current: str, level: float) -> None:
    result = emotion_history(turns, current, level, "user")
    for entry in result:
        assert 0.15 <= entry["gewicht"] <= 1.0
        assert 0.0 <= entry["arousal"] <= 1.0
        assert entry["emotion"] != "neutral"
    weights = [entry["gewicht"] for entry in result]
    assert weights == sorted(weights, reverse=True)
    assert len({entry["emotion"] for entry in result}) == len(result)
