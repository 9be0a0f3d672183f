"""The stance space (Haltungsraum): five magnitudes from cluster and wheel."""

from __future__ import annotations

import pytest

from novaberg.ei.landscape import CLUSTERS
from novaberg.ei.stance import BASE, MAGNITUDES, StanceError, stance


def test_zero_wheel_gives_the_base_values() -> None:
    result = stance("werkstatt", None)
    assert [result[m].ergebnis for m in MAGNITUDES] == [0.9, 0.9, 0.5, 0.5, 0.7]
    assert all(r.art == "tendenz" and r.modifikation == 0 for r in result.values())


def test_every_cluster_has_a_base_row() -> None:
    assert set(BASE) == set(CLUSTERS)


def test_zero_limit_cells_stay_zero_without_override() -> None:
    wheel = {"wissbegier": 1.0, "dienst": 1.0}  # push fragen and draengen up
    result = stance("nebel", wheel)
    assert result["fragen"].art == "grenze"
    assert result["fragen"].ergebnis == 0.0
    assert result["draengen"].ergebnis == 0.0


def test_tendency_cell_moves_toward_one_and_zero() -> None:
    up = stance("bier", {"wohlwollen": 1.0})  # W: S = 0.4, n = 0.4 / 0.5 = 0.8
    assert up["waerme"].modifikation == pytest.approx(0.8)
    assert up["waerme"].ergebnis == pytest.approx(0.8 + 0.8 * 0.2)
    down = stance("bier", {"gleichgueltig": 0.5})  # W: S = -0.2, n = -0.2 / 1.5
    assert down["waerme"].ergebnis == pytest.approx(0.8 - 0.2 / 1.5 * 0.8, abs=1e-4)


def test_distanz_above_point_nine_overrides_and_lowers_naehe() -> None:
    plain = stance("beichte", {"distanz": 0.5})
    strong = stance("beichte", {"distanz": 1.0})
    assert plain["naehe"].art == "tendenz"
    assert strong["naehe"].art == "uebersteuerung"
    assert strong["naehe"].ausloeser == "distanz"
    assert strong["naehe"].ergebnis < plain["naehe"].ergebnis
    # pull = 1 × (−0.5 / 0.5) = −1: the override takes naehe all the way down
    assert strong["naehe"].ergebnis == pytest.approx(0.0)


def test_results_stay_in_range_for_extreme_wheels() -> None:
    everything = dict.fromkeys(
        ("treue", "dienst", "pflicht", "aufmerksamkeit", "wissbegier", "wohlwollen"), 1.0
    )
    for cluster in CLUSTERS:
        for wheel in (everything, {"langeweile": 1.0, "distanz": 1.0, "misstrauen": 1.0}):
            for result in stance(cluster, wheel).values():
                assert 0.0 <= result.ergebnis <= 1.0
                assert result.ausserhalb is False


@pytest.mark.parametrize(
    ("cluster", "wheel"),
    [
        ("unbekannt", None),
        ("bier", {"neugier": 1.0}),
        ("bier", {"treue": True}),
        ("bier", {"treue": "viel"}),
        ("bier", {"treue": 1.5}),
    ],
)
def test_unreadable_inputs_give_no_result(cluster: str, wheel: dict[str, object] | None) -> None:
    with pytest.raises(StanceError):
        stance(cluster, wheel)
