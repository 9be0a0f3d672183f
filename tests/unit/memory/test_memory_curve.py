"""Salience curve and TTL tiers (spec pipeline §3, acceptance behaviour 1-2)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novaberg.memory import curve


@pytest.mark.parametrize(
    ("intake", "at_least"),
    [(0.3, curve.REJECT_BELOW), (0.5, curve.TIER_14_DAYS), (0.7, curve.TIER_30_DAYS)],
)
def test_tier_raw_values_land_on_their_boundaries(intake: float, at_least: float) -> None:
    value = curve.salience(intake)
    assert value >= at_least
    assert value - at_least < 1e-5


def test_just_below_each_raw_boundary_falls_into_the_lower_tier() -> None:
    assert not curve.accepted(0.2999)
    assert curve.accepted(0.3)
    assert curve.ttl_seconds(curve.salience(0.4999)) == curve.TTL_SHORT
    assert curve.ttl_seconds(curve.salience(0.5)) == curve.TTL_MEDIUM
    assert curve.ttl_seconds(curve.salience(0.6999)) == curve.TTL_MEDIUM
    assert curve.ttl_seconds(curve.salience(0.7)) == curve.TTL_LONG


def test_ttl_tiers_are_7_14_30_days() -> None:
    assert curve.ttl_seconds(curve.TIER_30_DAYS) == 30 * 86_400
    assert curve.ttl_seconds(curve.TIER_14_DAYS) == 14 * 86_400
    assert curve.ttl_seconds(curve.TIER_14_DAYS - 1e-9) == 7 * 86_400
    assert curve.ttl_seconds(0.0) == 7 * 86_400


def test_frequency_adds_three_hundredths_of_raw_salience() -> None:
    assert curve.raw_salience(0.5, 1) == 0.5
    assert curve.raw_salience(0.5, 3) == pytest.approx(0.56)
    assert curve.salience(0.5, 3) > curve.salience(0.5, 2) > curve.salience(0.5, 1)


def test_promotion_gate_reached_by_reinforcement() -> None:
    assert not curve.reaches_promotion(curve.salience(0.65, 1))
    frequency = next(f for f in range(1, 10) if curve.reaches_promotion(curve.salience(0.65, f)))
    assert frequency == 3  # 0.65 + 2 × 0.03 = 0.71 ≥ raw 0.7


def test_curve_caps_at_one() -> None:
    assert curve.salience(1.0) == pytest.approx(1.0)
    assert curve.salience(3.0, 50) == pytest.approx(1.0)


def test_long_term_weight_uses_cap_ten() -> None:
    assert curve.long_term_weight(10.0) == pytest.approx(10.0)
    expected = 10 * math.sin(0.95 / 10 * math.pi / 2) ** 0.5
    assert curve.long_term_weight(0.95) == pytest.approx(expected)
    assert curve.long_term_weight(0.0) == 0.0


@given(st.floats(0, 2), st.integers(1, 100))
def test_curve_is_bounded_and_monotonic(intake: float, frequency: int) -> None:
    value = curve.salience(intake, frequency)
    assert 0.0 <= value <= 1.0
    assert curve.salience(intake, frequency + 1) >= value
