"""Long-term edge math (spec pipeline §9): layers, winner, pulls, damping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest

from novaberg.memory.long_term import edges


def _node(**kw: object) -> SimpleNamespace:
    return SimpleNamespace(
        **{"entity_ids": [], "themes": [], "timeline_precision": None, "timeline_time": None, **kw}
    )


def test_no_layer_means_no_edge() -> None:
    assert not edges.find_layers(_node(themes=["a"]), _node(themes=["b"]), 0.55)


def test_each_layer_is_detected_with_its_depth() -> None:
    t0 = datetime(2026, 7, 1, tzinfo=UTC)
    a = _node(
        entity_ids=[1, 2], themes=["rom", "reise"], timeline_precision="day", timeline_time=t0
    )
    b = _node(
        entity_ids=[2],
        themes=["rom"],
        timeline_precision="day",
        timeline_time=t0 + timedelta(days=7),
    )
    layers = edges.find_layers(a, b, 0.775)
    assert layers.depths[edges.LAYER_ENTITY] == 1.0
    assert layers.depths[edges.LAYER_EMBEDDING] == pytest.approx(0.5)
    assert layers.depths[edges.LAYER_THEMES] == pytest.approx(0.5)
    assert layers.depths[edges.LAYER_TIMELINE] == pytest.approx(14 / 21)
    assert layers.shared_entities == [2] and layers.shared_themes == ["rom"]
    assert layers.timeline_days == 7


def test_timeline_layer_needs_same_precision_and_tolerance() -> None:
    t0 = datetime(2026, 7, 1, tzinfo=UTC)
    minute = _node(timeline_precision="minute", timeline_time=t0)
    assert not edges.find_layers(minute, _node(timeline_precision="day", timeline_time=t0), None)
    far = _node(timeline_precision="minute", timeline_time=t0 + timedelta(days=8))
    assert not edges.find_layers(minute, far, None)


def test_winner_layer_sets_factor_and_extra_layers_add_bonus() -> None:
    only_themes = edges.edge_strengths(2.0, 2.0, {edges.LAYER_THEMES: 1.0})
    assert only_themes == pytest.approx((1.0, 1.0))  # equal anchors: 2 × 0.5
    two_layers = edges.edge_strengths(
        2.0, 2.0, {edges.LAYER_THEMES: 1.0, edges.LAYER_TIMELINE: 1.0}
    )
    assert two_layers == pytest.approx((1.1, 1.1))  # themes win (0.5), +0.1 bonus


def test_weak_end_pulled_up_strong_end_pulled_down() -> None:
    weak_to_strong, strong_to_weak = edges.edge_strengths(1.0, 3.0, {edges.LAYER_ENTITY: 1.0})
    assert weak_to_strong == pytest.approx(1.0 + 2.0 * 0.444)
    assert strong_to_weak == pytest.approx(1.0 + 2.0 * (1 - 0.297))
    reversed_pair = edges.edge_strengths(3.0, 1.0, {edges.LAYER_ENTITY: 1.0})
    assert reversed_pair == pytest.approx((strong_to_weak, weak_to_strong))


def test_depth_scales_the_pull_from_the_weaker_anchor() -> None:
    a_to_b, b_to_a = edges.edge_strengths(1.0, 3.0, {edges.LAYER_EMBEDDING: 0.0})
    assert a_to_b == pytest.approx(0.8) and b_to_a == pytest.approx(0.8)


def test_edge_weight_damped_with_cap_ten() -> None:
    assert edges.damped(10.0) == pytest.approx(10.0)
    assert edges.damped(20.0) == pytest.approx(10.0)
    assert 0 < edges.damped(1.0) < 10


def test_frozen_layers_rebuild_depths() -> None:
    edge = SimpleNamespace(reasons=["embedding", "themen"], initial_cosine=1.0, timeline_days=None)
    depths = edges.frozen_layers(edge, ["a", "b"], ["a"])
    assert depths == {"embedding": 1.0, "themen": 0.5}
