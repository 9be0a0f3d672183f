"""Canon, synonyms, sectors and arousal reading (spec emotion §2)."""

import logging
import math

import pytest

from novaberg.ei import canon


def test_canon_has_sixteen_sectored_emotions_plus_neutral() -> None:
    assert len(canon.SECTORS) == 16
    assert len(canon.CANON) == 17
    assert "neutral" in canon.CANON
    for sector in range(1, 9):
        assert sum(1 for s in canon.SECTORS.values() if s == sector) == 2


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("freude", "freude"),
        ("neutral", "neutral"),
        ("angst", "stress"),
        ("panik", "stress"),
        ("stolz", "freude"),
        ("euphorie", "begeisterung"),
        ("vertrauen", "zufriedenheit"),
        ("sorge", "unsicherheit"),
        ("schock", "ueberrascht"),
        ("perplex", "verwundert"),
        ("nachdenklich", "traurigkeit"),
        ("kummer", "verzweiflung"),
        ("ekel", "frustration"),
        ("langeweile", "enttaeuschung"),
        ("hass", "wut"),
        ("genervt", "aerger"),
        ("interesse", "neugierig"),
        ("vorfreude", "hoffnung"),
        ("  Angst ", "stress"),
        ("Überrascht", "ueberrascht"),
    ],
)
def test_canonicalise_maps_synonyms_to_canon(name: str, expected: str) -> None:
    assert canon.canonicalise(name) == expected


def test_every_synonym_target_is_canonical_and_synonyms_are_not() -> None:
    assert set(canon.SYNONYMS.values()) <= set(canon.SECTORS)
    assert not set(canon.SYNONYMS) & canon.CANON


def test_unknown_emotion_is_kept_raw_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert canon.canonicalise("Weltschmerz") == "Weltschmerz"
    assert [(r.levelname, "Weltschmerz" in r.getMessage()) for r in caplog.records] == [
        ("WARNING", True)
    ], "model output, nothing to act on: a warning, not an error"


def test_empty_name_canonicalises_to_empty_without_log(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        assert canon.canonicalise("") == ""
        assert canon.canonicalise(None) == ""
    assert not caplog.records


@pytest.mark.parametrize(
    ("a", "b", "distance"),
    [(1, 1, 0), (1, 2, 1), (1, 5, 4), (2, 6, 4), (3, 7, 4), (4, 8, 4), (1, 8, 1), (2, 7, 3)],
)
def test_sector_distance_is_circular(a: int, b: int, distance: int) -> None:
    assert canon.sector_distance(a, b) == distance
    assert canon.sector_distance(b, a) == distance


def test_groups_follow_sectors() -> None:
    assert canon.group_of("freude") == "positiv"
    assert canon.group_of("dankbarkeit") == "positiv"
    assert canon.group_of("hoffnung") == "positiv"
    for name in ("stress", "traurigkeit", "frustration", "wut"):
        assert canon.group_of(name) == "negativ"
    assert canon.group_of("ueberrascht") == "neutral"
    assert canon.group_of("neutral") == "neutral"
    assert canon.group_of("Weltschmerz") == "neutral"


def test_sector_of_does_not_canonicalise() -> None:
    assert canon.sector_of("stress") == 3
    assert canon.sector_of("angst") is None
    assert canon.sector_of("neutral") is None


def test_emotion_distance_none_when_sectorless() -> None:
    assert canon.emotion_distance("freude", "traurigkeit") == 4
    assert canon.emotion_distance("freude", "neutral") is None


@pytest.mark.parametrize(
    ("name", "bit"),
    [
        ("freude", 1),
        ("zufriedenheit", 1),
        ("neugierig", 1),
        ("ueberrascht", 0),
        ("wut", 0),
        ("neutral", 1),
        ("Weltschmerz", 1),
    ],
)
def test_gv_valence_bit(name: str, bit: int) -> None:
    assert canon.gv_valence_bit(name) == bit


def test_damping_exponents() -> None:
    assert canon.DAMPING_EXPONENT == {0: 1.0, 1: 0.7, 2: 1.0, 3: 1.2, 4: 1.4}


def test_decay_rates_and_defaults_per_spec_table() -> None:
    assert canon.decay_rate("ueberrascht") == 0.20
    assert canon.decay_rate("verzweiflung") == 0.02
    assert canon.decay_rate("neutral") == 0.05
    assert canon.decay_rate("Weltschmerz") == 0.05
    assert canon.default_arousal("wut") == 0.8
    assert canon.default_arousal("zufriedenheit") == 0.3
    assert canon.default_arousal("neutral") == 0.2
    assert canon.default_arousal("angst") == 0.6
    assert canon.default_arousal("Weltschmerz") == 0.5


@pytest.mark.parametrize(
    ("value", "emotion", "expected"),
    [
        (0.7, "freude", 0.7),
        (1.5, "freude", 1.0),
        (-0.3, "freude", 0.0),
        ("0.35", "freude", 0.35),
        ("high", "freude", 0.8),
        ("MID", "freude", 0.5),
        ("low", "wut", 0.2),
        (None, "stress", 0.6),
        ("sehr", "verzweiflung", 0.8),
        (None, "Weltschmerz", 0.5),
        (None, None, 0.5),
        (True, "neutral", 0.2),
        (math.nan, "traurigkeit", 0.4),
    ],
)
def test_read_arousal(value: object, emotion: str | None, expected: float) -> None:
    assert canon.read_arousal(value, emotion) == pytest.approx(expected)
