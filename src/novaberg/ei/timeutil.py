"""Time values passed into the EI functions: the EI never reads a clock, so every function
is repeatable and testable with any time (docs/engineering.md#layout-and-layers)."""

from __future__ import annotations

from datetime import UTC, datetime

from novaberg.ei.canon import parse_number

SECONDS_PER_DAY = 86400.0
"""Seconds in a day, for ages in days."""


def to_epoch(value: object) -> float | None:
    """Epoch seconds from a number, numeric/ISO string or datetime (naive = UTC); else None."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.timestamp()
    number = parse_number(value)
    if number is not None:
        return number
    if isinstance(value, str) and value.strip():
        try:
            return to_epoch(datetime.fromisoformat(value.strip()))
        except ValueError:
            return None
    return None


def require_epoch(value: float | datetime) -> float:
    """Epoch seconds of a caller-supplied `now`; a wrong type is a programming error."""
    epoch = to_epoch(value)
    if epoch is None:
        raise ValueError(f"not a time: {value!r}")
    return epoch
