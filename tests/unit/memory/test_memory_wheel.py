"""Nova's wheel toward a user and the user weight (spec pipeline §9, emotion §11)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from novaberg.memory.wheel import (
    DOWN_SPOKES,
    SPOKES,
    UP_SPOKES,
    SpokeRatings,
    median_rating,
    user_weight,
)

NEUTRAL = dict.fromkeys(SPOKES, 0.0)


def test_twelve_spokes_split_into_six_up_and_the_six_withdrawal_spokes() -> None:
    assert len(SPOKES) == len(set(SPOKES)) == 12
    assert set(DOWN_SPOKES) == {
        "distanz",
        "misstrauen",
        "gleichgueltig",
        "langeweile",
        "widerspenstig",
        "selbstbezogen",
    }  # the withdrawal spokes of spec emotion §11
    assert set(UP_SPOKES).isdisjoint(DOWN_SPOKES)


def test_weight_is_base_plus_up_minus_down() -> None:
    assert user_weight(NEUTRAL) == pytest.approx(0.9)
    assert user_weight({**NEUTRAL, "wissbegier": 0.5}) == pytest.approx(1.4)
    assert user_weight({**NEUTRAL, "treue": 0.5, "distanz": 0.5}) == pytest.approx(0.9)
    assert user_weight({**NEUTRAL, "misstrauen": 0.5}) == pytest.approx(0.5)  # 0.4 clamped


def test_weight_is_clamped_to_half_and_one_and_a_half() -> None:
    assert user_weight({**NEUTRAL, **dict.fromkeys(UP_SPOKES, 1.0)}) == 1.5  # 6.9
    assert user_weight({**NEUTRAL, **dict.fromkeys(DOWN_SPOKES, 1.0)}) == 0.5  # -5.1


def test_median_of_three_keeps_the_middle_rating_and_its_wheel() -> None:
    low = {**NEUTRAL, "distanz": 1.0}  # -0.1 → 0.5
    middle = {**NEUTRAL, "treue": 0.5}  # 1.4
    high = {**NEUTRAL, "treue": 1.0, "dienst": 1.0}  # 2.9 → 1.5
    weight, wheel = median_rating([high, low, middle])
    assert weight == pytest.approx(1.4)
    assert wheel == middle


def test_median_needs_an_odd_number_of_ratings() -> None:
    with pytest.raises(ValueError, match="odd"):
        median_rating([NEUTRAL, NEUTRAL])
    with pytest.raises(ValueError, match="odd"):
        median_rating([])


@pytest.mark.parametrize("bad", [0.7, True, -0.5, None])
def test_a_spoke_is_rated_zero_half_or_one_only(bad: object) -> None:
    with pytest.raises(ValidationError):
        SpokeRatings.model_validate({**NEUTRAL, "treue": bad})


def test_every_spoke_must_be_rated() -> None:
    partial = {k: v for k, v in NEUTRAL.items() if k != "misstrauen"}
    with pytest.raises(ValidationError, match="misstrauen"):
        SpokeRatings.model_validate(partial)
    rated = SpokeRatings.model_validate({**NEUTRAL, "treue": 1, "distanz": "0.5"})
    assert rated.as_wheel() == {**NEUTRAL, "treue": 1.0, "distanz": 0.5}
