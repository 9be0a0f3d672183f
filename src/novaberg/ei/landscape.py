"""The conversation landscape: six yes/no axes → one of 64 sectors → one of 14 clusters,
plus whether Nova should lead (docs/behaviour/emotion.md#landscape).

The axes are read from values the run already has before any model call of the
CharacterGraph (the counterpart's perception and Nova's register space), so the landscape
never waits for a model round:

- **E** energy: the counterpart's arousal ≥ 0.5;
- **R** friction: relationship dynamic `angriff` or `distanz`, or Nova and the counterpart
  in emotional conflict (`nova_emotion_konflikt`);
- **N** closeness: Nova's register closeness ≥ 0.5;
- **V** valence, binary: sectors 1, 2, 8 and the sectorless names (neutral) count as 1,
  every other sector as 0;
- **T** depth: Nova's register depth ≥ 0.5;
- **I** the counterpart drives: a task or knowledge intent, or an utterance intention that
  asks for something (information_erfragen, anweisung, hilferuf, recherche_vertiefen,
  planung).

The sector is the bit pattern E R N V T I read as a number (E is the 32s bit). The cluster
of every sector is fixed in `SECTOR_CLUSTERS`, derived once from `_cluster_rule` (the
rule reads like the table in the behaviour doc). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from novaberg.ei.canon import POSITIVE_SECTORS, sector_of

CLUSTERS: Final = (
    "feuerwerk",
    "kissenschlacht",
    "werkstatt",
    "glut",
    "bier",
    "foyer",
    "regen",
    "schmollen",
    "nebel",
    "gewitter",
    "schlachtfeld",
    "beichte",
    "wartezimmer",
    "paradox",
)
"""The 14 clusters (wire values)."""

DEFAULT_CLUSTER: Final = "paradox"
"""The cluster a reader assumes when no landscape was stored yet."""

AXES: Final = ("E", "R", "N", "V", "T", "I")
"""Bit order of the sector number, most significant first."""

ENERGY_THRESHOLD: Final = 0.5
CLOSENESS_THRESHOLD: Final = 0.5
DEPTH_THRESHOLD: Final = 0.5

FRICTION_DYNAMICS: Final = frozenset({"angriff", "distanz"})
DRIVING_INTENTS: Final = frozenset({"task", "knowledge"})
DRIVING_INTENTIONS: Final = frozenset(
    {"information_erfragen", "anweisung", "hilferuf", "recherche_vertiefen", "planung"}
)

INITIATIVE_LEAN: Final[Mapping[str, float]] = {
    "feuerwerk": 0.2,
    "kissenschlacht": 0.2,
    "werkstatt": -0.1,
    "glut": 0.1,
    "bier": 0.3,
    "foyer": 0.2,
    "regen": -0.3,
    "schmollen": -0.2,
    "nebel": 0.0,
    "gewitter": -0.4,
    "schlachtfeld": -0.5,
    "beichte": -0.5,
    "wartezimmer": -0.1,
    "paradox": -0.1,
}
"""How much a cluster invites Nova to take the lead (designed values: lulls and easy
company invite her, storms and confessions ask her to follow)."""

DRIVING_PENALTY: Final = 0.3
"""Subtracted when the counterpart drives (axis I): then the counterpart leads."""

INITIATIVE_THRESHOLD: Final = -0.05
"""Nova leads when lean − driving + offset ≥ this."""


def _cluster_rule(e: int, r: int, n: int, v: int, t: int, i: int) -> str:
    """The cluster of one bit pattern (see docs/behaviour/emotion.md#landscape)."""
    if r:
        if e and not v:
            return "gewitter" if n else "schlachtfeld"
        if e and v:
            return "kissenschlacht" if n and not t else "paradox"
        if not v:
            return "schmollen"
        return "paradox"
    if e and v:
        if n:
            return "feuerwerk" if t else "kissenschlacht"
        if t:
            return "werkstatt"
        return "werkstatt" if i else "foyer"
    if not e and v:
        if n:
            return "glut" if t else "bier"
        return "werkstatt" if t else "foyer"
    if e and not v:
        if n:
            return "beichte" if t else "gewitter"
        return "werkstatt" if t and i else "wartezimmer"
    # calm and negative
    if n:
        return "beichte" if t else "regen"
    if t:
        return "nebel"
    return "wartezimmer" if i else "schmollen"


def sector_bits(sector: int) -> tuple[int, int, int, int, int, int]:
    """The six axis bits (E, R, N, V, T, I) of a sector number 0..63."""
    if not 0 <= sector < 64:
        raise ValueError(f"sector must be 0..63, not {sector}")
    e, r, n, v, t, i = ((sector >> shift) & 1 for shift in range(5, -1, -1))
    return e, r, n, v, t, i


SECTOR_CLUSTERS: Final[tuple[str, ...]] = tuple(
    _cluster_rule(*sector_bits(sector)) for sector in range(64)
)
"""Cluster of each of the 64 sectors (index = sector number)."""


@dataclass(frozen=True, slots=True)
class LandscapeInput:
    """What the landscape reads (plain values, so this module stays a pure leaf)."""

    arousal: float
    emotion: str
    relationship_dynamic: str
    intent: str
    closeness: float
    depth: float
    conflict: bool = False
    intentions: tuple[str, ...] = ()


def valence_bit(emotion: str) -> int:
    """Binary valence: sectors 1, 2, 8 and sectorless names → 1, the others → 0."""
    sector = sector_of(emotion)
    return 1 if sector is None or sector in POSITIVE_SECTORS else 0


def axes_of(values: LandscapeInput) -> dict[str, int]:
    """The six axis bits by name."""
    driving = values.intent in DRIVING_INTENTS or bool(
        DRIVING_INTENTIONS.intersection(values.intentions)
    )
    return {
        "E": int(values.arousal >= ENERGY_THRESHOLD),
        "R": int(values.relationship_dynamic in FRICTION_DYNAMICS or values.conflict),
        "N": int(values.closeness >= CLOSENESS_THRESHOLD),
        "V": valence_bit(values.emotion),
        "T": int(values.depth >= DEPTH_THRESHOLD),
        "I": int(driving),
    }


def sector_of_axes(axes: Mapping[str, int]) -> int:
    """The sector number 0..63 of named bits."""
    number = 0
    for name in AXES:
        number = (number << 1) | (1 if axes[name] else 0)
    return number


def initiative_score(cluster: str, counterpart_drives: bool, offset: float = 0.0) -> float:
    """lean(cluster) − 0.3 if the counterpart drives + the character's offset."""
    lean = INITIATIVE_LEAN[cluster]
    return round(lean - (DRIVING_PENALTY if counterpart_drives else 0.0) + offset, 4)


def nova_leads(score: float) -> bool:
    """The initiative bit: Nova leads at a score ≥ −0.05."""
    return score >= INITIATIVE_THRESHOLD


@dataclass(frozen=True, slots=True)
class Landscape:
    """One turn's landscape (stored in gv_detail via `as_detail()`)."""

    axes: dict[str, int]
    sector: int
    cluster: str
    initiative_score: float
    initiative: bool

    def as_detail(self) -> dict[str, object]:
        return {
            "achsen": dict(self.axes),
            "sektor": self.sector,
            "cluster": self.cluster,
            "initiative_wert": self.initiative_score,
            "initiative": self.initiative,
        }


def landscape(values: LandscapeInput) -> Landscape:
    """The landscape of a turn (no character offset: the stance node adds it)."""
    axes = axes_of(values)
    sector = sector_of_axes(axes)
    cluster = SECTOR_CLUSTERS[sector]
    score = initiative_score(cluster, bool(axes["I"]))
    return Landscape(axes, sector, cluster, score, nova_leads(score))


def known_cluster(value: object) -> str | None:
    """`value` if it is one of the 14 clusters, else None."""
    return value if isinstance(value, str) and value in CLUSTERS else None


def intentions_tuple(values: Iterable[object] | None) -> tuple[str, ...]:
    return tuple(str(v) for v in values or ())
