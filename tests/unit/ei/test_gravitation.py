"""Goal activation, search key and emotional gravitation (spec emotion §10)."""

import logging
import math

import pytest

from novaberg.ei import gravitation
from novaberg.ei.goals import activate_goals, cosine, gravitation_term, search_blend, search_key
from novaberg.ei.gravitation import (
    age_in_days,
    apply_gravity,
    gravity_time_decay,
    long_term_point,
    select_gravity_points,
    short_term_point,
)

NOW = 1_800_000_000.0
DAY = 86400.0


def test_goal_api_is_reexported_from_gravitation() -> None:
    assert gravitation.activate_goals is activate_goals
    assert gravitation.search_key is search_key


def test_cosine() -> None:
    assert cosine([1, 0], [0.6, 0.8]) == pytest.approx(0.6)
    assert cosine([1, 0], [1, 0, 0]) is None
    assert cosine([0, 0], [1, 0]) is None
    assert cosine([math.nan, 0], [1, 0]) is None


def test_goal_activation_threshold_term_and_raw_pull() -> None:
    goals = [
        {"id": 1, "zielsatz": "a", "embedding": [1.0, 0.0], "motivation": 0.5},  # 0.5
        {"id": 2, "zielsatz": "b", "embedding": [0.6, 0.8], "motivation": 1.0},  # 0.6
        {"id": 3, "zielsatz": "c", "embedding": [0.0, 1.0], "motivation": 1.0},  # 0.0
        {"id": 4, "zielsatz": "d", "embedding": [1.0, 0.0], "motivation": None},  # 0.5 default
        {"id": 5, "zielsatz": "e", "embedding": [1.0, 0.0, 0.0], "motivation": 1.0},  # bad dim
    ]
    result = activate_goals([1.0, 0.0], goals)
    assert [goal["id"] for goal in result.activated] == [2, 1, 4]
    assert all("embedding" not in goal for goal in result.activated)
    assert result.activated[0]["aktivierungs_staerke"] == pytest.approx(0.6)
    assert result.activated[0]["similarity"] == pytest.approx(0.6)
    assert result.gravitation_term == pytest.approx(0.5 * 1.6)
    assert result.raw_goal_pull == pytest.approx(0.6)
    assert set(result.goal_vectors) == {1, 2, 4}
    assert result.goal_vectors[2] == [0.6, 0.8]


def test_goal_just_below_threshold_is_inactive_but_counts_as_raw_pull() -> None:
    goal = {"embedding": [0.79, math.sqrt(1 - 0.79**2)], "motivation": 0.5}  # 0.395
    result = activate_goals([1.0, 0.0], [goal])
    assert result.activated == []
    assert result.gravitation_term == 0.0
    assert result.raw_goal_pull == pytest.approx(0.395)


def test_gravitation_term_is_clamped_to_one() -> None:
    goals = [{"embedding": [1.0, 0.0], "motivation": 1.0}] * 5
    assert activate_goals([1.0, 0.0], goals).gravitation_term == 1.0
    assert gravitation_term([0.4, 0.5]) == pytest.approx(0.45)


def test_no_prompt_or_goals_activate_nothing() -> None:
    assert activate_goals(None, [{"embedding": [1.0], "motivation": 1}]).raw_goal_pull == 0.0
    assert activate_goals([1.0, 0.0], []).activated == []


def test_search_blend_per_cluster() -> None:
    assert search_blend("werkstatt") == 0.05
    assert search_blend("bier") == 0.20
    assert search_blend("kissenschlacht") == 0.25
    assert search_blend("feuerwerk") == 0.30
    assert search_blend("paradox") == 0.10
    assert search_blend("unbekannt") is None


def test_search_key_blends_toward_goals() -> None:
    shifted = search_key([1.0, 0.0], [([0.0, 1.0], 0.5)], "bier", ["information_teilen"])
    assert shifted == pytest.approx([0.8, 0.1])


@pytest.mark.parametrize(
    ("goals", "cluster", "intentions"),
    [
        ([([0.0, 1.0], 0.5)], "bier", ["anweisung"]),
        ([([0.0, 1.0], 0.5)], "bier", "anweisung"),
        ([([0.0, 1.0], 0.5)], "unbekannt", None),
        ([([0.0, 1.0], 0.5)], None, None),
        ([], "bier", None),
        ([([0.0, 1.0, 0.0], 0.5)], "bier", None),
        ([([math.inf, 1.0], 0.5)], "bier", None),
        ([([-1.0, 0.0], 10.0)], "glut", None),  # cos(e, e') = −1
    ],
)
def test_search_key_falls_back_to_raw(goals: list, cluster: str | None, intentions: object) -> None:
    assert search_key([1.0, 0.0], goals, cluster, intentions) == [1.0, 0.0]


