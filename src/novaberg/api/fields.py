"""Field types for request bodies and parameters: what PostgreSQL can store, so bad
input is a 422 naming the field instead of a database error (a 500) after the fact."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, BeforeValidator, Field, StringConstraints

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
    """The year as written (before any shift to UTC), so the schema's pattern says it."""
    if not EARLIEST.year <= value.year < LATEST.year:
        raise ValueError(f"must lie between {EARLIEST.year} and {LATEST.year - 1}")
    return value


DATE_TIME_START = re.compile(r"^(19|20|21)\d\d-\d\d-\d\dT")
"""A date-time is text starting with its date; a number would be read as epoch seconds."""


def _date_time_text(value: Any) -> Any:
    if not isinstance(value, str) or not DATE_TIME_START.match(value):
        raise ValueError("must be an ISO 8601 date-time with an offset, years 1900-2199")
    return value


def _trimmed(value: str) -> str:
    return value.strip()


NoNul = AfterValidator(_no_nul)

NOT_BLANK = r"^[^\x00]*[^\s\x00][^\x00]*$"
"""Some character that is not whitespace, none that is NUL (which PostgreSQL cannot store)."""
NO_NUL = r"^[^\x00]*$"


def _line(max_length: int) -> Any:
    """Required text: limits checked as sent (so the schema states them), then trimmed."""
    return Annotated[
        str,
        StringConstraints(min_length=1, max_length=max_length, pattern=NOT_BLANK),
        NoNul,
        AfterValidator(_trimmed),
    ]


Name = _line(200)
Title = _line(255)
Theme = _line(100)
Instruction = _line(500)
"""A rule's text (directive or identity): trimmed, never blank."""
MemoryText = _line(2_000)
"""A memory as the person corrected it: trimmed, never blank."""
FolderPath = _line(4_096)
"""A folder's path as the person wrote it (PATH_MAX): trimmed, never blank."""

NoteText = Annotated[str, StringConstraints(max_length=20_000, pattern=NO_NUL), NoNul]
Details = Annotated[str, StringConstraints(max_length=2_000, pattern=NO_NUL), NoNul]
Context = Annotated[str, StringConstraints(max_length=500, pattern=NO_NUL), NoNul]

EventTime = Annotated[
    AwareDatetime,
    BeforeValidator(_date_time_text),
    AfterValidator(_plausible_date),
    Field(json_schema_extra={"pattern": DATE_TIME_START.pattern}),
]
"""ISO 8601 text with an offset, years 1900-2199 (no epoch numbers)."""
