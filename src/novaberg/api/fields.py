"""Field types for request bodies and parameters: what PostgreSQL can store, so bad
input is a 422 naming the field instead of a database error (a 500) after the fact."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated

from pydantic import AfterValidator, AwareDatetime, StringConstraints

EARLIEST = datetime(1900, 1, 1, tzinfo=UTC)
LATEST = datetime(2200, 1, 1, tzinfo=UTC)
"""The dates an appointment may have: wide for any diary, narrow enough that every
shift to UTC or the display zone (and the 7-day resubmission) stays in range."""

MAX_OFFSET = 1_000_000
"""Largest paging offset: more than any pair's memory holds, far below PostgreSQL's bigint."""


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain NUL (U+0000), which PostgreSQL cannot store")
    return value


def _plausible_date(value: datetime) -> datetime:
    if not EARLIEST <= value < LATEST:
        raise ValueError(f"must lie between {EARLIEST.year} and {LATEST.year - 1}")
    return value


NoNul = AfterValidator(_no_nul)

Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), NoNul]
Title = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=255), NoNul
]
Theme = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=100), NoNul
]
Instruction = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500), NoNul
]
"""A rule's text (directive or identity): trimmed, never blank."""

NoteText = Annotated[str, StringConstraints(max_length=20_000), NoNul]
Details = Annotated[str, StringConstraints(max_length=2_000), NoNul]
Context = Annotated[str, StringConstraints(max_length=500), NoNul]

EventTime = Annotated[AwareDatetime, AfterValidator(_plausible_date)]
"""ISO 8601 with an offset, between 1900 and 2199."""
