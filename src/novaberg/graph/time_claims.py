"""Dates and clock times an answer states, and whether something backs them.

In a turn where task agents acted, dates and times nobody backs raise an ok verdict to
warnung with a correction order (docs/behaviour/nodes.md#time-claims). A time
counts as backed when the person said it, a task agent that completed this turn reported
it, or the memory the answer was written from contains it; anything else is a date the
model made up (the classic: "I've put it in for Thursday at 3" when no agent ran).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from novaberg.agents.base import AgentResult

_MONTHS = (
    "januar|februar|märz|maerz|april|mai|juni|juli|august|september|oktober|november|"
    "dezember|january|february|march|may|june|july|october|december"
)
_WEEKDAYS = (
    "montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag|"
    "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
)

_PATTERNS = (
    re.compile(r"\b\d{1,2}\.\s?\d{1,2}\.(?:\s?\d{2,4})?"),  # 6.8. / 06.08.2026
    re.compile(rf"\b\d{{1,2}}\.\s?(?:{_MONTHS})\b", re.IGNORECASE),  # 6. August
    re.compile(r"\b\d{1,2}(?::\d{2})?\s?uhr\b", re.IGNORECASE),  # 14 Uhr / 14:30 Uhr
    re.compile(r"\b\d{1,2}:\d{2}\b"),  # 14:30
    re.compile(r"\b\d{1,2}\s?(?:am|pm)\b", re.IGNORECASE),  # 3 pm
    re.compile(rf"\b(?:{_WEEKDAYS})\b", re.IGNORECASE),  # Donnerstag
)


_MONTH_NUMBER = {
    name: number
    for number, names in enumerate(
        (
            ("januar", "january"),
            ("februar", "february"),
            ("märz", "maerz", "march"),
            ("april",),
            ("mai", "may"),
            ("juni", "june"),
            ("juli", "july"),
            ("august",),
            ("september",),
            ("oktober", "october"),
            ("november",),
            ("dezember", "december"),
        ),
        start=1,
    )
    for name in names
}


def _canonical(claim: str) -> str:
    """One spelling per time: '14:00 Uhr', '14 Uhr' and '14:00' → '14'; '06.08.2026',
    '6.8.' and '6. August' → '6.8.' (the year is left out: it is rarely what is wrong)."""
    text = re.sub(r"\s+", "", claim.lower())
    for name, number in _MONTH_NUMBER.items():
        text = re.sub(rf"(\d)\.{name}$", rf"\1.{number}.", text)
    text = re.sub(r":00$", "", text.removesuffix("uhr"))
    text = re.sub(r"(?<![\d:])0(\d)", r"\1", text)  # leading zeros, not minutes
    return re.sub(r"^(\d{1,2}\.\d{1,2}\.)\d{2,4}$", r"\1", text)


def stated_times(text: str) -> list[str]:
    """The date and clock-time expressions in `text`, in order, each once."""
    found: list[tuple[int, str]] = []
    for pattern in _PATTERNS:
        found.extend((match.start(), match.group(0).strip()) for match in pattern.finditer(text))
    seen: set[str] = set()
    claims = []
    for _, claim in sorted(found):
        key = _canonical(claim)
        if key not in seen:
            seen.add(key)
            claims.append(claim)
    return claims


def unbacked_times(answer: str, sources: Iterable[str]) -> list[str]:
    """The times `answer` states that none of `sources` contains (compared canonically:
    '14:00 Uhr' is backed by '14 Uhr', '06.08.' by '6.8.')."""
    backing = {_canonical(claim) for source in sources for claim in stated_times(source)}
    return [claim for claim in stated_times(answer) if _canonical(claim) not in backing]


def completed_agent_texts(agent_results: Iterable[Any] | None) -> list[str]:
    """What the task agents that completed this turn reported."""
    results = (AgentResult.coerce(r) for r in agent_results or [])
    return [str(r.result) for r in results if r.status == "abgeschlossen" and r.result]
