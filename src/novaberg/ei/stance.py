"""The stance space (Haltungsraum): five behaviour magnitudes of a turn from the landscape
cluster and Nova's wheel toward the user (docs/behaviour/emotion.md#stance).

    umfang (U)  how much Nova says        fragen (F)  how much she asks
    naehe (N)   how close she comes       waerme (W)  how warm she is
    draengen (D) how much she pushes

Each cluster gives a base value per magnitude; the wheel's twelve spokes shift it. A
base marked as a *limit cell* scales (`base × (1 + n)`, so a zero limit stays zero); the
others are *tendency cells* that move toward 1 or 0. A withdrawal spoke rated above 0.9
can override the result. Nothing is clamped: a result outside [0, 1] is flagged
`ausserhalb`, never hidden. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

MAGNITUDES: Final = ("umfang", "fragen", "naehe", "waerme", "draengen")
"""Wire names, in U/F/N/W/D order."""

LIMIT: Final = "grenze"
TENDENCY: Final = "tendenz"
OVERRIDE: Final = "uebersteuerung"
"""`art` of a result."""

_G = None
"""Marks a limit cell (base 0) in `BASE`."""

BASE: Final[Mapping[str, tuple[float | None, ...]]] = {
    "feuerwerk": (0.80, 0.90, 0.90, 0.90, 0.70),
    "kissenschlacht": (0.30, 0.60, 0.80, 0.90, 0.50),
    "werkstatt": (0.90, 0.90, 0.50, 0.50, 0.70),
    "glut": (0.70, 0.30, 0.90, 0.80, 0.20),
    "bier": (0.50, 0.50, 0.80, 0.80, 0.30),
    "foyer": (0.70, 0.50, 0.30, 0.50, 0.30),
    "regen": (0.20, 0.15, 0.80, 0.90, _G),
    "schmollen": (0.20, 0.15, 0.60, 0.60, _G),
    "nebel": (0.15, _G, 0.50, 0.60, _G),
    "gewitter": (0.30, _G, 0.20, 0.20, 0.20),
    "schlachtfeld": (0.15, 0.30, 0.20, 0.20, 0.80),
    "beichte": (0.20, 0.30, 0.95, 0.90, _G),
    "wartezimmer": (0.30, 0.50, 0.20, 0.50, 0.20),
    "paradox": (0.20, _G, 0.30, 0.50, _G),
}
"""Base value per cluster and magnitude; `None` = a limit cell with base 0."""

CONTRIBUTION: Final[Mapping[str, tuple[float, ...]]] = {
    "treue": (0.0, 0.0, 0.2, 0.1, -0.3),
    "dienst": (0.2, 0.0, 0.0, 0.0, 0.3),
    "pflicht": (0.2, -0.2, 0.0, 0.0, 0.1),
    "aufmerksamkeit": (0.0, 0.2, 0.2, 0.0, 0.0),
    "wissbegier": (0.0, 0.4, 0.0, 0.0, 0.2),
    "wohlwollen": (0.0, 0.0, 0.1, 0.4, 0.0),
    "selbstbezogen": (0.1, -0.2, -0.3, 0.0, 0.3),
    "gleichgueltig": (-0.3, -0.2, -0.2, -0.4, 0.0),
    "widerspenstig": (0.0, 0.0, 0.0, -0.3, 0.3),
    "distanz": (-0.3, 0.0, -0.5, -0.2, 0.0),
    "langeweile": (-0.4, -0.3, 0.0, -0.2, -0.2),
    "misstrauen": (0.0, 0.1, -0.2, -0.4, 0.0),
}
"""What a spoke at 1.0 adds to each magnitude (U/F/N/W/D)."""

SPAN: Final[Mapping[str, tuple[float, float]]] = {
    "umfang": (-1.0, 0.5),
    "fragen": (-0.9, 0.7),
    "naehe": (-1.2, 0.5),
    "waerme": (-1.5, 0.5),
    "draengen": (-0.5, 1.2),
}
"""(N, P) per magnitude: the wheel sum is divided by P when positive, by |N| when negative."""

WITHDRAWAL_SPOKES: Final = (
    "distanz",
    "gleichgueltig",
    "langeweile",
    "misstrauen",
    "selbstbezogen",
    "widerspenstig",
)
"""The only spokes that can override (alphabetical: the scan order of ties)."""

OVERRIDE_FROM: Final = 0.9
"""A withdrawal spoke rated above this overrides."""


@dataclass(frozen=True, slots=True)
class MagnitudeResult:
    """One magnitude: base, normalised wheel modification n, result and how it came about."""

    grundwert: float
    modifikation: float
    ergebnis: float
    art: str
    ausloeser: str | None
    ausserhalb: bool

    def as_dict(self) -> dict[str, object]:
        return {
            "grundwert": self.grundwert,
            "modifikation": self.modifikation,
            "ergebnis": self.ergebnis,
            "art": self.art,
            "ausloeser": self.ausloeser,
            "ausserhalb": self.ausserhalb,
        }


class StanceError(ValueError):
    """The stance cannot be computed (unknown cluster or spoke, unreadable expression)."""


def _expression(spoke: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise StanceError(f"spoke {spoke!r}: expression {value!r} is not a number")
    number = float(value)
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise StanceError(f"spoke {spoke!r}: expression {number} is outside [0, 1]")
    return number


def read_wheel(wheel: Mapping[str, object] | None) -> dict[str, float]:
    """The wheel as spoke → expression; no wheel → every spoke 0 (neutral).

    A missing spoke counts 0; an unknown spoke or an unreadable expression raises."""
    values = dict.fromkeys(CONTRIBUTION, 0.0)
    for spoke, value in (wheel or {}).items():
        if spoke not in CONTRIBUTION:
            raise StanceError(f"unknown spoke {spoke!r}")
        values[spoke] = _expression(spoke, value)
    return values


def _override(wheel: Mapping[str, float], index: int) -> tuple[float, str] | None:
    best: tuple[float, str] | None = None
    for spoke in WITHDRAWAL_SPOKES:
        x = wheel[spoke]
        contrib = CONTRIBUTION[spoke][index]
        if x <= OVERRIDE_FROM or contrib == 0.0:
            continue
        row_max = max(abs(c) for c in CONTRIBUTION[spoke])
        pull = ((x - OVERRIDE_FROM) / (1.0 - OVERRIDE_FROM)) ** 2 * contrib / row_max
        if best is None or abs(pull) > abs(best[0]):
            best = (pull, spoke)
    return best


def magnitude(cluster: str, name: str, wheel: Mapping[str, float]) -> MagnitudeResult:
    """One magnitude of a cluster under a (read) wheel."""
    index = MAGNITUDES.index(name)
    cell = BASE[cluster][index]
    limit = cell is None
    base = 0.0 if cell is None else cell
    total = sum(CONTRIBUTION[spoke][index] * wheel[spoke] for spoke in CONTRIBUTION)
    negative_span, positive_span = SPAN[name]
    if total > 0:
        n = total / positive_span
    elif total < 0:
        n = total / abs(negative_span)
    else:
        n = 0.0
    if limit:
        value = base * (1 + n)
        art = LIMIT
    else:
        value = base + n * (1 - base) if n > 0 else base + n * base
        art = TENDENCY
    trigger = None
    override = _override(wheel, index)
    if override is not None:
        pull, trigger = override
        value = value + pull * (1 - value) if pull > 0 else value + pull * value
        art = OVERRIDE
    value = round(value, 4)
    return MagnitudeResult(
        grundwert=base,
        modifikation=round(n, 4),
        ergebnis=value,
        art=art,
        ausloeser=trigger,
        ausserhalb=not 0.0 <= value <= 1.0,
    )


def stance(cluster: str, wheel: Mapping[str, object] | None) -> dict[str, MagnitudeResult]:
    """All five magnitudes, in U/F/N/W/D order. Raises StanceError when not computable."""
    if cluster not in BASE:
        raise StanceError(f"unknown cluster {cluster!r}")
    read = read_wheel(wheel)
    return {name: magnitude(cluster, name, read) for name in MAGNITUDES}
