"""`ContextEntry`: one remembered item offered to the reducer (docs/behaviour/nodes.md#reducer).

The enricher collects entries from every memory source into `memory_entries_raw`; the
reducer deduplicates them (exact text, then substrings; the highest weight wins) and
builds `memory_context`. Keep it flat: a source name, a subtype, the text, one weight in
[0, 1] and free metadata for logs and panels. In the graph state an entry is the dict of
`as_dict` (German keys: the state is logged to the pipeline log as it is).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Final

SOURCE_SHORT_TERM: Final = "kzg"
SOURCE_LONG_TERM: Final = "lzg"
SOURCE_SUMMARY: Final = "session_summary"
"""`source` values (stored and logged data)."""


@dataclass(slots=True)
class ContextEntry:
    """One memory the character may draw on this turn.

    source: where it came from ("kzg", "lzg", "session_summary", a plugin name);
    subtype: the entry's dimension or kind (kognition, emotion, kontext, ...);
    text: the text itself (never empty);
    weight: how strongly it should count, in [0, 1] (KZG: curved salience; LZG: the
      spreading sort weight divided by the long-term cap 10);
    meta: source-specific details (themen, beobachter, similarity, knoten_id, pfad, ...),
      logged as they are.
    """

    source: str
    subtype: str
    text: str
    weight: float
    meta: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The entry in `memory_entries_raw` (`meta` copied deeply), built by hand: a turn
        converts dozens of entries and `asdict` walks every value through a generic path."""
        return {
            "quelle": self.source,
            "subtyp": self.subtype,
            "inhalt": self.text,
            "gewicht": self.weight,
            "meta": _deep_copy(self.meta),
        }


_ATOMIC: Final = (str, int, float, bool, type(None))


@dataclass(slots=True)
class _Box:
    """Carries a value through `asdict`, for the values `_deep_copy` leaves to it."""

    value: Any


def _deep_copy(value: Any) -> Any:
    """`value` copied as `dataclasses.asdict` copies a field: plain dicts, lists and tuples
    rebuilt and atomic values shared here, anything else (a nested dataclass, a named
    tuple, a subclass) by `asdict` itself."""
    kind = type(value)
    if kind in _ATOMIC:
        return value
    if kind is dict:
        return {_deep_copy(key): _deep_copy(item) for key, item in value.items()}
    if kind is list:
        return [_deep_copy(item) for item in value]
    if kind is tuple:
        return tuple(_deep_copy(item) for item in value)
    return asdict(_Box(value))["value"]
