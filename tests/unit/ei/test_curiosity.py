"""The colour mix and the curiosity of the conversation vector (ei/curiosity.py)."""

from __future__ import annotations

import pytest

from novaberg.ei.curiosity import (
    COLOUR_WEIGHT,
    GAP_MAX,
    GOAL_WEIGHT,
    colour_mix,
    colour_share,
    curiosity,
    goal_boost,
    goal_closeness,
    sector_hue,
)


def test_one_colour_keeps_its_hue_and_is_fully_saturated() -> None:
    mix = colour_mix([("neugierig", 0.8), ("hoffnung", 0.4)])
    assert mix.hue == sector_hue(8) == 315.0 and mix.sector == 8
    assert mix.saturation == 1.0 and mix.strength == pytest.approx(1.2)


def test_two_colours_mix_between_them_by_arousal() -> None:
    even = colour_mix([("freude", 0.5), ("dankbarkeit", 0.5)])  # sectors 1 and 2
    assert even.hue == pytest.approx(22.5) and 0.9 < even.saturation < 1.0
    leaning = colour_mix([("freude", 0.2), ("dankbarkeit", 0.8)])
    assert 22.5 < (leaning.hue or 0) < 45.0 and leaning.sector == 2


def test_opposite_colours_cancel_and_neutral_has_none() -> None:
    cancelled = colour_mix([("freude", 0.6), ("traurigkeit", 0.6)])  # sectors 1 and 5
    assert cancelled.hue is None and cancelled.sector is None and cancelled.saturation == 0.0
    assert colour_mix([("neutral", 0.9), ("unbekannt", 0.9)]).hue is None
    assert colour_mix([("freude", 0.0)]).hue is None
    assert colour_share(cancelled) == 0.0


def test_the_curious_colour_gives_the_colour_share() -> None:
    assert colour_share(colour_mix([("neugierig", 1.0)])) == COLOUR_WEIGHT
    assert colour_share(colour_mix([("neugierig", 0.5)])) == pytest.approx(COLOUR_WEIGHT / 2)
    assert colour_share(colour_mix([("ueberrascht", 1.0)])) == 0.0  # opposite on the wheel
    assert 0 < colour_share(colour_mix([("freude", 1.0)])) < COLOUR_WEIGHT  # a neighbour


def test_open_gaps_and_goals_raise_curiosity() -> None:
    calm = colour_mix([("zufriedenheit", 0.3)])
    base = curiosity(calm, 0, 0.0)
    with_gaps = curiosity(calm, 2, 0.0)
    with_goal = curiosity(calm, 2, goal_boost(0.9))
    assert base.value < with_gaps.value < with_goal.value
    assert with_gaps.gaps == pytest.approx(0.2)
    assert curiosity(calm, 9, 0.0).gaps == GAP_MAX
    assert with_goal.goals == pytest.approx(GOAL_WEIGHT * 0.6 / 0.7, abs=1e-4)


def test_goal_boost_needs_a_real_closeness_and_says_when_unmeasured() -> None:
    assert goal_boost(0.29) == 0.0
    assert goal_boost(1.0) == GOAL_WEIGHT
    assert goal_boost(None) is None
    unmeasured = curiosity(colour_mix([]), 1, None)
    assert unmeasured.goals is None and unmeasured.value == pytest.approx(0.1)
    assert curiosity(colour_mix([]), 1, None).as_detail()["neugier_anteile"] == {
        "farbe": 0.0,
        "luecken": 0.1,
        "ziele": None,
    }


def test_crisis_leaves_no_room_for_curiosity() -> None:
    crisis = curiosity(colour_mix([("neugierig", 1.0)]), 5, 0.3, crisis=True)
    assert crisis.value == 0.0


def test_closeness_per_gap_is_its_best_goal() -> None:
    gaps = [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]
    goals = [[1.0, 0.0], [0.6, 0.8]]
    assert goal_closeness(gaps, goals) == [1.0, 0.8, None]
    assert goal_closeness(gaps, []) == [None, None, None]
    assert curiosity(colour_mix([]), 0, 0.0).value == 0.0
