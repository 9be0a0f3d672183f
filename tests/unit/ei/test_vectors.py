"""Emotion vectors (spec emotion §5 and §14.4)."""

import pytest

from novaberg.ei.vectors import (
    GV_UPWARD_VECTORS,
    PRESSURE_VECTORS,
    EmotionVector,
    emotion_vector,
    emotion_vector_by_names,
    gv_direction_bit,
    is_pressure,
)


def user(emotion: str, arousal: object = None) -> dict:
    return {"rolle": "user", "inhalt": "x", "emotion": emotion, "arousal": arousal}


def names(*emotions: str) -> list[dict]:
    return [user(emotion) for emotion in emotions]


def test_fewer_than_two_emotions_is_plateau_too_few_turns() -> None:
    assert emotion_vector([], None, None, "user") == EmotionVector("plateau", "zu_wenig_turns")
    assert emotion_vector(names("freude"), None, None, "user") == EmotionVector(
        "plateau", "zu_wenig_turns"
    )
    assert emotion_vector([], "freude", 0.5, "user").quelle == "zu_wenig_turns"


def test_current_emotion_counts_as_newest() -> None:
    result = emotion_vector(names("freude"), "stress", None, "user")
    assert result.vector == "absturz"


def test_spec_example_absturz() -> None:
    result = emotion_vector(names("freude", "freude", "stress"), "traurigkeit", None, "user")
    assert result == EmotionVector("absturz", "gemessen", None, None)


@pytest.mark.parametrize(
    ("older", "newer", "vector"),
    [
        ("freude", "stress", "absturz"),
        ("ueberrascht", "stress", "einbruch"),
        ("stress", "neutral", "stabilisierung"),
        ("stress", "freude", "erholung"),
        ("neutral", "freude", "aufbluehen"),
        ("freude", "verwundert", "abkuehlung"),
        ("neutral", "ueberrascht", "plateau"),
    ],
)
def test_cross_group_transitions(older: str, newer: str, vector: str) -> None:
    result = emotion_vector(names(older, newer), None, None, "user")
    assert result == EmotionVector(vector, "gemessen", None, None)


def test_neutral_is_kept_in_the_window() -> None:
    assert emotion_vector(names("wut", "wut", "neutral"), None, None, "user").vector == (
        "stabilisierung"
    )


def test_synonyms_are_canonicalised_in_the_window() -> None:
    assert emotion_vector(names("glueck", "panik"), None, None, "user").vector == "absturz"


def test_other_role_is_ignored() -> None:
    turns = [user("freude"), {"rolle": "assistant", "emotion": "wut"}, user("freude")]
    assert emotion_vector(turns, None, None, "user").vector == "plateau"


def test_negative_rise_of_point_one_is_spirale() -> None:
    turns = [user("aerger", 0.5), user("aerger", 0.5), user("aerger", 0.6), user("aerger", 0.6)]
    assert emotion_vector(turns, None, None, "user") == EmotionVector(
        "spirale", "gemessen", 0.1, "arousal"
    )


def test_negative_rise_below_point_one_is_plateau() -> None:
    turns = [user("aerger", 0.5), user("aerger", 0.5), user("wut", 0.59), user("wut", 0.59)]
    assert emotion_vector(turns, None, None, "user") == EmotionVector(
        "plateau", "gemessen", 0.09, "arousal"
    )


def test_positive_rise_is_eskalation_and_uses_current_arousal() -> None:
    turns = [user("freude", 0.4), user("freude", 0.4), user("freude", 0.4)]
    result = emotion_vector(turns, "begeisterung", 0.8, "user")
    # older = [0.4, 0.4], newer = [0.4, 0.8] → rise 0.2
    assert result == EmotionVector("eskalation", "gemessen", 0.2, "arousal")


def test_falling_arousal_is_plateau_with_negative_intensity() -> None:
    turns = [user("stress", 0.9), user("stress", 0.5)]
    assert emotion_vector(turns, None, None, "user") == EmotionVector(
        "plateau", "gemessen", -0.4, "arousal"
    )


def test_without_arousal_new_names_raise() -> None:
    assert emotion_vector(names("freude", "freude", "begeisterung"), None, None, "user") == (
        EmotionVector("eskalation", "gemessen", None, "namensmenge")
    )
    assert emotion_vector(names("freude", "freude", "freude"), None, None, "user") == (
        EmotionVector("plateau", "gemessen", None, "namensmenge")
    )


def test_opposite_group_names_never_raise() -> None:
    turns = names("traurigkeit", "traurigkeit", "traurigkeit", "freude", "traurigkeit")
    # newer half [freude, traurigkeit] ties → group of its last entry (negativ); freude is new
    # but positive, so no rise
    assert emotion_vector(turns, None, None, "user") == EmotionVector(
        "plateau", "gleichstand", None, "namensmenge"
    )


def test_ties_are_reported_as_gleichstand() -> None:
    turns = names("freude", "stress", "ueberrascht", "aerger")
    # older [freude, stress] tie → stress; newer [ueberrascht, aerger] tie → aerger (new name)
    assert emotion_vector(turns, None, None, "user") == EmotionVector(
        "spirale", "gleichstand", None, "namensmenge"
    )


def test_only_the_last_five_entries_decide() -> None:
    turns = names("wut", "wut", "wut", "freude", "freude", "freude", "freude", "freude")
    assert emotion_vector(turns, None, None, "user").vector == "plateau"
    turns = names("freude", "freude", "freude", "freude", "wut", "wut", "stress", "stress")
    assert emotion_vector(turns, None, None, "user").vector == "spirale"


def test_small_window_uses_last_one_as_newer_half() -> None:
    # n = 3: older [stress, freude] ties → freude (positiv); newer [wut] → absturz, gleichstand
    assert emotion_vector(names("stress", "freude", "wut"), None, None, "user") == (
        EmotionVector("absturz", "gleichstand", None, None)
    )


def test_name_only_wrapper_ignores_current_arousal() -> None:
    turns = names("stress", "stress", "stress")
    assert emotion_vector_by_names(turns, "wut", "user") == EmotionVector(
        "spirale", "gemessen", None, "namensmenge"
    )


def test_vector_sets() -> None:
    assert frozenset({"absturz", "spirale", "einbruch"}) == PRESSURE_VECTORS
    assert frozenset({"aufbluehen", "eskalation", "erholung"}) == GV_UPWARD_VECTORS
    assert is_pressure("spirale") and not is_pressure("plateau")
    assert gv_direction_bit("erholung") == 1
    assert gv_direction_bit("abkuehlung") == 0
    assert gv_direction_bit(None) == 0
