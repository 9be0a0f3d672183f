"""The objection verdict (Einwandsurteil): the composer's head block, read before any
sentence of the answer is written (docs/behaviour/nodes.md#objection-verdict).

The composer writes five head lines, a line `---`, then the content::

    EINWAND: ja|nein
    GEPRUEFT: <one sentence: what was checked against what>
    BEWERTUNG: trifft_zu|trifft_nicht_zu|abweichend
    STAERKE: 0–1
    QUELLE: fakt|haltung|beides
    ---
    <third-person content>

`parse_composer_output` splits the two. An unreadable head block gives a verdict with
`delivered=False` and the reason in `failure` — that means "no readable verdict", never
"no objection" — while the prose is kept. Pure: no I/O, no state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

SEPARATOR: Final = "---"

ASSESSMENT_HOLDS: Final = "trifft_zu"
ASSESSMENT_FAILS: Final = "trifft_nicht_zu"
ASSESSMENT_DEVIATES: Final = "abweichend"
ASSESSMENTS: Final = (ASSESSMENT_HOLDS, ASSESSMENT_FAILS, ASSESSMENT_DEVIATES)
SOURCES: Final = ("fakt", "haltung", "beides")

FAILURE_EMPTY: Final = "leer"
FAILURE_CALL: Final = "aufruf_gescheitert"
FAILURE_NO_SEPARATOR: Final = "ohne_trenner"
FAILURE_MISSING_FIELD: Final = "feld_fehlt"
FAILURE_BAD_VALUE: Final = "wert_ungueltig"
FAILURE_REASONS: Final = (
    FAILURE_EMPTY,
    FAILURE_CALL,
    FAILURE_NO_SEPARATOR,
    FAILURE_MISSING_FIELD,
    FAILURE_BAD_VALUE,
)
"""Every value `ausfall` can take (AUSFALLGRUENDE)."""

HEAD_FIELDS: Final = ("EINWAND", "GEPRUEFT", "BEWERTUNG", "STAERKE", "QUELLE")
_HEAD_LINE = re.compile(
    r"^\s*\**\s*(EINWAND|GEPRUEFT|GEPRÜFT|BEWERTUNG|STAERKE|STÄRKE|QUELLE)\s*\**\s*:"
    r"\s*\**\s*(.*?)\s*\**\s*$",
    re.IGNORECASE,
)
_CANON = {"GEPRÜFT": "GEPRUEFT", "STÄRKE": "STAERKE"}


@dataclass(frozen=True, slots=True)
class ObjectionVerdict:
    """The verdict on the utterance's claim or premise (wire `einwandsurteil`).

    `delivered`: a readable head block was given (wire `geliefert`). `objection`: the
    utterance carries a claim, premise or objection that needed judging (`einwand`).
    `assessment` (`bewertung`): whether it holds (`trifft_zu`), does not
    (`trifft_nicht_zu`), or names a value that deviates from the known one (`abweichend`:
    that value may be quoted, never used as a premise). `strength` (`staerke`) is the
    composer's confidence, `source` (`quelle`) what it rests on, `checked` (`geprueft`)
    what was checked against what; `failure`/`failure_field` (`ausfall`/`ausfall_feld`)
    why the head block was unreadable."""

    delivered: bool
    objection: bool = False
    checked: str = ""
    assessment: str = ""
    strength: float | None = None
    source: str = ""
    failure: str | None = None
    failure_field: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The verdict with its wire names (state channel, pipeline_log, prompts' readers)."""
        return {
            "geliefert": self.delivered,
            "einwand": self.objection,
            "geprueft": self.checked,
            "bewertung": self.assessment,
            "staerke": self.strength,
            "quelle": self.source,
            "ausfall": self.failure,
            "ausfall_feld": self.failure_field,
        }

    @property
    def contests(self) -> bool:
        """True when the answer must not build on the utterance's premise."""
        return (
            self.delivered
            and self.objection
            and self.assessment in (ASSESSMENT_FAILS, ASSESSMENT_DEVIATES)
        )


def failed(reason: str, field: str | None = None) -> ObjectionVerdict:
    """A verdict that could not be read, with its reason (one of FAILURE_REASONS)."""
    if reason not in FAILURE_REASONS:
        raise ValueError(f"unknown objection failure {reason!r}")
    return ObjectionVerdict(delivered=False, failure=reason, failure_field=field)


def _head_values(lines: list[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    for line in lines:
        match = _HEAD_LINE.match(line)
        if match:
            key = match.group(1).upper()
            values.setdefault(_CANON.get(key, key), match.group(2))
    return values


def _strength(raw: str) -> float | None:
    try:
        value = float(raw.replace(",", ".").strip())
    except ValueError:
        return None
    return value if 0.0 <= value <= 1.0 else None


def read_head(lines: list[str]) -> ObjectionVerdict:
    """The verdict from the head lines (before the separator)."""
    values = _head_values(lines)
    for name in HEAD_FIELDS:
        if not values.get(name, "").strip():
            return failed(FAILURE_MISSING_FIELD, name)
    objection = values["EINWAND"].strip().lower()
    assessment = values["BEWERTUNG"].strip().lower()
    source = values["QUELLE"].strip().lower()
    strength = _strength(values["STAERKE"])
    if objection not in ("ja", "nein"):
        return failed(FAILURE_BAD_VALUE, "EINWAND")
    if assessment not in ASSESSMENTS:
        return failed(FAILURE_BAD_VALUE, "BEWERTUNG")
    if strength is None:
        return failed(FAILURE_BAD_VALUE, "STAERKE")
    if source not in SOURCES:
        return failed(FAILURE_BAD_VALUE, "QUELLE")
    return ObjectionVerdict(
        delivered=True,
        objection=objection == "ja",
        checked=values["GEPRUEFT"].strip(),
        assessment=assessment,
        strength=strength,
        source=source,
    )


def parse_composer_output(text: str) -> tuple[str, ObjectionVerdict]:
    """(content, verdict) from the composer's raw output.

    Without a separator line the verdict fails (`ohne_trenner`) and the content is the
    text without any head-looking lines; empty output fails as `leer` with content ""."""
    if not text.strip():
        return "", failed(FAILURE_EMPTY)
    lines = text.strip().splitlines()
    cut = next((i for i, line in enumerate(lines) if line.strip() == SEPARATOR), None)
    if cut is None:
        prose = "\n".join(line for line in lines if not _HEAD_LINE.match(line)).strip()
        return prose, failed(FAILURE_NO_SEPARATOR)
    prose = "\n".join(lines[cut + 1 :]).strip()
    return prose, read_head(lines[:cut])
