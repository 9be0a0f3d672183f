"""The landscape: axes → 64 sectors → 14 clusters, and the initiative bit."""

from __future__ import annotations

import pytest

from novaberg.ei.landscape import (
    CLUSTERS,
    SECTOR_CLUSTERS,
    LandscapeInput,
    axes_of,
    initiative_score,
    landscape,
    nova_leads,
    sector_bits,
    sector_of_axes,
    valence_bit,
)


def values(**overrides: object) -> LandscapeInput:
    base: dict[str, object] = {
        "arousal": 0.3,
        "emotion": "zufriedenheit",
        "relationship_dynamic": "neutral",
        "intent": "smalltalk",
        "closeness": 0.7,
        "depth": 0.3,
    }
    base.update(overrides)
    return LandscapeInput(**base)  # type: ignore[arg-type]


def test_every_sector_has_a_cluster_and_every_cluster_a_sector() -> None:
    assert len(SECTOR_CLUSTERS) == 64
    assert set(SECTOR_CLUSTERS) == set(CLUSTERS)
    assert len(CLUSTERS) == 14


def test_sector_number_is_the_bit_pattern_e_first() -> None:
    axes = {"E": 1, "R": 0, "N": 1, "V": 0, "T": 0, "I": 1}
    assert sector_of_axes(axes) == 0b101001
    assert sector_bits(0b101001) == (1, 0, 1, 0, 0, 1)
    with pytest.raises(ValueError):
        sector_bits(64)


def test_binary_valence() -> None:
    assert valence_bit("freude") == 1
    assert valence_bit("hoffnung") == 1
    assert valence_bit("neutral") == 1
    assert valence_bit("ueberrascht") == 0
    assert valence_bit("traurigkeit") == 0


def test_axes_read_the_perception_and_register() -> None:
    axes = axes_of(
        values(arousal=0.8, relationship_dynamic="angriff", closeness=0.2, depth=0.9, intent="task")
    )
    assert axes == {"E": 1, "R": 1, "N": 0, "V": 1, "T": 1, "I": 1}
    assert axes_of(values(conflict=True))["R"] == 1
    assert axes_of(values(intentions=("hilferuf",)))["I"] == 1


@pytest.mark.parametrize(
    ("overrides", "cluster"),
    [
        ({}, "bier"),  # calm, positive, close, shallow
        ({"depth": 0.8}, "glut"),
        ({"arousal": 0.8, "emotion": "begeisterung", "depth": 0.8}, "feuerwerk"),
        ({"arousal": 0.8, "emotion": "freude"}, "kissenschlacht"),
        ({"closeness": 0.2, "depth": 0.8, "intent": "task"}, "werkstatt"),
        ({"closeness": 0.2}, "foyer"),
        ({"emotion": "traurigkeit"}, "regen"),
        ({"emotion": "traurigkeit", "depth": 0.8}, "beichte"),
        ({"emotion": "enttaeuschung", "closeness": 0.2}, "schmollen"),
        ({"emotion": "unsicherheit", "closeness": 0.2, "depth": 0.8}, "nebel"),
        ({"emotion": "wut", "arousal": 0.9, "relationship_dynamic": "angriff"}, "gewitter"),
        (
            {"emotion": "wut", "arousal": 0.9, "relationship_dynamic": "angriff", "closeness": 0.1},
            "schlachtfeld",
        ),
        ({"emotion": "stress", "arousal": 0.8, "closeness": 0.2}, "wartezimmer"),
        ({"relationship_dynamic": "distanz"}, "paradox"),
    ],
)
def test_clusters_of_typical_turns(overrides: dict[str, object], cluster: str) -> None:
    assert landscape(values(**overrides)).cluster == cluster


def test_initiative_lulls_invite_storms_do_not() -> None:
    assert landscape(values()).initiative is True  # bier: +0.3
    stormy = landscape(values(emotion="wut", arousal=0.9, relationship_dynamic="angriff"))
    assert stormy.initiative is False
    # the counterpart driving takes the lead away from an inviting cluster
    assert initiative_score("foyer", True) == pytest.approx(-0.1)
    assert nova_leads(-0.05) is True
    assert nova_leads(-0.06) is False
    assert initiative_score("foyer", True, offset=0.1) == pytest.approx(0.0)
