"""Raum targets, pull and GV bits (spec emotion §8, §14.8)."""

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st

from novaberg.ei.register import (
    RegisterTarget,
    pull_axis,
    pull_register,
    register_bits,
    register_target,
    target_closeness,
    target_depth,
)


@pytest.mark.parametrize(
    ("mode", "depth"),
    [
        ("philosophischer_austausch", 0.9),
        ("fachgespraech", 0.8),
        ("emotional", 0.7),
        ("lernmodus", 0.7),
        ("arbeitsmodus", 0.6),
        ("beratend", 0.6),
        ("kreativ", 0.5),
        ("spielerisch", 0.4),
        ("berichtend", 0.4),
        ("alltag", 0.3),
    ],
)
def test_target_depth_by_mode(mode: str, depth: float) -> None:
    assert target_depth(mode) == depth


def test_unknown_mode_logs_and_targets_default(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert target_depth("quatsch") == 0.3
    assert [r.levelname for r in caplog.records] == ["WARNING"]


@pytest.mark.parametrize(
    ("dynamic", "style", "closeness"),
    [
        ("vertrauen", "locker", 0.95),
        ("dankbar", "jugendlich", 0.82),  # 0.825 rounds to 0.82 (binary float)
        ("hilfesuchend", "emotional", 0.65),
        ("neutral", "neutral", 0.5),
        ("angriff", "fachlich", 0.35),
        ("distanz", "formell", 0.2),
        ("quatsch", "formell", 0.35),
        ("vertrauen", "quatsch", 0.75),
    ],
)
def test_target_closeness(dynamic: str, style: str, closeness: float) -> None:
    assert target_closeness(dynamic, style) == closeness


def test_raum_target() -> None:
    assert register_target("fachgespraech", "vertrauen", "locker") == RegisterTarget(0.8, 0.95)


def test_pull_up_uses_035_and_down_065() -> None:
    assert pull_axis(0.3, 0.9) == 0.51
    assert pull_axis(0.9, 0.3) == 0.51
    assert pull_axis(0.5, 0.3) == 0.37


def test_pull_snaps_within_002() -> None:
    assert pull_axis(0.5, 0.52) == 0.52  # 0.507 → 0.51, 0.01 from target
    assert pull_axis(0.5, 0.6) == 0.54  # 0.535 → 0.54 (binary float of 0.535 rounds up)


def test_equal_is_kept_and_factor_zero_freezes() -> None:
    assert pull_axis(0.42, 0.42) == 0.42
    assert pull_axis(0.3, 0.9, factor=0.0) == 0.3
    assert pull_axis(0.5, 0.51, factor=0.0) == 0.5
    assert pull_axis(0.333, 0.9, factor=0.0) == 0.333


def test_factor_scales_share_and_clamps_to_full_step() -> None:
    assert pull_axis(0.3, 0.9, factor=2.0) == 0.72  # share 0.70
    assert pull_axis(0.3, 0.9, factor=10.0) == 0.9  # share clamped to 1
    assert pull_axis(0.3, 0.9, factor=-1.0) == 0.3  # share clamped to 0


def test_pull_raum_moves_both_axes() -> None:
    assert pull_register(0.3, 0.5, RegisterTarget(0.9, 0.2)) == RegisterTarget(0.51, 0.3)


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 5))
def test_pull_never_overshoots(current: float, target: float, factor: float) -> None:
    new = pull_axis(current, target, factor)
    assert min(current, target) <= new <= max(current, target)
    assert abs(target - new) <= abs(target - current)


def test_gv_bits() -> None:
    assert register_bits(0.5, 0.5, 0.5) == (1, 1, 1)
    assert register_bits(0.49, 0.8, 0.2) == (0, 1, 0)