def test_time_decay_halves_every_180_days() -> None:
    assert gravity_time_decay(0) == 1.0
    assert gravity_time_decay(None) == 1.0
    assert gravity_time_decay(180) == pytest.approx(0.5)
    assert gravity_time_decay(360) == pytest.approx(0.25)
    assert age_in_days(NOW - 2 * DAY, NOW) == pytest.approx(2.0)
    assert age_in_days("kaputt", NOW) is None


def test_short_term_point() -> None:
    entry = {
        "emotion": "angst",
        "arousal": "0.7",
        "salienz": "1.0",
        "erstellt_am": NOW,
        "inhalt": "x" * 150,
    }
    point = short_term_point(entry, 0.9, NOW)
    assert point == {
        "emotion": "stress",
        "arousal": 0.7,
        "similarity": 0.9,
        "gewicht": 1.0,
        "zeit_decay": 1.0,
        "gravitation": pytest.approx(0.72),
        "quelle": "kzg",
        "inhalt": "x" * 100,
    }


def test_short_term_point_defaults_and_filters() -> None:
    # salience default 0.5: 1.0 × 0.5 × 1 × 0.8 = 0.4 → kept
    assert short_term_point({"emotion": "wut"}, 1.0, NOW)["gravitation"] == pytest.approx(0.4)
    assert short_term_point({"emotion": "wut"}, 0.9, NOW) is None
    assert short_term_point({"emotion": "neutral", "salienz": 1}, 1.0, NOW) is None
    assert short_term_point({"emotion": "", "salienz": 1}, 1.0, NOW) is None
    old = {"emotion": "wut", "salienz": 1, "erstellt_am": NOW - 200 * DAY}
    assert short_term_point(old, 1.0, NOW) is None  # 0.8 × T(200 d) = 0.37
    younger = short_term_point(dict(old, erstellt_am=NOW - 100 * DAY), 1.0, NOW)
    assert younger["zeit_decay"] == pytest.approx(0.5 ** (100 / 180))


def test_long_term_point_uses_reinforcement_time() -> None:
    node = {
        "emotion": "freude",
        "gewicht_decay": 0.9,
        "erstellt_am": NOW - 720 * DAY,
        "verstaerkt_am": NOW,
        "inhalt": "der see",
    }
    point = long_term_point(node, 1.0, NOW)
    assert point["gravitation"] == pytest.approx(0.45)
    assert point["quelle"] == "lzg"
    assert point["arousal"] == 0.5
    assert long_term_point(dict(node, verstaerkt_am=None), 1.0, NOW) is None
    assert long_term_point(dict(node, gewicht_decay=None), 1.0, NOW) is None


def test_select_keeps_two_strongest_above_threshold() -> None:
    points = [
        {"emotion": "wut", "gravitation": 0.5},
        None,
        {"emotion": "freude", "gravitation": 0.9},
        {"emotion": "stress", "gravitation": 0.39},
        {"emotion": "hoffnung", "gravitation": 0.6},
    ]
    assert [p["emotion"] for p in select_gravity_points(points)] == ["freude", "hoffnung"]


def test_apply_gravity_adds_and_raises() -> None:
    history = [{"emotion": "freude", "gewicht": 0.6, "arousal": 0.5}]
    points = [
        {"emotion": "traurigkeit", "arousal": 0.8, "gravitation": 0.5},
        {"emotion": "glueck", "arousal": 1.0, "gravitation": 0.9},
        {"emotion": "neutral", "arousal": 1.0, "gravitation": 0.9},
    ]
    result = apply_gravity(history, points)
    assert result == [
        {"emotion": "freude", "gewicht": 1.0, "arousal": 0.9},
        {"emotion": "traurigkeit", "gewicht": 0.3, "arousal": 0.4},
    ]
    assert history == [{"emotion": "freude", "gewicht": 0.6, "arousal": 0.5}]


def test_apply_gravity_weight_is_capped_at_half_and_resorts() -> None:
    history = [{"emotion": "freude", "gewicht": 0.45, "arousal": 0.5}]
    result = apply_gravity(history, [{"emotion": "wut", "arousal": 0.5, "gravitation": 1.0}])
    assert result[0] == {"emotion": "wut", "gewicht": 0.5, "arousal": 0.5}


def test_apply_gravity_no_ops(caplog: pytest.LogCaptureFixture) -> None:
    history = [{"emotion": "freude", "gewicht": 0.6, "arousal": 0.5}]
    assert apply_gravity(history, []) == history
    with caplog.at_level(logging.DEBUG):
        assert apply_gravity([], [{"emotion": "wut", "gravitation": 0.9}]) == []
    assert [r.levelname for r in caplog.records] == ["DEBUG"], "a first turn: expected"
